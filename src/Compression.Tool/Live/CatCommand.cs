using System.CommandLine;
using Compression.Tool.Backends;

namespace Compression.Tool.Live;

/// <summary>
/// <c>cat</c>: the decoded documents of one namespace, one JSON document a line on stdout, as the application reads them
/// through the serializer (MongoDB: canonical Extended JSON; Couchbase: <c>{"id":...,"value":...}</c>), selected on
/// what the database can match without decompressing (docs/docz.md, "cat").
/// </summary>
internal static class CatCommand
{
    public static Command Create(TextWriter output, TextWriter error)
    {
        var live = new LiveOptions();
        var filter = new Option<string>("--filter") { Description = "MongoDB: a query document (Extended JSON) on clear fields (_id and ClearFields), sent to the server." };
        var id = new Option<string[]>("--id") { Description = "Couchbase: a document key (repeat for several)." };
        var prefix = new Option<string>("--prefix") { Description = "Couchbase: only keys that start with this prefix." };
        var limit = new Option<long?>("--limit") { Description = "At most this many documents (default: every one that matches)." };
        var command = new Command("cat", "Print the decoded documents of one namespace as JSON Lines on stdout (unreadable ones on stderr, exit 1).")
        {
            filter, id, prefix, limit,
        };
        live.AddTo(command);
        command.SetAction((parse, cancellationToken) => LiveRunner.RunAsync("cat", error, async () =>
        {
            LiveSettings settings = live.Read(parse, error);
            long? max = parse.GetValue(limit);
            if (max is < 1) throw new UsageException($"--limit {max} must be at least 1.");
            string[] ids = parse.GetValue(id) ?? [];
            string? keyPrefix = parse.GetValue(prefix);
            if (ids.Length > 0 && keyPrefix is not null) throw new UsageException("--id and --prefix select documents two ways: give one of them.");
            var query = new DocumentQuery(parse.GetValue(filter), ids, keyPrefix);
            // stdout holds the documents alone: notices (--loopback's) go to stderr, as with --format json.
            var console = new LiveOutput(output, error, settings with { Json = true });
            return await DoczBackends.Choose(settings).CatAsync(settings, query, max ?? long.MaxValue, output, console, cancellationToken).ConfigureAwait(false);
        }));
        return command;
    }
}

/// <summary>
/// What <c>cat</c> selects, on what the database matches without decompressing: a MongoDB query document on clear fields
/// (<paramref name="Filter"/>), or Couchbase keys (<paramref name="Ids"/>) or a key prefix (<paramref name="Prefix"/>).
/// A backend refuses, as bad usage, the ways it does not have.
/// </summary>
internal sealed record DocumentQuery(string? Filter, IReadOnlyList<string> Ids, string? Prefix)
{
    public static DocumentQuery All { get; } = new(null, [], null);
}
