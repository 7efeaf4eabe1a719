using System.Buffers.Binary;
using System.Diagnostics;
using System.IO.Hashing;
using System.Numerics;
using System.Text;
using Compression.Internal;
using Compression.Structure;

namespace Compression.StructureAnalysis;

/// <summary>
/// The shape-table bound measured (docs/reliability.md, "Shape tables built to collide"):
/// <c>Compression.StructureAnalysis hostile-shapes</c>. Times <see cref="ShapeTable.Parse(ReadOnlySpan{byte}, int)"/> of
/// the worst records an attacker can write under the 256 KiB cap, against a trained-like table of as many shapes, and
/// the encoding of a victim's document with a table of 3,199 key lists built to collide with its own (and sharing its
/// first keys) adopted, against a normal table. The records are built against the lookup hash of commit 01b24ca
/// (<see cref="OldHash"/>, invertible), so the same program, built on that commit, gives the "before" figures; the
/// last section (every key list on one hash value, which a keyed hash makes impossible to build, the bound's worst
/// case) needs the test hook of the fixed code and is left out there. Wall-clock, fastest and median of several runs.
/// </summary>
internal static class HostileShapes
{
    public static int Run()
    {
        Console.WriteLine($"ShapeTable.MaxShapes = {ShapeTable.MaxShapes}; record cap {ShapeTableBuilder.MaxStoredLength} B");

        // Parse. The old reader compared each key list with every earlier one on its hash, key by key: a record is worst
        // when as many lists as fit share one hash and a run of leading keys (empty ones: one byte each in the record).
        // Each list: k empty keys, a distinct two-byte key, an 8-byte key solved for the hash. n = 262,144 / (13 + k)
        // lists of k + 1 compared keys: n^2 (k + 1) is largest at k = 11 (10,900 lists), the worst record under the
        // cap; k = 0 gives the most lists (20,163). The fixed reader refuses both for their count; the most it parses is
        // 4,096 lists, worst with the longest shared run that fits (k = 50).
        List<byte[][]> normal4096 = [.. Enumerable.Range(0, 4096).Select(i => new[] { Encoding.UTF8.GetBytes($"k{i:x4}"), Encoding.UTF8.GetBytes($"field{i % 97}") })];
        foreach (int k in new[] { 0, 11 })
            TimeParse($"most lists under the cap, all colliding (old hash), {k} shared empty keys", Record(FitUnderTheCap(OldHash.Colliding(Empty(k), 0x0123456789ABCDEF))), Parse);
        foreach (int k in new[] { 0, 50 })
            TimeParse($"4,096 lists, all colliding (old hash), {k} shared empty keys", Record([.. OldHash.Colliding(Empty(k), 0x0123456789ABCDEF).Take(4096)]), Parse);
        TimeParse("4,096 lists, none colliding (normal)", Record(normal4096), Parse);

        // Encode: a movies-like document, the table holding its key list (normal), or 3,199 lists with its key count and
        // first eight keys colliding with it under the old hash, then its list (hostile, 208 KB).
        byte[] document = "{\"_id\":1,\"title\":\"The Night of the Hunter\",\"year\":1955,\"rated\":\"APPROVED\",\"runtime\":92,\"genres\":\"Drama\",\"director\":\"Charles Laughton\",\"writer\":\"James Agee\",\"cast\":\"Robert Mitchum\",\"plot\":\"A religious fanatic marries a gullible widow.\"}"u8.ToArray();
        byte[][] victim = [.. new[] { "_id", "title", "year", "rated", "runtime", "genres", "director", "writer", "cast", "plot" }.Select(Encoding.UTF8.GetBytes)];
        List<byte[][]> hostile = [.. OldHash.Colliding(victim[..^2], OldHash.Of(victim)).Take(3199), victim];
        List<byte[][]> normal = [victim, .. normal4096.Take(3199)];
        byte[] hostileRecord = Record(hostile);
        Console.WriteLine($"hostile table: {hostile.Count} shapes, {hostileRecord.Length} B");
        TimeEncode("normal table (victim's list + 3,199 others)", Parse(Record(normal)), document);
        TimeEncode("hostile table (3,199 colliding with the victim's list, then it)", Parse(hostileRecord), document);
        TimeEncode("table without the victim's list (3,199 others: keys inline)", Parse(Record(normal[1..])), document);

        // BEGIN fixed code only (deleted to build this on commit 01b24ca)
        // The fixed code's worst case: every key list on one hash value (test hook; impossible to build against the keyed hash).
        static ShapeTable OnOneHash(byte[] record) => ShapeTable.Parse(record, ShapeTableBuilder.MaxStoredLength, ShapeHashKey.Constant);
        TimeParse("4,096 lists, all on one hash value (test hook), 50 shared empty keys", Record([.. OldHash.Colliding(Empty(50), 0).Take(4096)]), OnOneHash);
        TimeEncode("hostile table, all on one hash value (test hook)", OnOneHash(hostileRecord), document);
        // END fixed code only
        return 0;
    }

