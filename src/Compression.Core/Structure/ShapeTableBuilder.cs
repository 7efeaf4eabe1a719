using Compression.Internal;

namespace Compression.Structure;

/// <summary>
/// Learns a <see cref="ShapeTable"/> from sample documents (the samples a dictionary is trained from): every object's
/// key list is counted, and those seen at least <see cref="MinOccurrences"/> times become shapes, the most frequent
/// first (so they get the one-byte ids), ties broken by their bytes: the table depends on the samples, not their order.
/// </summary>
internal sealed class ShapeTableBuilder
{
    private readonly Dictionary<byte[], int> _counts = new(ByteArrayComparer.Instance);

    public ShapeTableBuilder(DocumentKind kind) => Kind = kind;

    public DocumentKind Kind { get; }

    /// <summary>A key list becomes a shape when seen this often.</summary>
    /// <value>2.</value>
    public int MinOccurrences { get; init; } = 2;

    /// <summary>The most shapes the table gets; never more than <see cref="ShapeTable.MaxShapes"/>, what a reader accepts.</summary>
    /// <value>4,096 (<see cref="ShapeTable.MaxShapes"/>).</value>
    public int MaxShapes { get; init; } = ShapeTable.MaxShapes;

    /// <summary>The most bytes the serialized table may take.</summary>
    /// <value>256 KiB.</value>
    public int MaxSerializedLength { get; init; } = MaxStoredLength;

    /// <summary>The largest table a dictionary record may carry (stores and the record validator refuse larger ones): 256 KiB.</summary>
    public const int MaxStoredLength = 256 * 1024;

    /// <summary>How many samples were added and could be parsed.</summary>
    public int Accepted { get; private set; }

    /// <summary>How many samples were added and could not be (not of the kind, or not packable exactly).</summary>
    public int Rejected { get; private set; }

    /// <summary>Counts the key lists of one sample; false when the sample is not a document the transform applies to.</summary>
    public bool Add(ReadOnlySpan<byte> sample)
    {
        if (Kind != DocumentKind.BsonElements) return AddDocument(sample);
        byte[] framed = new byte[sample.Length + ShapeTransform.FramingLength];
        ShapeTransform.Frame(sample, framed);
        return AddDocument(framed);
    }

    private bool AddDocument(ReadOnlySpan<byte> sample)
    {
        PackScratch scratch = PackScratch.Rent();
        try
        {
            bool parsed = Kind == DocumentKind.Json
                ? JsonText.TryParse(sample, scratch)
                : BsonShapeReader.TryParse(sample, scratch);
            if (!parsed)
            {
                Rejected++;
                return false;
            }
            Accepted++;
            for (int i = 0; i < scratch.NodeCount; i++)
            {
                PackedNode node = scratch.Nodes[i];
                if (node.Tag != PackedTag.Object) continue;
                byte[] keyList = Serialize(sample, scratch.Keys.AsSpan(node.Start, node.Length));
                _counts[keyList] = _counts.GetValueOrDefault(keyList) + 1;
            }
            return true;
        }
        finally
        {
            PackScratch.Return(scratch);
        }
    }

    /// <summary>The table: frequent key lists first, within <see cref="MaxShapes"/> and <see cref="MaxSerializedLength"/>.</summary>
    public ShapeTable Build()
    {
        var chosen = new List<IReadOnlyList<byte[]>>();
        long bytes = 16;
        foreach ((byte[] keyList, int count) in _counts
            .Where(pair => pair.Value >= MinOccurrences)
            .OrderByDescending(pair => pair.Value)
            .ThenBy(pair => pair.Key, ByteArrayComparer.Instance))
        {
            if (chosen.Count >= Math.Min(MaxShapes, ShapeTable.MaxShapes)) break;
            if (bytes + keyList.Length > MaxSerializedLength) continue;
            bytes += keyList.Length;
            chosen.Add(Deserialize(keyList));
        }
        return ShapeTable.Create(Kind, chosen);
    }

    /// <summary>
    /// The kind of most of <paramref name="samples"/>: BSON when a sample's first four bytes are its length and it parses
    /// as BSON, JSON when it parses as compact JSON, BSON elements when it parses as BSON once framed as a document;
    /// null when fewer than half are any one of them.
    /// </summary>
    public static DocumentKind? DetectKind(IReadOnlyCollection<byte[]> samples)
    {
        ArgumentNullException.ThrowIfNull(samples);
        int json = 0, bson = 0, elements = 0;
        PackScratch scratch = PackScratch.Rent();
        try
        {
            foreach (byte[] sample in samples)
            {
                scratch.NodeCount = scratch.KeyCount = scratch.PendingCount = 0;
                if (BsonShapeReader.TryParse(sample, scratch)) { bson++; continue; }
                scratch.NodeCount = scratch.KeyCount = scratch.PendingCount = 0;
                if (JsonText.TryParse(sample, scratch)) { json++; continue; }
                scratch.NodeCount = scratch.KeyCount = scratch.PendingCount = 0;
                byte[] framed = new byte[sample.Length + ShapeTransform.FramingLength];
                ShapeTransform.Frame(sample, framed);
                if (BsonShapeReader.TryParse(framed, scratch)) elements++;
            }
        }
        finally
        {
            PackScratch.Return(scratch);
        }
        int half = (samples.Count + 1) / 2;
        if (bson >= half && bson >= json && bson >= elements) return DocumentKind.Bson;
        if (json >= half && json >= elements) return DocumentKind.Json;
        if (elements >= half) return DocumentKind.BsonElements;
        return null;
    }

    /// <summary>A key list as the table stores it: varint key count, then each key as varint length and bytes.</summary>
    private static byte[] Serialize(ReadOnlySpan<byte> document, ReadOnlySpan<KeySpan> keys)
    {
        int length = Varint.GetLength((uint)keys.Length);
        foreach (KeySpan key in keys) length += Varint.GetLength((uint)key.Length) + key.Length;
        byte[] bytes = new byte[length];
        int at = Varint.Write(bytes, (uint)keys.Length);
        foreach (KeySpan key in keys)
        {
            at += Varint.Write(bytes.AsSpan(at), (uint)key.Length);
            document.Slice(key.Start, key.Length).CopyTo(bytes.AsSpan(at));
            at += key.Length;
        }
        return bytes;
    }

    private static byte[][] Deserialize(byte[] keyList)
    {
        Varint.TryRead(keyList, out uint count, out int at);
        var keys = new byte[count][];
        for (int i = 0; i < keys.Length; i++)
        {
            Varint.TryRead(keyList.AsSpan(at), out uint length, out int read);
            at += read;
            keys[i] = keyList.AsSpan(at, (int)length).ToArray();
            at += (int)length;
        }
        return keys;
    }

    internal sealed class ByteArrayComparer : IEqualityComparer<byte[]>, IComparer<byte[]>
    {
        public static readonly ByteArrayComparer Instance = new();

        public bool Equals(byte[]? x, byte[]? y) => x.AsSpan().SequenceEqual(y);

        public int GetHashCode(byte[] obj)
        {
            var hash = new HashCode();
            hash.AddBytes(obj);
            return hash.ToHashCode();
        }

        public int Compare(byte[]? x, byte[]? y) => x.AsSpan().SequenceCompareTo(y);
    }
}
