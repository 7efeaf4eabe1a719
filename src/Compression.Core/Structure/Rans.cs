using System.Runtime.CompilerServices;

namespace Compression.Structure;

/// <summary>
/// A static-model rANS coder with a 32-bit state and byte-wise renormalization (J. Duda's asymmetric numeral systems,
/// in the form of F. Giesen's public-domain <c>rans_byte.h</c>, with a 24-bit state: L = 2^16, so a stream's state
/// takes 3 bytes instead of 4, at a precision of 16 L per model total that costs well under a bit a document). Every symbol carries its own model: a start and a
/// frequency out of <c>2^scaleBits</c> (scaleBits 1-16), so a stream mixes per-field tables and raw bit fields (a
/// frequency of 1). The encoder takes the symbols in order and writes them backwards; the decoder reads forwards.
/// The stream is the final state (3 bytes, little-endian: the state stays under 2^24) then the renormalization bytes; the encoder starts from
/// <see cref="Low"/>, so a decoder that has read every symbol must be back at it with every byte consumed: a
/// stream that was cut, extended or altered is caught at <see cref="RansDecoder.End"/> unless it still decodes to
/// symbols a model allows and ends in that exact state.
/// </summary>
internal static class Rans
{
    /// <summary>The lower bound of the normalized state interval [Low, 256 Low).</summary>
    public const uint Low = 1u << 16;

    /// <summary>The largest scale a symbol may use.</summary>
    public const int MaxScaleBits = 16;

    /// <summary>The bytes of the state that starts a stream of at least one symbol (the state is under 256 <see cref="Low"/> = 2^24).</summary>
    public const int StateLength = 3;

    /// <summary>
    /// A stream may start its encoder at <see cref="Low"/> + v for a 16-bit value v instead of at <see cref="Low"/>
    /// (codec 9 folds the document's checksum so): the decoder ends in that state and hands v back. The initial state is
    /// then under 2 <see cref="Low"/>, one bit more than <see cref="Low"/>'s, so the 16 bits cost the stream about a
    /// bit where writing them beside it cost 2 bytes.
    /// </summary>
    public const uint FoldedLimit = 2 * Low;

    /// <summary>A folded stream that codes no symbol is the value alone, in 2 bytes, little-endian.</summary>
    public const int FoldedAloneLength = 2;
}

/// <summary>One symbol to encode: its cumulative start and frequency out of 2^<see cref="ScaleBits"/>.</summary>
internal readonly record struct RansSymbol(ushort Start, ushort Frequency, byte ScaleBits);

/// <summary>Encodes a list of symbols (collected in order) into a rANS stream. Reused per thread; not thread-safe.</summary>
internal sealed class RansEncoder
{
    private RansSymbol[] _symbols = new RansSymbol[64];
    private byte[] _buffer = new byte[256];

    public int Count { get; private set; }

    public void Reset() => Count = 0;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void Add(int start, int frequency, int scaleBits)
    {
        if (Count == _symbols.Length) Array.Resize(ref _symbols, _symbols.Length * 2);
        _symbols[Count++] = new RansSymbol((ushort)start, (ushort)frequency, (byte)scaleBits);
    }

    /// <summary>Adds <paramref name="bits"/> raw bits of <paramref name="value"/> (0-64 bits), as 16-bit symbols of frequency 1.</summary>
    public void AddBits(ulong value, int bits)
    {
        while (bits > 0)
        {
            int take = Math.Min(bits, Rans.MaxScaleBits);
            Add((int)(value & ((1UL << take) - 1)), 1, take);
            value >>= take;
            bits -= take;
        }
    }

    /// <summary>The encoded stream of the symbols added since <see cref="Reset"/> (empty when there are none); valid until the next call.</summary>
    public ReadOnlySpan<byte> Encode() => Encode(Rans.Low);

    /// <summary>
    /// The encoded stream of the symbols added since <see cref="Reset"/>, with <paramref name="folded"/> in its initial
    /// state (<see cref="Rans.FoldedLimit"/>). With no symbol, the value alone, 2 bytes little-endian (<see cref="Rans.FoldedAloneLength"/>):
    /// a state would take 3, and a stream of symbols is never under 3.
    /// </summary>
    public ReadOnlySpan<byte> EncodeFolded(ushort folded)
    {
        if (Count > 0) return Encode(Rans.Low + folded);
        _buffer[0] = (byte)folded;
        _buffer[1] = (byte)(folded >> 8);
        return _buffer.AsSpan(0, Rans.FoldedAloneLength);
    }

