using System.Buffers;

namespace Compression.Core.Tests.Dictionaries;

/// <summary>Multi-segment <see cref="ReadOnlySequence{T}"/>s of a value, for the sequence rungs of a namespace's API.</summary>
internal static class TestSequences
{
    private sealed class Segment : ReadOnlySequenceSegment<byte>
    {
        public Segment(ReadOnlyMemory<byte> memory) => Memory = memory;

        public Segment Append(ReadOnlyMemory<byte> memory)
        {
            var next = new Segment(memory) { RunningIndex = RunningIndex + Memory.Length };
            Next = next;
            return next;
        }
    }

    /// <summary>The value cut into pieces of equal size (the last one shorter), each a view of the value.</summary>
    public static ReadOnlySequence<byte> Split(byte[] value, int pieces)
    {
        int size = Math.Max(1, value.Length / pieces);
        Segment first = new(value.AsMemory(0, Math.Min(size, value.Length))), last = first;
        for (int offset = size; offset < value.Length; offset += size) last = last.Append(value.AsMemory(offset, Math.Min(size, value.Length - offset)));
        return new ReadOnlySequence<byte>(first, 0, last, last.Memory.Length);
    }

    /// <summary>The bytes as a sequence of two to five segments at random cuts (one only for fewer than 2 bytes), each copied into its own array.</summary>
    public static ReadOnlySequence<byte> RandomSplit(byte[] data, Random random)
    {
        if (data.Length < 2) return new ReadOnlySequence<byte>(data);
        int pieces = Math.Min(data.Length, random.Next(2, 6));
        var cuts = new SortedSet<int>();
        while (cuts.Count < pieces - 1) cuts.Add(random.Next(1, data.Length));
        int start = 0;
        Segment? first = null, last = null;
        foreach (int cut in cuts.Append(data.Length))
        {
            ReadOnlyMemory<byte> piece = data.AsSpan(start, cut - start).ToArray();
            if (first is null) first = last = new Segment(piece);
            else last = last!.Append(piece);
            start = cut;
        }
        return new ReadOnlySequence<byte>(first!, 0, last!, last!.Memory.Length);
    }
}