    private static ShapeTable Parse(byte[] record) => ShapeTable.Parse(record, ShapeTableBuilder.MaxStoredLength);

    private static void TimeParse(string what, byte[] record, Func<byte[], ShapeTable> parse)
    {
        var times = new List<double>();
        string outcome = "";
        var run = Stopwatch.StartNew();
        while (times.Count < 3 || (times.Count < 200 && run.Elapsed.TotalSeconds < 2))
        {
            long start = Stopwatch.GetTimestamp();
            try
            {
                ShapeTable table = parse(record);
                outcome = $"accepted, {table.Count} shapes";
            }
            catch (InvalidDataException ex)
            {
                outcome = "refused: " + ex.Message;
            }
            times.Add(Stopwatch.GetElapsedTime(start).TotalMilliseconds);
        }
        times.Sort();
        Console.WriteLine($"parse  {what}: {record.Length} B; fastest {times[0]:F3} ms, median {times[times.Count / 2]:F3} ms ({times.Count} runs); {outcome}");
    }

    private static void TimeEncode(string what, ShapeTable table, byte[] document)
    {
        var transform = new ShapeTransform(table);
        byte[] buffer = new byte[document.Length];
        if (!transform.TryEncode(document, buffer, out int packed)) throw new InvalidOperationException("not packed");
        int perPass = 100;
        var times = new List<double>();
        var run = Stopwatch.StartNew();
        while (times.Count < 5 || run.Elapsed.TotalSeconds < 2)
        {
            long start = Stopwatch.GetTimestamp();
            for (int i = 0; i < perPass; i++) transform.TryEncode(document, buffer, out _);
            times.Add(Stopwatch.GetElapsedTime(start).TotalMicroseconds / perPass);
        }
        times.Sort();
        Console.WriteLine($"encode {what}: {document.Length} B -> {packed} B (first byte, the shape id: {buffer[0]}); fastest {times[0]:F2} us, median {times[times.Count / 2]:F2} us a document ({times.Count} x {perPass})");
    }

    private static byte[][] Empty(int count) => [.. Enumerable.Range(0, count).Select(_ => Array.Empty<byte>())];

    private static List<byte[][]> FitUnderTheCap(IEnumerable<byte[][]> shapes)
    {
        var fitting = new List<byte[][]>();
        int length = 7 + 3 + 4;
        foreach (byte[][] keys in shapes)
        {
            int shapeLength = 1 + keys.Sum(k => 1 + k.Length);
            if (length + shapeLength > ShapeTableBuilder.MaxStoredLength) break;
            length += shapeLength;
            fitting.Add(keys);
        }
        return fitting;
    }

