using System.CommandLine;
using Compression.Tool.Backends;

namespace Compression.Tool.Live;

/// <summary>
/// <c>import</c>: the JSON Lines of <c>export</c> written back into a namespace, each document compressed as the
/// application's serializer or transcoder would (upsert by id), resumable from a checkpoint file beside the input
/// (docs/docz.md, "export and import").
/// </summary>
internal static class ImportCommand
{
    public static Command Create(TextWriter output, TextWriter error)
    {
        var live = new LiveOptions();
        var from = new Option<FileInfo>("--from") { Description = "The JSON Lines file to read (as export writes it).", Required = true };
        var restart = new Option<bool>("--restart") { Description = "Ignore an unfinished checkpoint: start from the first line." };
        var noTrain = new Option<bool>("--no-train") { Description = "When the namespace has no dictionary yet, compress without one instead of training one from the file first." };
        var command = new Command("import",
            "Write every document of a JSON Lines file (as export writes it) into one namespace, compressed, upserted by id; resumable; bad lines reported by number.")
        {
            from, restart, noTrain,
        };
        live.AddTo(command);
        command.SetAction((parse, cancellationToken) => LiveRunner.RunAsync("import", error, async () =>
        {
            LiveSettings settings = live.Read(parse, error);
            FileInfo file = parse.GetValue(from)!;
            if (!file.Exists)
                throw new UsageException(Directory.Exists(file.FullName) ? $"--from {file.FullName} is a directory; give a JSON Lines file." : $"--from {file.FullName}: file not found.");
            var options = new TransferOptions { File = file.FullName, Restart = parse.GetValue(restart), Train = !parse.GetValue(noTrain) };
            var console = new LiveOutput(output, error, settings);
            return await DoczBackends.Choose(settings).ImportAsync(settings, options, console, cancellationToken).ConfigureAwait(false);
        }));
        return command;
    }
}
