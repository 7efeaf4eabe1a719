namespace Compression;

/// <summary>
/// The envelope format a writer produces. Readers of this library read all three, whatever this says; the numeric value is
/// the version written in bits 4-5 of the header byte. See <c>docs/format.md</c>.
/// </summary>
public enum EnvelopeFormat
{
    /// <summary>
    /// Format v1 (version bits 0): zstd payloads are magicless frames, the checksum is a 4-byte XxHash32. Readable by
    /// every version of this library; choose it while readers older than format v2 remain.
    /// </summary>
    V1 = 0,

    /// <summary>
    /// Format v2 (version bits 1): a zstd document of up to 128 KiB is one raw zstd block (no frame header, no block
    /// header: 5 bytes fewer than v1), larger ones are frames as in v1; the checksum is the low 16 bits of the XxHash32
    /// (2 bytes fewer). Readers that know only v1 reject it with "Unknown envelope format version 1".
    /// </summary>
    V2 = 1,

    /// <summary>
    /// Format v3 (version bits 2): v2 with a faster checksum, the low 16 bits of the XxHash3 (64-bit, seed 0) of the
    /// document instead of the XxHash32's (about a third of the time on a 400-byte document). Everything else is v2's,
    /// byte for byte. Readers that know only v1 and v2 reject it with "Unknown envelope format version 2"; choose
    /// <see cref="V2"/> while such readers remain.
    /// </summary>
    V3 = 2,
}