    /// <summary>A JSON shape table of <paramref name="shapes"/> as an attacker writes it (no check), with a valid checksum.</summary>
    private static byte[] Record(List<byte[][]> shapes)
    {
        var bytes = new List<byte>();
        bytes.AddRange("SHPT"u8.ToArray());
        bytes.AddRange([ShapeTable.FormatVersion, (byte)DocumentKind.Json, 0]);
        AddVarint(bytes, (uint)shapes.Count);
        foreach (byte[][] keys in shapes)
        {
            AddVarint(bytes, (uint)keys.Length);
            foreach (byte[] key in keys)
            {
                AddVarint(bytes, (uint)key.Length);
                bytes.AddRange(key);
            }
        }
        byte[] checksum = new byte[4];
        BinaryPrimitives.WriteUInt32LittleEndian(checksum, XxHash32.HashToUInt32([.. bytes]));
        return [.. bytes, .. checksum];
    }

    private static void AddVarint(List<byte> bytes, uint value)
    {
        byte[] buffer = new byte[Varint.MaxLength32];
        bytes.AddRange(buffer[..Varint.Write(buffer, value)]);
    }

    /// <summary>The lookup hash of commit 01b24ca and its inversion (as tests/Compression.Core.Tests/Structure/ShapeTableHostileTests.cs).</summary>
    private static class OldHash
    {
        private const ulong Multiplier = 0x9FB21C651E98DF25UL;
        private const ulong Start = 0x9E3779B97F4A7C15UL;
        private static readonly ulong Inverse = Invert(Multiplier);

        private static ulong Key(ulong hash, ReadOnlySpan<byte> key)
        {
            int length = key.Length;
            if (length >= 8)
            {
                int at = 0;
                for (; at + 8 < length; at += 8)
                    hash = BitOperations.RotateLeft((hash ^ BinaryPrimitives.ReadUInt64LittleEndian(key[at..])) * Multiplier, 29);
                hash = BitOperations.RotateLeft((hash ^ BinaryPrimitives.ReadUInt64LittleEndian(key[(length - 8)..])) * Multiplier, 29);
            }
            else if (length >= 4)
            {
                ulong word = BinaryPrimitives.ReadUInt32LittleEndian(key) | ((ulong)BinaryPrimitives.ReadUInt32LittleEndian(key[(length - 4)..]) << 32);
                hash = BitOperations.RotateLeft((hash ^ word) * Multiplier, 29);
            }
            else if (length > 0)
            {
                ulong word = key[0] | ((ulong)key[length >> 1] << 8) | ((ulong)key[length - 1] << 16);
                hash = BitOperations.RotateLeft((hash ^ word) * Multiplier, 29);
            }
            return (hash ^ (ulong)length) * Multiplier;
        }

        public static ulong Of(IEnumerable<byte[]> keys)
        {
            ulong hash = Start;
            foreach (byte[] key in keys) hash = Key(hash, key);
            return hash;
        }

        /// <summary><paramref name="prefix"/>, a distinct two-byte key, then an 8-byte key solved for the list to hash to <paramref name="target"/>.</summary>
        public static IEnumerable<byte[][]> Colliding(byte[][] prefix, ulong target)
        {
            ulong before = Of(prefix);
            byte[] allowed = [.. Enumerable.Range(1, 255).Select(b => (byte)b).Where(b => b is not (byte)'"' and not (byte)'\\')];
            foreach (byte first in allowed)
            {
                foreach (byte second in allowed)
                {
                    byte[] varying = [first, second];
                    ulong w = (BitOperations.RotateRight((target * Inverse) ^ 8, 29) * Inverse) ^ Key(before, varying);
                    byte[] last = new byte[8];
                    BinaryPrimitives.WriteUInt64LittleEndian(last, w);
                    if (last.AsSpan().IndexOfAny((byte)'"', (byte)'\\', (byte)0) >= 0) continue;
                    yield return [.. prefix, varying, last];
                }
            }
        }

        private static ulong Invert(ulong odd)
        {
            ulong inverse = odd;
            for (int i = 0; i < 5; i++) inverse *= 2 - odd * inverse;
            return inverse;
        }
    }
}
