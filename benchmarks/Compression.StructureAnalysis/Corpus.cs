using System.Text;
using MongoDB.Bson;

namespace Compression.StructureAnalysis;

/// <summary>Reading a JSON Lines corpus, and the BSON the MongoDB serializer would compress, for the commands of this tool.</summary>
internal static class Corpus
{
    /// <summary>Every non-blank line's bytes (a trailing CR dropped).</summary>
    public static List<byte[]> ReadLines(string path)
    {
        var documents = new List<byte[]>();
        ReadOnlySpan<byte> all = File.ReadAllBytes(path);
        while (!all.IsEmpty)
        {
            int end = all.IndexOf((byte)'\n');
            ReadOnlySpan<byte> line = end < 0 ? all : all[..end];
            all = end < 0 ? [] : all[(end + 1)..];
            if (!line.IsEmpty && line[^1] == (byte)'\r') line = line[..^1];
            if (line.IndexOfAnyExcept(" \t\r"u8) >= 0) documents.Add(line.ToArray());
        }
        return documents;
    }

    /// <summary>What Compression.MongoDB's serializer compresses: the document's elements but _id (and configured clear fields), as a BSON document.</summary>
    public static byte[] ToBson(byte[] json)
    {
        BsonDocument document = BsonDocument.Parse(Encoding.UTF8.GetString(json));
        document.Remove("_id");
        return document.ToBson();
    }
}
