namespace Compression.Tool.Live;

/// <summary>What a stored document is, by its <c>_z</c> element.</summary>
internal enum StoredKind
{
    /// <summary>
    /// No <c>_z</c>, or a <c>_z</c> that is not BinData 0x80 or 0x81 (the application's own field): a plain document
    /// (written before compression, or while it was off).
    /// </summary>
    Plain,

    /// <summary><c>_z</c> is <c>BinData(0x81, envelope)</c> or <c>BinData(0x80, envelope)</c>.</summary>
    Compressed,
}
