using System.CommandLine;
using System.Globalization;
using Compression.Dictionaries;
using Spectre.Console;

namespace Compression.Tool.Analyze;

/// <summary>
/// <c>docz analyze FILE.jsonl</c>: what each codec, level and a trained dictionary would do to these documents
/// (JSON Lines, or one JSON array of documents: <see cref="CorpusReader"/>).
/// Exit codes: <see cref="ExitOk"/>, <see cref="ExitFailuresFound"/> (lines skipped as not JSON, or array elements as
/// not JSON objects; the report covers the rest), <see cref="ExitUsage"/> (bad arguments or an input that is neither;
/// nothing is measured).
/// Every usage error is found before the measurement starts. Progress goes to stderr, the report to stdout.
/// </summary>
internal static class AnalyzeCommand
{
    public const int ExitOk = 0, ExitFailuresFound = 1, ExitUsage = 2;

    private static readonly CultureInfo C = CultureInfo.InvariantCulture;

    public static Command Create(TextWriter output, TextWriter error) => Create(output, error, TimeProvider.System);

    internal static Command Create(TextWriter output, TextWriter error, TimeProvider time)
    {
        var file = new Argument<FileInfo>("file") { Description = "A JSON Lines file: one JSON document per line (blank lines are skipped; lines that are not JSON are skipped and reported). A file holding one JSON array (on one line or pretty-printed) is read as its elements, the objects among them being the documents." };
        var format = new Option<string>("--format") { Description = "Output format on stdout: table or json.", DefaultValueFactory = _ => "table" };
        format.AcceptOnlyFromAmong("table", "json");
        var online = new Option<bool>("--online") { Description = "Also replay the documents in file order through the dictionary engine, as a live collection's writes." };
        var trainFirst = new Option<int>("--train-first")
        {
            Description = "With --online: the first N documents train a dictionary before any is written, as an application does before a bulk load (CompressionNamespace.TrainAsync with the first batch). 0: the write path alone.",
        };
        var seed = new Option<int>("--seed") { Description = "Seed of the 20%/80% training split and of the replay.", DefaultValueFactory = _ => 42 };
        var dictionarySize = new Option<int>("--dictionary-size")
        {
            Description = string.Create(C, $"Largest dictionary trained, in bytes: {ZstdDictionary.MinimumSize} to {ZstdDictionary.DefaultMaximumSize} (the engine's range)."),
            DefaultValueFactory = _ => new DictionaryOptions().DictionarySize,
        };
        var noChecksum = new Option<bool>("--no-checksum") { Description = "Measure envelopes without the checksum (2 bytes in formats v2 and v3; the library default is on). Packing documents needs it, so no rows with shapes are measured." };
        var quick = new Option<bool>("--quick") { Description = "Fewer codecs, shorter timings and the limit at zstd level 3 instead of 19 (for smoke tests)." };
        var html = new Option<FileInfo>("--html") { Description = "Also write a one-page HTML report (table, chart of ratio against speed, recommended appsettings.json) to this file." };
        var sweep = new Option<bool>("--sweep") { Description = "Measure dictionary sizes and levels for docs/dictionary-defaults.md instead.", Hidden = true };

        var command = new Command("analyze", "Measure every codec and a few levels, with and without a trained zstd dictionary (and with the dictionary and shapes: documents packed first), on a JSON Lines file or a JSON array of documents. Exit codes: 0 ok, 1 lines skipped as not JSON, or array elements as not JSON objects (the report covers the rest), 2 bad usage.")
        {
            file, format, online, trainFirst, seed, dictionarySize, noChecksum, quick, html, sweep,
        };
        command.SetAction((parse, cancellationToken) => RunAsync(new Arguments
        {
            File = parse.GetValue(file)!,
            Json = parse.GetValue(format) == "json",
            Online = parse.GetValue(online),
            TrainFirst = parse.GetValue(trainFirst),
            Seed = parse.GetValue(seed),
            DictionarySize = parse.GetValue(dictionarySize),
            Checksum = !parse.GetValue(noChecksum),
            Quick = parse.GetValue(quick),
            Html = parse.GetValue(html),
            Sweep = parse.GetValue(sweep),
        }, output, error, time, cancellationToken));
        return command;
    }

    private sealed record Arguments
    {
        public required FileInfo File { get; init; }
        public bool Json { get; init; }
        public bool Online { get; init; }
        public int TrainFirst { get; init; }
        public int Seed { get; init; }
        public int DictionarySize { get; init; }
        public bool Checksum { get; init; }
        public bool Quick { get; init; }
        public FileInfo? Html { get; init; }
        public bool Sweep { get; init; }
    }

