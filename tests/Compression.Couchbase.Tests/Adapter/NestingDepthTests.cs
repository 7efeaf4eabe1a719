using System.Text;
using Compression.Structure;
using Couchbase.Core.IO.Transcoders;
using Couchbase.KeyValue;
using Newtonsoft.Json;
using Newtonsoft.Json.Linq;
using Xunit;
using Xunit.Abstractions;

namespace Compression.Couchbase.Tests.Adapter;

/// <summary>
/// A compressed body is opaque to the server, so nothing but the reader stops JSON nested 20,000 levels deep from
/// overflowing a recursive deserializer's stack (Newtonsoft with <c>MaxDepth</c> turned off; the SDK's default of 64 makes
/// it a <c>JsonReaderException</c> without the key). The compressed collection refuses a body deeper than 128 levels
/// naming the key, and refuses to write one, so nothing it writes is refused on reading.
/// </summary>
public sealed class NestingDepthTests(ITestOutputHelper output) : IAsyncLifetime
{
    private CouchbaseTarget _target = null!;

    public async Task InitializeAsync() => _target = await CouchbaseTarget.StartAsync(output);

    public async Task DisposeAsync() => await _target.DisposeAsync();

    private static string Nested(int levels) => string.Concat(Enumerable.Repeat("{\"a\":", levels - 1)) + "{}" + new string('}', levels - 1);

    [Theory]
    [InlineData(129)]
    [InlineData(20_000)]
    public async Task Get_BodyNestedDeeperThanTheLimit_IsRefusedNamingTheKey_WhateverTheSerializersMaxDepth(int levels)
    {
        Client client = await _target.ConnectAsync();
        string key = _target.Key($"deep-{levels}");
        // A peer's body: an envelope of the JSON (zstd, no dictionary: every client can decompress it).
        byte[] envelope = client.Namespace.Compress(Encoding.UTF8.GetBytes(Nested(levels)));
        await client.Plain.UpsertAsync(key, envelope, new UpsertOptions().Transcoder(new RawBinaryTranscoder()));

        using IGetResult read = await client.Compressed.GetAsync(key);
        var error = Assert.Throws<InvalidDataException>(() => read.ContentAs<JObject>());
        Assert.Contains($"'{key}'", error.Message, StringComparison.Ordinal);
        Assert.Contains("nests deeper than 128 levels", error.Message, StringComparison.Ordinal);

        // The same with a deserializer that has no depth limit at all (what could overflow the stack before).
        var unlimited = new JsonSerializerSettings { MaxDepth = null };
        var transcoder = new global::Compression.Couchbase.CompressingTranscoder(client.Namespace,
            new JsonTranscoder(new global::Couchbase.Core.IO.Serializers.DefaultSerializer(unlimited, unlimited)));
        Assert.Throws<InvalidDataException>(() => transcoder.Decode<JObject>(envelope, new() { DataFormat = global::Couchbase.Core.IO.Operations.DataFormat.Binary }, default));
    }

    [Fact]
    public async Task AtTheLimit_RoundTrips_AndOnePastIsRefusedOnWriting()
    {
        Client client = await _target.ConnectAsync();
        var unlimited = new JsonSerializerSettings { MaxDepth = null };
        var transcoder = new global::Compression.Couchbase.CompressingTranscoder(client.Namespace,
            new JsonTranscoder(new global::Couchbase.Core.IO.Serializers.DefaultSerializer(unlimited, unlimited)));
        var binary = new global::Couchbase.Core.IO.Operations.Flags { DataFormat = global::Couchbase.Core.IO.Operations.DataFormat.Binary };

        JObject deepest = JsonConvert.DeserializeObject<JObject>(Nested(JsonNesting.MaxDepth), unlimited)!;
        using var written = new MemoryStream();
        transcoder.Encode(written, deepest, transcoder.GetFormat(deepest), global::Couchbase.Core.IO.Operations.OpCode.Set);
        Assert.Equal(Nested(JsonNesting.MaxDepth), transcoder.Decode<JObject>(written.ToArray(), binary, default)!.ToString(Formatting.None));

        JObject tooDeep = JsonConvert.DeserializeObject<JObject>(Nested(JsonNesting.MaxDepth + 1), unlimited)!;
        using var refused = new MemoryStream();
        var error = Assert.Throws<ArgumentException>(() => transcoder.Encode(refused, tooDeep, transcoder.GetFormat(tooDeep), global::Couchbase.Core.IO.Operations.OpCode.Set));
        Assert.Contains("nests deeper than 128 levels", error.Message, StringComparison.Ordinal);
        Assert.Equal(0, refused.Length); // nothing written
    }
}
