using Compression.Couchbase.Tests.Loopback;
using Compression.Dictionaries;
using Compression.Testing.Couchbase;
using Couchbase.KeyValue;
using Newtonsoft.Json.Linq;
using Xunit;
using Xunit.Abstractions;

namespace Compression.Couchbase.Tests.Adapter;

/// <summary>
/// Sub-document calls that touch only extended attributes pass through the compressed collection (issue #39 item 3):
/// xattrs live beside the body, which stays compressed and readable; a call with any body path is refused with
/// <see cref="NotSupportedException"/> before anything is sent. The whole body (<c>GetFull</c>, <c>SetDoc</c>) is in
/// <see cref="WholeBodyTests"/>, <c>ReplaceBodyWithXattr</c> in <see cref="TransactionTests"/>.
/// </summary>
public sealed class XattrPassThroughTests(ITestOutputHelper output)
{
    private static readonly JObject Heat = JObject.Parse("""{"title":"Heat","plot":"A group of professional bank robbers start to feel the heat from police."}""");

    [Fact]
    public async Task Xattr_mutations_and_lookups_pass_through_and_leave_the_compressed_body_as_it_was()
    {
        await using LoopbackCluster data = await LoopbackCluster.StartAsync(output);
        await using var engine = Core.Tests.Dictionaries.TestEngine.Create(new InMemoryDictionaryStore());
        ICouchbaseCollection compressed = data.Collection.WithCompression(engine);
        await compressed.UpsertAsync("doc", Heat);
        Assert.True(data.Server.TryGetDocument("doc", out KvDocument? before));

        IMutateInResult mutated = await compressed.MutateInAsync("doc", specs => specs
            .Upsert("audit.editor", "Ada", createPath: true, isXattr: true)
            .Upsert("audit.at", 1700000000, createPath: true, isXattr: true));
        using ILookupInResult lookup = await compressed.LookupInAsync("doc", specs => specs
            .Get("audit", isXattr: true)
            .Get("$document", isXattr: true)
            .Exists("audit.missing", isXattr: true));

        Assert.Equal("Ada", lookup.ContentAs<JObject>(0)!["editor"]!.ToString());
        Assert.Equal($"0x{mutated.Cas:x16}", lookup.ContentAs<JObject>(1)!["CAS"]!.ToString());
        Assert.False(lookup.Exists(2));
        Assert.True(data.Server.TryGetDocument("doc", out KvDocument? after));
        Assert.Equal(before.Value.ToArray(), after.Value.ToArray()); // the envelope, untouched
        Assert.Equal(0x03000001u, after.Flags);
        Assert.Equal("""{"audit":{"editor":"Ada","at":1700000000}}""", after.Xattrs);
        using IGetResult read = await compressed.GetAsync("doc");
        Assert.Equal(Heat.ToString(), read.ContentAs<JObject>()!.ToString());
        Assert.Empty(data.Server.UnknownCommands);
    }

    [Fact]
    public async Task A_document_an_xattr_mutation_creates_has_a_plain_empty_body_readable_through_the_compressed_collection()
    {
        await using LoopbackCluster data = await LoopbackCluster.StartAsync(output);
        await using var engine = Core.Tests.Dictionaries.TestEngine.Create(new InMemoryDictionaryStore());
        ICouchbaseCollection compressed = data.Collection.WithCompression(engine);

        await compressed.MutateInAsync("new", specs => specs.Upsert("meta.owner", "Ada", createPath: true, isXattr: true),
            new MutateInOptions().StoreSemantics(StoreSemantics.Insert));

        using IGetResult read = await compressed.GetAsync("new");
        Assert.Empty(read.ContentAs<JObject>()!);
        Assert.True(data.Server.TryGetDocument("new", out KvDocument? stored) && stored.Xattrs == """{"meta":{"owner":"Ada"}}""");
    }

    [Fact]
    public async Task A_body_path_is_refused_before_anything_is_sent()
    {
        await using LoopbackCluster data = await LoopbackCluster.StartAsync(output);
        await using var engine = Core.Tests.Dictionaries.TestEngine.Create(new InMemoryDictionaryStore());
        ICouchbaseCollection compressed = data.Collection.WithCompression(engine);
        await compressed.UpsertAsync("doc", Heat);
        await engine.WhenIdleAsync();
        long before = data.Server.CommandCount(KvProtocol.Opcodes.SubdocMultiLookup) + data.Server.CommandCount(KvProtocol.Opcodes.SubdocMultiMutation);

        NotSupportedException[] refused =
        [
            await Assert.ThrowsAsync<NotSupportedException>(() => compressed.LookupInAsync("doc", specs => specs.Get("audit", isXattr: true).Get("title"))),
            await Assert.ThrowsAsync<NotSupportedException>(() => compressed.MutateInAsync("doc", specs => specs.Upsert("audit.x", 1, createPath: true, isXattr: true).Upsert("title", "Thief"))),
            await Assert.ThrowsAsync<NotSupportedException>(() => compressed.MutateInAsync("doc", specs => specs.Upsert("audit.x", 1, createPath: true, isXattr: true).Remove("plot"))),
            await Assert.ThrowsAsync<NotSupportedException>(() => compressed.LookupInAnyReplicaAsync("doc", specs => specs.Get("title"))),
        ];

        foreach (NotSupportedException error in refused) output.WriteLine(error.Message);
        Assert.StartsWith("LookupIn (sub-document) on the body path 'title'", refused[0].Message, StringComparison.Ordinal);
        Assert.StartsWith("MutateIn (sub-document) on the body path 'title'", refused[1].Message, StringComparison.Ordinal);
        Assert.StartsWith("MutateIn (sub-document) on the body path 'plot'", refused[2].Message, StringComparison.Ordinal);
        Assert.StartsWith("LookupInAnyReplica", refused[3].Message, StringComparison.Ordinal);
        Assert.Equal(before, data.Server.CommandCount(KvProtocol.Opcodes.SubdocMultiLookup) + data.Server.CommandCount(KvProtocol.Opcodes.SubdocMultiMutation));
        Assert.True(data.Server.TryGetDocument("doc", out KvDocument? stored) && stored.Xattrs is null);
    }

    [Fact]
    public async Task Xattr_lookups_pass_through_to_replicas()
    {
        var log = new TestLog(output);
        await using LoopbackCluster data = await LoopbackCluster.StartAsync(output, new CouchbaseLoopbackServerOptions { Replicas = 1, Log = log.Write });
        await using var engine = Core.Tests.Dictionaries.TestEngine.Create(new InMemoryDictionaryStore());
        ICouchbaseCollection compressed = data.Collection.WithCompression(engine);
        await compressed.UpsertAsync("doc", Heat);
        await compressed.MutateInAsync("doc", specs => specs.Upsert("audit.editor", "Ada", createPath: true, isXattr: true));

        using ILookupInReplicaResult any = await compressed.LookupInAnyReplicaAsync("doc", specs => specs.Get("audit.editor", isXattr: true));
        var all = new List<string>();
        await foreach (ILookupInReplicaResult result in compressed.LookupInAllReplicasAsync("doc", specs => specs.Get("audit.editor", isXattr: true)))
        {
            using (result) all.Add(result.ContentAs<string>(0)!);
        }

        Assert.Equal("Ada", any.ContentAs<string>(0));
        Assert.Equal(["Ada", "Ada"], all); // the active copy and one replica
    }
}
