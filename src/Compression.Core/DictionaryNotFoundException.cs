namespace Compression;

/// <summary>
/// Thrown when an envelope references a zstd dictionary that the reader cannot find. The data may well be intact:
/// the dictionary must be made available (this library never deletes one automatically). Corrupt data, by contrast,
/// is reported as <see cref="InvalidDataException"/>.
/// </summary>
public sealed class DictionaryNotFoundException : Exception
{
    /// <summary>Creates the exception for a dictionary id and, when known, its namespace.</summary>
    public DictionaryNotFoundException(uint dictionaryId, string? dictionaryNamespace, string? detail = null, Exception? innerException = null)
        : base(FormatMessage(dictionaryId, dictionaryNamespace, detail), innerException)
    {
        DictionaryId = dictionaryId;
        Namespace = dictionaryNamespace;
    }

    /// <summary>Creates the exception with a message.</summary>
    public DictionaryNotFoundException(string message) : base(message) { }

    /// <summary>Creates the exception with a message and an inner exception.</summary>
    public DictionaryNotFoundException(string message, Exception? innerException) : base(message, innerException) { }

    /// <summary>Creates the exception with a default message.</summary>
    public DictionaryNotFoundException() : base("A zstd dictionary referenced by the envelope was not found.") { }

    /// <summary>The dictionary id the envelope references.</summary>
    public uint DictionaryId { get; }

    /// <summary>The namespace the dictionary was looked up in, when known.</summary>
    public string? Namespace { get; }

    private static string FormatMessage(uint id, string? ns, string? detail) =>
        $"Zstd dictionary {id} was not found{(ns is null ? "" : $" in namespace '{ns}'")}{(detail is null ? "." : $": {detail}.")}";
}
