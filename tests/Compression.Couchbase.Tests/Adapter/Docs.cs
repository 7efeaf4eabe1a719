using System.Text;
using Compression.Core.Tests.Dictionaries;
using Couchbase.Core.IO.Serializers;
using Newtonsoft.Json;
using Newtonsoft.Json.Linq;

namespace Compression.Couchbase.Tests.Adapter;

/// <summary>Test documents as the SDK's default serializer sees them, and the bytes it writes for them.</summary>
internal static class Docs
{
    public static JObject Movie(Random random) => Parse(TestDocuments.Movie(random));

    public static JObject Sensor(Random random) => Parse(TestDocuments.Sensor(random));

    public static JObject Parse(ReadOnlySpan<byte> json)
    {
        using var reader = new JsonTextReader(new StringReader(Encoding.UTF8.GetString(json))) { DateParseHandling = DateParseHandling.None };
        return JObject.Load(reader);
    }

    /// <summary>The JSON the SDK's default transcoder writes for <paramref name="document"/>: what a compressed body must decompress to.</summary>
    public static byte[] Serialized(object document)
    {
        using var stream = new MemoryStream();
        new DefaultSerializer().Serialize(stream, document);
        return stream.ToArray();
    }

    public static void Equal(JObject expected, JObject? actual) =>
        Xunit.Assert.True(JToken.DeepEquals(expected, actual), $"expected {expected.ToString(Formatting.None)}, read {actual?.ToString(Formatting.None) ?? "null"}");
}
