using System.CommandLine;
using Compression.Dictionaries;

namespace Compression.Tool.Analyze;

/// <summary><c>analyze FILE.jsonl</c>: what each codec, level and a trained dictionary would do to these documents.</summary>
internal static class AnalyzeCommand
{
    public static Command Create(TextWriter output, TextWriter error)
    {
        var file = new Argument<FileInfo>("file") { Description = "A JSON Lines file: one document per line (blank lines are skipped)." };
        var format = new Option<string>("--format") { Description = "Output format: table or json.", DefaultValueFactory = _ => "table" };
        format.AcceptOnlyFromAmong("table", "json");
        var online = new Option<bool>("--online") { Description = "Also replay the documents in file order through the dictionary engine, as a live collection's writes." };
        var seed = new Option<int>("--seed") { Description = "Seed of the 20%/80% training split and of the replay.", DefaultValueFactory = _ => 42 };
        var dictionarySize = new Option<int>("--dictionary-size") { Description = "Largest dictionary trained, in bytes.", DefaultValueFactory = _ => new DictionaryOptions().DictionarySize };
        var noChecksum = new Option<bool>("--no-checksum") { Description = "Measure envelopes without the 4-byte checksum (the library default is on)." };
        var quick = new Option<bool>("--quick") { Description = "Fewer codecs and shorter timings (for smoke tests)." };
        var html = new Option<FileInfo>("--html") { Description = "Also write a one-page HTML report (table, chart of ratio against speed, recommended appsettings.json) to this file." };
        var sweep = new Option<bool>("--sweep") { Description = "Measure dictionary sizes and levels for docs/dictionary-defaults.md instead.", Hidden = true };

        var command = new Command("analyze", "Measure every codec and a few levels, with and without a trained zstd dictionary, on a JSON Lines file.")
        {
            file, format, online, seed, dictionarySize, noChecksum, quick, html, sweep,
        };
        command.SetAction(async (parse, cancellationToken) =>
        {
            FileInfo path = parse.GetValue(file)!;
            if (!path.Exists)
            {
                await error.WriteLineAsync($"analyze: file not found: {path.FullName}").ConfigureAwait(false);
                return 2;
            }
            List<byte[]> documents;
            try
            {
                documents = await CorpusReader.ReadJsonLinesAsync(path.FullName, cancellationToken).ConfigureAwait(false);
            }
            catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
            {
                await error.WriteLineAsync($"analyze: cannot read {path.FullName}: {ex.Message}").ConfigureAwait(false);
                return 2;
            }
            if (documents.Count == 0)
            {
                await error.WriteLineAsync($"analyze: {path.FullName} holds no documents (one JSON document per line expected).").ConfigureAwait(false);
                return 2;
            }
            int size = parse.GetValue(dictionarySize);
            if (size < ZstdDictionary.MinimumSize)
            {
                await error.WriteLineAsync($"analyze: --dictionary-size must be at least {ZstdDictionary.MinimumSize} bytes.").ConfigureAwait(false);
                return 2;
            }

            FileInfo? htmlPath = parse.GetValue(html);
            if (htmlPath is not null)
            {
                if (parse.GetValue(sweep))
                {
                    await error.WriteLineAsync("analyze: --html does not apply to --sweep.").ConfigureAwait(false);
                    return 2;
                }
                // Fail before the measurement (which takes seconds), not after it.
                if (htmlPath.Directory is { Exists: false } directory)
                {
                    await error.WriteLineAsync($"analyze: cannot write {htmlPath.FullName}: directory not found: {directory.FullName}").ConfigureAwait(false);
                    return 2;
                }
            }

            var settings = new AnalyzeSettings
            {
                Seed = parse.GetValue(seed),
                DictionarySize = size,
                Checksum = !parse.GetValue(noChecksum),
                Quick = parse.GetValue(quick),
            };
            if (parse.GetValue(sweep))
            {
                SweepResult swept = CorpusAnalyzer.Sweep(documents, settings, [4096, 8192, 16384, 32768, 65536], [1, 3, 9], [32, 64, 128, 256], cancellationToken);
                await output.WriteLineAsync(AnalyzeReport.ToSweepTables(swept, path.Name)).ConfigureAwait(false);
                return 0;
            }
            AnalyzeResult result = CorpusAnalyzer.Analyze(documents, settings, cancellationToken);
            if (parse.GetValue(online))
                result = result with { Online = await CorpusAnalyzer.ReplayAsync(documents, settings, cancellationToken).ConfigureAwait(false) };

            string report = parse.GetValue(format) == "json" ? AnalyzeReport.ToJson(result) : AnalyzeReport.ToTable(result, path.Name);
            await output.WriteLineAsync(report).ConfigureAwait(false);
            if (htmlPath is not null)
            {
                string page = AnalyzeHtmlReport.ToHtml(result, path.Name, DateTimeOffset.UtcNow);
                try
                {
                    await File.WriteAllTextAsync(htmlPath.FullName, page, cancellationToken).ConfigureAwait(false);
                }
                catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
                {
                    await error.WriteLineAsync($"analyze: cannot write {htmlPath.FullName}: {ex.Message}").ConfigureAwait(false);
                    return 2;
                }
            }
            return 0;
        });
        return command;
    }
}