    /// <summary>Every usage error in <paramref name="a"/>, each naming the option or path; empty when the run may start.</summary>
    private static List<string> Validate(Arguments a)
    {
        var errors = new List<string>();
        if (Directory.Exists(a.File.FullName))
            errors.Add($"{a.File.FullName} is a directory; give a JSON Lines file (one JSON document per line).");
        else if (!a.File.Exists)
            errors.Add($"file not found: {a.File.FullName}");

        if (a.DictionarySize is < ZstdDictionary.MinimumSize or > ZstdDictionary.DefaultMaximumSize)
            errors.Add(string.Create(C, $"--dictionary-size: {a.DictionarySize} is out of range; allowed: {ZstdDictionary.MinimumSize} to {ZstdDictionary.DefaultMaximumSize} bytes."));

        if (a.TrainFirst < 0)
            errors.Add(string.Create(C, $"--train-first: {a.TrainFirst} is negative; allowed: 0 or more documents."));
        else if (a.TrainFirst > 0 && !a.Online)
            errors.Add("--train-first applies to the online replay; add --online.");

        if (a.Html is { } page)
        {
            if (a.Sweep)
                errors.Add("--html does not apply to --sweep.");
            else if (Directory.Exists(page.FullName))
                errors.Add($"--html: {page.FullName} is a directory; give the name of the page to write.");
            else if (page.Directory is { Exists: false } directory)
                errors.Add($"--html: cannot write {page.FullName}: directory not found: {directory.FullName}");
        }
        return errors;
    }

    private static async Task<int> RunAsync(Arguments a, TextWriter output, TextWriter error, TimeProvider time, CancellationToken cancellationToken)
    {
        long started = time.GetTimestamp();
        List<string> errors = Validate(a);
        foreach (string message in errors) await error.WriteLineAsync($"docz analyze: {message}").ConfigureAwait(false);
        if (errors.Count > 0) return ExitUsage;

        // The page's directory is proven writable before the measurement: a sibling temporary file is created now,
        // filled at the end and renamed over the page, so an old page is never left half-written.
        PageFile? page = null;
        if (a.Html is { } htmlPath)
        {
            try
            {
                page = PageFile.Reserve(htmlPath.FullName);
            }
            catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
            {
                await error.WriteLineAsync($"docz analyze: --html: cannot write {htmlPath.FullName}: {ex.Message}").ConfigureAwait(false);
                return ExitUsage;
            }
        }

        try
        {
            string path = a.File.FullName;
            byte[] bytes;
            try
            {
                bytes = await File.ReadAllBytesAsync(path, cancellationToken).ConfigureAwait(false);
            }
            catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
            {
                await error.WriteLineAsync($"docz analyze: cannot read {path}: {ex.Message}").ConfigureAwait(false);
                return ExitUsage;
            }
            if ((CorpusReader.FindBinary(bytes) ?? CorpusReader.FindPrettyPrintedObject(bytes)) is { } notJsonLines)
            {
                await error.WriteLineAsync($"docz analyze: {path} is not a JSON Lines file: {notJsonLines}.").ConfigureAwait(false);
                return ExitUsage;
            }

            var settings = new AnalyzeSettings { Seed = a.Seed, DictionarySize = a.DictionarySize, Checksum = a.Checksum, Quick = a.Quick, TrainFirst = a.TrainFirst };
            var run = await WithProgressAsync(error, async progress =>
            {
                progress.Start("reading (bytes)", bytes.Length);
                Corpus corpus = CorpusReader.Read(bytes, progress, cancellationToken);
                progress.Stop();
                if (corpus.Documents.Count == 0 || a.Sweep) return (corpus, (AnalyzeResult?)null);

                AnalyzeResult result = CorpusAnalyzer.Analyze(corpus.Documents, settings, progress, ClockPassTimer.System, cancellationToken);
                if (a.Online)
                    result = result with { Online = await CorpusAnalyzer.ReplayAsync(corpus.Documents, settings, progress, cancellationToken).ConfigureAwait(false) };
                return (corpus, result);
            }).ConfigureAwait(false);
            Corpus read = run.Item1;
            bool array = read.Format == CorpusFormat.JsonArray;
            var input = new InputSummary(read.Lines, read.Skipped, read.FirstSkipped, read.Format);

            if (array && read.Documents.Count > 0)
                await error.WriteLineAsync(string.Create(C, $"docz analyze: {a.File.Name}: read as a JSON array of {read.Documents.Count:N0} document{(read.Documents.Count == 1 ? "" : "s")}.")).ConfigureAwait(false);
            if (read.Skipped > 0)
            {
                await error.WriteLineAsync(string.Create(C, $"docz analyze: {read.Skipped:N0} of {read.Lines:N0} {input.Item}s are not JSON {(array ? "objects" : "documents")} and were skipped; the first:")).ConfigureAwait(false);
                foreach (SkippedLine line in read.FirstSkipped)
                    await error.WriteLineAsync(string.Create(C, $"  {input.Item} {line.Line:N0}: {line.Reason}")).ConfigureAwait(false);
            }
            if (read.Documents.Count == 0)
            {
                await error.WriteLineAsync((array, read.Skipped > 0) switch
                {
                    (true, true) => $"docz analyze: {path} holds no JSON documents: it is a JSON array, and none of its elements is a JSON object.",
                    (true, false) => $"docz analyze: {path} holds no documents: it is an empty JSON array.",
                    (false, true) => $"docz analyze: {path} holds no JSON documents: none of its lines is one JSON value (one JSON document per line expected).",
                    (false, false) => $"docz analyze: {path} holds no documents (one JSON document per line expected).",
                }).ConfigureAwait(false);
                return ExitUsage;
            }

            if (a.Sweep)
            {
                SweepResult swept = CorpusAnalyzer.Sweep(read.Documents, settings, [4096, 8192, 16384, 32768, 65536], [1, 3, 9], [32, 64, 128, 256], cancellationToken);
                await output.WriteLineAsync(AnalyzeReport.ToSweepTables(swept, a.File.Name)).ConfigureAwait(false);
                return read.Skipped > 0 ? ExitFailuresFound : ExitOk;
            }

            AnalyzeResult analyzed = run.Item2! with { Input = input };
            await output.WriteLineAsync(a.Json ? AnalyzeReport.ToJson(analyzed) : AnalyzeReport.ToTable(analyzed, a.File.Name)).ConfigureAwait(false);
            if (page is not null)
            {
                try
                {
                    await page.WriteAsync(AnalyzeHtmlReport.ToHtml(analyzed, a.File.Name, time.GetUtcNow()), cancellationToken).ConfigureAwait(false);
                }
                catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
                {
                    await error.WriteLineAsync($"docz analyze: --html: cannot write {page.Path}: {ex.Message}").ConfigureAwait(false);
                    return ExitUsage;
                }
            }

            int exit = read.Skipped > 0 ? ExitFailuresFound : ExitOk;
            string verdict = analyzed.Recommended is { } best
                ? $"recommended {SettingRecommender.Name(best)}"
                : "compression does not pay: store these documents uncompressed";
            string skipped = read.Skipped > 0 ? string.Create(C, $"; {read.Skipped:N0} {input.Item}s skipped as not JSON{(array ? " objects" : "")}") : "";
            await error.WriteLineAsync(string.Create(C,
                $"docz analyze: {a.File.Name}: {analyzed.Documents:N0} document{(analyzed.Documents == 1 ? "" : "s")}, {analyzed.Results.Count} settings measured in {time.GetElapsedTime(started).TotalSeconds:F1} s; {verdict}{skipped}; exit code {exit}.")).ConfigureAwait(false);
            return exit;
        }
        finally
        {
            page?.Dispose();
        }
    }