    private ReadOnlySpan<byte> Encode(uint initial)
    {
        if (Count == 0) return default;
        // Each symbol writes at most 2 bytes (a scale of 16 bits and a frequency of 1), plus the state.
        int capacity = Count * 2 + Rans.StateLength;
        if (_buffer.Length < capacity) _buffer = new byte[Math.Max(capacity, _buffer.Length * 2)];
        byte[] buffer = _buffer;
        int at = buffer.Length;
        uint x = initial;
        for (int i = Count - 1; i >= 0; i--)
        {
            RansSymbol s = _symbols[i];
            uint max = ((Rans.Low >> s.ScaleBits) << 8) * s.Frequency;
            while (x >= max)
            {
                buffer[--at] = (byte)x;
                x >>= 8;
            }
            x = ((x / s.Frequency) << s.ScaleBits) + (x % s.Frequency) + s.Start;
        }
        at -= Rans.StateLength;
        buffer[at] = (byte)x;
        buffer[at + 1] = (byte)(x >> 8);
        buffer[at + 2] = (byte)(x >> 16);
        return buffer.AsSpan(at);
    }
}

/// <summary>Decodes a stream written by <see cref="RansEncoder"/>; throws <see cref="InvalidDataException"/> on anything it cannot be.</summary>
internal ref struct RansDecoder
{
    private readonly ReadOnlySpan<byte> _stream;
    private int _at;
    private uint _x;

    public RansDecoder(ReadOnlySpan<byte> stream, bool folded = false)
    {
        _stream = stream;
        if (folded && stream.Length < Rans.StateLength)
        {
            // No symbol: the value alone (2 bytes); any symbol read fails, as on an empty stream.
            if (stream.Length != Rans.FoldedAloneLength) StructureThrow.Corrupt($"Field stream: {stream.Length} bytes, where it holds at least the checksum (2).");
            _x = Rans.Low + (uint)(stream[0] | stream[1] << 8);
            _stream = default; // read: a symbol read fails as on an empty stream, and the end finds every byte consumed
            _at = 0;
            return;
        }
        if (stream.IsEmpty)
        {
            _x = Rans.Low; // no symbols: End() holds, and any symbol read fails
            _at = 0;
            return;
        }
        if (stream.Length < Rans.StateLength) StructureThrow.Corrupt($"Field stream: {stream.Length} bytes, under the {Rans.StateLength} of its state.");
        _x = stream[0] | (uint)stream[1] << 8 | (uint)stream[2] << 16;
        if (_x < Rans.Low) StructureThrow.Corrupt("Field stream: the state is below the normalized interval.");
        _at = Rans.StateLength;
    }

    /// <summary>The slot of the next symbol in a model of 2^<paramref name="scaleBits"/>: the caller finds the symbol whose range holds it, then calls <see cref="Advance"/>.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public readonly int Peek(int scaleBits)
    {
        if (_stream.IsEmpty) StructureThrow.Corrupt("Field stream: a symbol is needed and the stream is empty.");
        return (int)(_x & ((1u << scaleBits) - 1));
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void Advance(int start, int frequency, int scaleBits)
    {
        _x = (uint)frequency * (_x >> scaleBits) + (_x & ((1u << scaleBits) - 1)) - (uint)start;
        while (_x < Rans.Low)
        {
            if (_at >= _stream.Length) StructureThrow.Corrupt("Field stream: truncated.");
            _x = (_x << 8) | _stream[_at++];
        }
    }

    /// <summary>Reads <paramref name="bits"/> raw bits (0-64) written by <see cref="RansEncoder.AddBits"/>.</summary>
    public ulong Bits(int bits)
    {
        ulong value = 0;
        for (int shift = 0; bits > 0; )
        {
            int take = Math.Min(bits, Rans.MaxScaleBits);
            int slot = Peek(take);
            Advance(slot, 1, take);
            value |= (ulong)(uint)slot << shift;
            shift += take;
            bits -= take;
        }
        return value;
    }

    /// <summary>Checks that the stream was read exactly: every byte consumed, and the state back where the encoder started.</summary>
    public readonly void End()
    {
        if (_at != _stream.Length) StructureThrow.Corrupt($"Field stream: {_stream.Length - _at} bytes left after the last symbol.");
        if (_x != Rans.Low) StructureThrow.Corrupt("Field stream: the final state is not the encoder's initial state (the stream is damaged).");
    }

    /// <summary>
    /// As <see cref="End"/> for a stream written by <see cref="RansEncoder.EncodeFolded"/>: every byte consumed and the
    /// state in [<see cref="Rans.Low"/>, <see cref="Rans.FoldedLimit"/>); returns the value folded into it.
    /// </summary>
    public readonly ushort EndFolded()
    {
        if (_at != _stream.Length) StructureThrow.Corrupt($"Field stream: {_stream.Length - _at} bytes left after the last symbol.");
        if (_x >= Rans.FoldedLimit) StructureThrow.Corrupt("Field stream: the final state is not one an encoder starts from (the stream is damaged).");
        return (ushort)(_x - Rans.Low);
    }
}
