using SharpFuzz;

namespace Compression.Fuzz;

/// <summary>
/// Entry point for AFL++ (through SharpFuzz) and for replaying inputs. See fuzz/README.md.
/// <code>
/// Compression.Fuzz run TARGET [FILE]     # under afl-fuzz: one input per iteration, read from FILE (AFL's @@) or stdin
/// Compression.Fuzz seeds DIR             # writes starting inputs to DIR/TARGET/
/// Compression.Fuzz replay TARGET PATH... # runs files (or every file of folders) in process; exit 1 on any failure
/// </code>
/// Hidden targets for fuzz/selftest.sh, never part of "all": <c>selftest-crash</c> throws on an input starting with 'B'
/// (seeded with "A", AFL finds it at once), <c>selftest-hang</c> never returns on an input starting with 'H',
/// <c>selftest-noinst</c> runs no instrumented code (AFL's "No instrumentation detected") and <c>selftest-nostart</c>
/// exits before the fork server handshake.
/// </summary>
public static class Program
{
    public static int Main(string[] args)
    {
        if (args.Length < 2) return Usage();
        switch (args[0])
        {
            case "run":
                string target = args[1];
                if (!FuzzTargets.Names.Contains(target) && !SelfTests.Contains(target)) return Usage();
                if (target == "selftest-nostart") return 3;
                // The input is read from AFL's @@ file when one is given. SharpFuzz's stdin stream is read for the first
                // input right after the fork server handshake, before afl-fuzz has written that input: when afl-fuzz
                // is scheduled late (a loaded machine), the first dry-run execution sees an empty input, the roundtrip
                // target returns at once without touching instrumented code and afl-fuzz aborts with "No
                // instrumentation detected". The @@ file is read inside the execution, after afl-fuzz wrote it.
                string? inputFile = args.Length > 2 ? args[2] : null;
                // Instrumented code may only run inside Fuzzer.Run (it writes coverage to AFL's shared memory, mapped
                // there), so the targets are created on the first input.
                FuzzTargets? fuzzTargets = null;
                Fuzzer.Run(stream =>
                {
                    fuzzTargets ??= new FuzzTargets(LoadDictionary());
                    byte[] input = inputFile is null ? ReadAll(stream) : ReadInputFile(inputFile);
                    Run(fuzzTargets, target, input);
                });
                return 0;
            case "seeds":
                FuzzTargets targets = new(LoadDictionary());
                foreach (string name in FuzzTargets.Names)
                {
                    string folder = Path.Combine(args[1], name);
                    Directory.CreateDirectory(folder);
                    int i = 0;
                    foreach (byte[] seed in targets.Seeds(name))
                        File.WriteAllBytes(Path.Combine(folder, $"seed-{i++:D3}"), seed);
                    Console.WriteLine($"{folder}: {i} seeds");
                }
                return 0;
            case "replay":
                if (args.Length < 3 || !(FuzzTargets.Names.Contains(args[1]) || SelfTests.Contains(args[1]))) return Usage();
                return Replay(new FuzzTargets(LoadDictionary()), args[1], args[2..]);
            default:
                return Usage();
        }
    }

    private static int Replay(FuzzTargets targets, string target, string[] paths)
    {
        int count = 0, failures = 0;
        foreach (string path in paths)
        {
            IEnumerable<string> files = Directory.Exists(path)
                ? Directory.EnumerateFiles(path, "*", SearchOption.AllDirectories).Where(f => !Path.GetFileName(f).StartsWith('.') && !f.EndsWith("README.txt", StringComparison.Ordinal))
                : [path];
            foreach (string file in files.Order(StringComparer.Ordinal))
            {
                count++;
                try
                {
                    Run(targets, target, File.ReadAllBytes(file));
                }
                catch (Exception ex)
                {
                    failures++;
                    Console.WriteLine($"FAIL {file}: {ex.GetType().Name}: {ex.Message}");
                }
            }
        }
        Console.WriteLine($"{target}: {count} inputs replayed, {failures} failed");
        return failures == 0 ? 0 : 1;
    }

    private static readonly string[] SelfTests = ["selftest-crash", "selftest-hang", "selftest-noinst", "selftest-nostart"];

    private static void Run(FuzzTargets targets, string target, byte[] input)
    {
        switch (target)
        {
            case "selftest-crash":
                if (input.Length > 0 && input[0] == (byte)'B') throw new FuzzFailureException("selftest-crash: an input starting with 'B' (planted crash).");
                targets.Run("roundtrip", input); // real coverage, so that afl-fuzz starts
                break;
            case "selftest-hang":
                if (input.Length > 0 && input[0] == (byte)'H') Thread.Sleep(Timeout.Infinite);
                targets.Run("roundtrip", input);
                break;
            case "selftest-noinst" or "selftest-nostart":
                break; // no instrumented code (under afl-fuzz: an empty coverage map); the plain build passes
            default:
                targets.Run(target, input);
                break;
        }
    }

    private static byte[] ReadAll(Stream stream)
    {
        using var buffer = new MemoryStream();
        stream.CopyTo(buffer);
        return buffer.ToArray();
    }

    // SharpFuzz's first (set-up) execution runs before afl-fuzz has created the file: an empty input then.
    private static byte[] ReadInputFile(string path) => File.Exists(path) ? File.ReadAllBytes(path) : [];

    private static ZstdDictionary LoadDictionary()
    {
        using Stream resource = typeof(Program).Assembly.GetManifestResourceStream("dictionary-4242.bin")
            ?? throw new InvalidOperationException("The embedded dictionary-4242.bin is missing.");
        using var buffer = new MemoryStream();
        resource.CopyTo(buffer);
        return ZstdDictionary.Create(4242, buffer.ToArray());
    }

    private static int Usage()
    {
        Console.Error.WriteLine($"usage: Compression.Fuzz run TARGET | seeds DIR | replay TARGET PATH...; targets: {string.Join(", ", FuzzTargets.Names)} (self-tests: {string.Join(", ", SelfTests)})");
        return 2;
    }
}
