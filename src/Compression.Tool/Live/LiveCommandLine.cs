using System.CommandLine;
using System.Text.Json;
using System.Text.Json.Serialization;
using Compression.Dictionaries;
using Compression.Tool.Backends;
using Compression.Tool.Backends.MongoDB;
using Spectre.Console;

namespace Compression.Tool.Live;

/// <summary>The options every live command takes (docs/docz.md).</summary>
internal sealed class LiveOptions
{
    public Option<string> Connection { get; } = new("--connection", "-c")
    {
        Description = $"MongoDB (mongodb://) or Couchbase (couchbase://, needs docz's Couchbase plugin) connection string (default: '{MongoSession.ConnectionKey}', else '{CouchbasePlugin.ConnectionKey}', in --config).",
    };

    public Option<FileInfo> Config { get; } = new("--config")
    {
        Description = "The application's appsettings.json: Compression:Defaults and Compression:Namespaces (keyed database.collection), and the connection string.",
    };

    public Option<string[]> Namespace { get; } = new("--namespace", "-n")
    {
        Description = "A collection as database.collection (repeat for several; default: every key of Compression:Namespaces in --config).",
    };

    public Option<string> Format { get; } = new("--format") { Description = "Output format: table or json.", DefaultValueFactory = _ => "table" };

    public Option<int> BatchSize { get; } = new("--batch-size") { Description = "Documents read (and written) per batch.", DefaultValueFactory = _ => 1000 };

    public Option<int> MaxFailures { get; } = new("--max-failures") { Description = "Failures listed with their _id (all are counted).", DefaultValueFactory = _ => 10 };

    public Option<bool> NoProgress { get; } = new("--no-progress") { Description = "No progress bar on stderr (it is shown only on a terminal anyway)." };

    public Option<bool> Loopback { get; } = new("--loopback")
    {
        Description = "Run on an in-memory MongoDB test double started inside docz, not on a server: it starts empty and is gone when docz exits (to try docz; see --load).",
    };

    public Option<FileInfo> Load { get; } = new("--load")
    {
        Description = "With --loopback: first insert this JSON Lines file (one document per line) into the namespace's collection (one --namespace).",
    };

    public LiveOptions() => Format.AcceptOnlyFromAmong("table", "json");

    public void AddTo(Command command)
    {
        foreach (Option option in new Option[] { Connection, Config, Namespace, Format, BatchSize, MaxFailures, NoProgress, Loopback, Load }) command.Options.Add(option);
    }

    public LiveSettings Read(ParseResult parse, TextWriter error)
    {
        int batchSize = parse.GetValue(BatchSize);
        if (batchSize is < 1 or > 100_000) throw new UsageException($"--batch-size {batchSize} is out of range; allowed: 1 to 100000.");
        int maxFailures = parse.GetValue(MaxFailures);
        if (maxFailures < 0) throw new UsageException($"--max-failures {maxFailures} is negative.");
        bool loopback = parse.GetValue(Loopback);
        if (loopback && parse.GetValue(Connection) is not null)
            throw new UsageException("--loopback runs on an in-process test double: give it without --connection.");
        FileInfo? load = parse.GetValue(Load);
        if (load is not null && !loopback)
            throw new UsageException("--load fills the test double of --loopback: give both (docz never loads a file into a real database).");
        if (load is not null && !load.Exists)
            throw new UsageException(Directory.Exists(load.FullName) ? $"--load {load.FullName} is a directory; give a JSON Lines file." : $"--load {load.FullName}: file not found.");
        return new LiveSettings
        {
            Connection = parse.GetValue(Connection),
            ConfigPath = parse.GetValue(Config)?.FullName,
            Namespaces = parse.GetValue(Namespace) ?? [],
            Json = parse.GetValue(Format) == "json",
            BatchSize = batchSize,
            MaxFailures = maxFailures,
            Progress = !parse.GetValue(NoProgress) && ReferenceEquals(error, Console.Error) && !Console.IsErrorRedirected,
            Loopback = loopback,
            LoadPath = load?.FullName,
        };
    }
}

/// <summary>Output of the live commands: a table (text) or one JSON object on stdout; progress and errors on stderr.</summary>
internal sealed class LiveOutput(TextWriter output, TextWriter error, LiveSettings settings)
{
    private static readonly JsonSerializerOptions Json = new()
    {
        PropertyNamingPolicy = JsonNamingPolicy.CamelCase,
        WriteIndented = true,
        Converters = { new JsonStringEnumConverter(JsonNamingPolicy.KebabCaseLower) },
    };

    public TextWriter Error => error;

    /// <summary>A line said before the report: on stdout with a table, on stderr with JSON (stdout holds the JSON object alone).</summary>
    public void Notice(string line)
    {
        TextWriter target = settings.Json ? error : output;
        target.WriteLine(line);
        target.Flush();
    }

    public void Write<T>(T report, Func<T, string> table)
    {
        output.WriteLine(settings.Json ? JsonSerializer.Serialize(report, Json) : table(report));
        output.Flush();
    }

    /// <summary>Runs <paramref name="body"/> with a progress bar on stderr when it is a terminal; the callback adds documents done.</summary>
    public async Task<T> ProgressAsync<T>(string description, long total, Func<Action<long>, Task<T>> body)
    {
        if (!settings.Progress) return await body(static _ => { }).ConfigureAwait(false);
        IAnsiConsole console = AnsiConsole.Create(new AnsiConsoleSettings { Out = new AnsiConsoleOutput(error) });
        return await console.Progress()
            .AutoClear(true)
            .Columns(new TaskDescriptionColumn(), new ProgressBarColumn(), new PercentageColumn(), new RemainingTimeColumn(), new SpinnerColumn())
            .StartAsync(async context =>
            {
                ProgressTask task = context.AddTask(Markup.Escape(description), maxValue: Math.Max(1, total));
                T result = await body(done => task.Increment(done)).ConfigureAwait(false);
                task.Value = task.MaxValue;
                return result;
            }).ConfigureAwait(false);
    }
}

/// <summary>Runs a live command: exit code 2 and the message for bad usage, 1 for a failure to complete, no stack traces.</summary>
internal static class LiveRunner
{
    public static async Task<int> RunAsync(string command, TextWriter error, Func<Task<int>> body)
    {
        try
        {
            return await body().ConfigureAwait(false);
        }
        catch (UsageException ex)
        {
            await error.WriteLineAsync($"{command}: {ex.Message}").ConfigureAwait(false);
            return 2;
        }
        catch (NoServerException ex)
        {
            await error.WriteLineAsync($"{command}: {ex.Message}").ConfigureAwait(false);
            return 1;
        }
        catch (Exception ex) when (ex is InvalidDataException or IOException or UnauthorizedAccessException or DictionaryNotFoundException)
        {
            await error.WriteLineAsync($"{command}: {FirstLine(ex.Message)}").ConfigureAwait(false);
            return 1;
        }
        catch (Exception ex) when (DoczBackends.Failure(ex) is { } message)
        {
            // A failure of a backend's driver or SDK: the server could not be reached, refused, timed out...
            await error.WriteLineAsync($"{command}: {message}").ConfigureAwait(false);
            return 1;
        }
    }

    /// <summary>The driver's messages can end with a dump of its cluster state, stack traces included: the first line says what happened.</summary>
    public static string FirstLine(string message) => message.Split('\n', 2)[0].TrimEnd();
}
