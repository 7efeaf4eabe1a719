namespace Compression.Testing.Couchbase;

/// <summary>A document as the loopback server stores it: body, flags and datatype as the client sent them, and the CAS it gave.</summary>
/// <param name="Key">The key, without the collection id a collections connection puts before it.</param>
/// <param name="Value">The body bytes.</param>
/// <param name="Flags">The 4 bytes of flags from the mutation's extras (big-endian on the wire).</param>
/// <param name="DataType">The datatype byte of the mutation's header.</param>
/// <param name="Cas">The CAS this server assigned (monotonic over the server's life, restarts included).</param>
/// <param name="Expiry">
/// When the document expires, in Unix seconds by the server's clock, as Couchbase Server keeps it: a relative expiry
/// (up to 30 days) is added to the time of the write, a collection's maximum TTL applies; 0 is none. Stored and
/// reported, <b>never enforced</b>.
/// </param>
/// <param name="CollectionId">The id of the collection the document is in (0: <c>_default._default</c>).</param>
/// <param name="Xattrs">
/// The document's extended attributes, a JSON object (one member per xattr key), or null for none: written and read by
/// sub-document commands on xattr paths only, never part of <paramref name="Value"/>. A full-document write keeps the
/// system xattrs (keys starting with <c>_</c>) and drops the user ones, as Couchbase Server does.
/// </param>
/// <param name="Deleted">
/// True for a tombstone: what a delete leaves (no body, the system xattrs kept), or a document created as deleted by a
/// transaction (xattrs only). Plain reads do not see it; sub-document commands with the access-deleted flag do.
/// </param>
public sealed record KvDocument(string Key, ReadOnlyMemory<byte> Value, uint Flags, byte DataType, ulong Cas, uint Expiry, uint CollectionId = 0, string? Xattrs = null, bool Deleted = false);

/// <summary>One command the server received: the opcode, its name, the status answered, and the connection it came on.</summary>
public readonly record struct KvCommand(byte Opcode, string Name, ushort Status, long ConnectionId);

/// <summary>A command the server does not implement, answered with status 0x81 (unknown command).</summary>
public readonly record struct KvUnknownCommand(byte Opcode, string Name, string Key, long ConnectionId);
