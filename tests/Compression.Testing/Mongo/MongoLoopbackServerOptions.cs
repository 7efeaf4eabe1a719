namespace Compression.Testing.Mongo;

/// <summary>Settings of a <see cref="MongoLoopbackServer"/>.</summary>
public sealed class MongoLoopbackServerOptions
{
    /// <summary>The TCP port on 127.0.0.1.</summary>
    /// <value>0: a free port chosen by the system (kept across <see cref="MongoLoopbackServer.StopAsync"/> and a later start).</value>
    public int Port { get; init; }

    /// <summary>The <c>maxWireVersion</c> the handshake reports.</summary>
    /// <value>21 (MongoDB 7.0).</value>
    public int MaxWireVersion { get; init; } = 21;

    /// <summary>The version <c>buildInfo</c> reports.</summary>
    /// <value>"7.0.0".</value>
    public string ReportedVersion { get; init; } = "7.0.0";

    /// <summary>The OP_COMPRESSED compressors the handshake offers, by their handshake names (<c>snappy</c>,
    /// <c>zlib</c>, <c>zstd</c>; <c>noop</c> too, for tests). A client's <c>compression</c> list is answered with the
    /// ones of these it names, in its order. Empty: no compression, no <c>compression</c> field in the handshake reply,
    /// and any OP_COMPRESSED message refused.</summary>
    /// <value><c>["snappy", "zlib", "zstd"]</c> (what mongod offers by default).</value>
    public IReadOnlyList<string> Compressors { get; init; } = ["snappy", "zlib", "zstd"];
}
