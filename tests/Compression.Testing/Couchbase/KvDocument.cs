namespace Compression.Testing.Couchbase;

/// <summary>A document as the loopback server stores it: body, flags and datatype as the client sent them, and the CAS it gave.</summary>
/// <param name="Key">The key (default collection; no collection id).</param>
/// <param name="Value">The body bytes.</param>
/// <param name="Flags">The 4 bytes of flags from the mutation's extras (big-endian on the wire).</param>
/// <param name="DataType">The datatype byte of the mutation's header.</param>
/// <param name="Cas">The CAS this server assigned (monotonic over the server's life, restarts included).</param>
/// <param name="Expiry">The expiry the client asked for; stored and reported, never enforced.</param>
public sealed record KvDocument(string Key, ReadOnlyMemory<byte> Value, uint Flags, byte DataType, ulong Cas, uint Expiry);

/// <summary>One command the server received: the opcode, its name, the status answered, and the connection it came on.</summary>
public readonly record struct KvCommand(byte Opcode, string Name, ushort Status, long ConnectionId);

/// <summary>A command the server does not implement, answered with status 0x81 (unknown command).</summary>
public readonly record struct KvUnknownCommand(byte Opcode, string Name, string Key, long ConnectionId);
