using SharpFuzz;

namespace Compression.Fuzz;

/// <summary>
/// Entry point for AFL++ (through SharpFuzz) and for replaying inputs. See fuzz/README.md.
/// <code>
/// Compression.Fuzz run TARGET            # under afl-fuzz: one input per iteration, from AFL's shared memory
/// Compression.Fuzz seeds DIR             # writes starting inputs to DIR/TARGET/
/// Compression.Fuzz replay TARGET PATH... # runs files (or every file of folders) in process; exit 1 on any failure
/// </code>
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
                if (!FuzzTargets.Names.Contains(target)) return Usage();
                // Instrumented code may only run inside Fuzzer.Run (it writes coverage to AFL's shared memory, mapped
                // there), so the targets are created on the first input.
                FuzzTargets? fuzzTargets = null;
                Fuzzer.Run(stream =>
                {
                    fuzzTargets ??= new FuzzTargets(LoadDictionary());
                    using var buffer = new MemoryStream();
                    stream.CopyTo(buffer);
                    fuzzTargets.Run(target, buffer.GetBuffer().AsSpan(0, (int)buffer.Length));
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
                if (args.Length < 3 || !FuzzTargets.Names.Contains(args[1])) return Usage();
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
                    targets.Run(target, File.ReadAllBytes(file));
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
        Console.Error.WriteLine($"usage: Compression.Fuzz run TARGET | seeds DIR | replay TARGET PATH...; targets: {string.Join(", ", FuzzTargets.Names)}");
        return 2;
    }
}