    /// <summary>
    /// Runs <paramref name="work"/> with a progress display on <paramref name="error"/>: Spectre.Console's bars when it is
    /// the process's stderr and a terminal that takes escape codes, plain lines otherwise (a log, a pipe, a test's writer).
    /// The terminal is judged on stderr alone: Spectre's own detection looks at stdout, which <c>--format json &gt; file</c>
    /// redirects while the bars still belong on the screen.
    /// </summary>
    private static Task<T> WithProgressAsync<T>(TextWriter error, Func<AnalyzeProgress, Task<T>> work)
    {
        string? term = Environment.GetEnvironmentVariable("TERM");
        bool escapes = OperatingSystem.IsWindows() || (term is { Length: > 0 } && term != "dumb");
        if (ReferenceEquals(error, Console.Error) && !Console.IsErrorRedirected && escapes)
        {
            IAnsiConsole console = AnsiConsole.Create(new AnsiConsoleSettings
            {
                Ansi = AnsiSupport.Yes,
                Interactive = InteractionSupport.Yes,
                Out = new AnsiConsoleOutput(Console.Error),
            });
            return SpectreAnalyzeProgress.RunAsync(console, work);
        }
        return work(new LineAnalyzeProgress(error));
    }

    /// <summary>The <c>--html</c> page: a temporary file beside it from the start, renamed over it once written; deleted if never written.</summary>
    private sealed class PageFile : IDisposable
    {
        private readonly string _temporary;
        private FileStream? _stream;

        private PageFile(string path, string temporary, FileStream stream)
        {
            Path = path;
            _temporary = temporary;
            _stream = stream;
        }

        public string Path { get; }

        public static PageFile Reserve(string path)
        {
            string temporary = System.IO.Path.Combine(System.IO.Path.GetDirectoryName(path)!, $".{System.IO.Path.GetFileName(path)}.{Guid.NewGuid():N}.tmp");
            return new PageFile(path, temporary, new FileStream(temporary, FileMode.CreateNew, FileAccess.Write, FileShare.None));
        }

        public async Task WriteAsync(string content, CancellationToken cancellationToken)
        {
            FileStream stream = _stream ?? throw new InvalidOperationException("The page was written already.");
            await using (stream.ConfigureAwait(false))
            {
                await stream.WriteAsync(new System.Text.UTF8Encoding(false).GetBytes(content), cancellationToken).ConfigureAwait(false);
            }
            _stream = null;
            File.Move(_temporary, Path, overwrite: true);
        }

        public void Dispose()
        {
            _stream?.Dispose();
            _stream = null;
            if (File.Exists(_temporary)) File.Delete(_temporary);
        }
    }
}
