namespace Compression.Testing.Couchbase;

/// <summary>Settings of a <see cref="CouchbaseLoopbackServer"/>.</summary>
public sealed class CouchbaseLoopbackServerOptions
{
    /// <summary>The one user SASL accepts.</summary>
    public string Username { get; init; } = "Administrator";

    /// <summary>That user's password; SCRAM proofs are checked against it.</summary>
    public string Password { get; init; } = "password";

    /// <summary>The one bucket SELECT_BUCKET accepts and the cluster config describes.</summary>
    public string BucketName { get; init; } = "default";

    /// <summary>KV port on 127.0.0.1; 0 picks a free port (kept across <see cref="CouchbaseLoopbackServer.StopAsync"/>/<see cref="CouchbaseLoopbackServer.StartAsync()"/>).</summary>
    public int Port { get; init; }

    /// <summary>Mechanisms SASL_LIST_MECHS offers, in order; any of SCRAM-SHA512, SCRAM-SHA256, SCRAM-SHA1.</summary>
    public IReadOnlyList<string> SaslMechanisms { get; init; } = ["SCRAM-SHA512", "SCRAM-SHA256", "SCRAM-SHA1"];

    /// <summary>PBKDF2 iterations in the SCRAM exchange (Couchbase Server uses 15,000; tests need not pay for that).</summary>
    public int ScramIterations { get; init; } = 4096;

    /// <summary>
    /// The management (HTTP) service's port on 127.0.0.1, advertised in the cluster config (<c>nodesExt</c>
    /// <c>mgmt</c>): 0 (the default) a free one, kept across restarts; null: no management service, and none advertised.
    /// It answers what SDK 3.x's bucket and collection managers ask about the bucket (README, "Management").
    /// </summary>
    public int? ManagementPort { get; init; } = 0;

    /// <summary>Whether the management service answers this server's user (false: 403 to everything, as for a user whose roles do not reach the bucket's settings).</summary>
    public bool ManagementAccess { get; init; } = true;

    /// <summary>The bucket's type as the management API names it: <c>membase</c> (a Couchbase bucket, the default) or <c>ephemeral</c>.</summary>
    public string BucketType { get; init; } = "membase";

    /// <summary>
    /// The bucket's eviction policy as the management API names it: <c>valueOnly</c> (the default) or <c>fullEviction</c>
    /// for a Couchbase bucket, <c>noEviction</c> or <c>nruEviction</c> for an ephemeral one. Reported only: nothing is evicted.
    /// </summary>
    public string EvictionPolicy { get; init; } = "valueOnly";

    /// <summary>
    /// The bucket's maximum TTL (whole seconds): a document written into a collection without a maximum TTL of its own,
    /// with no expiry or a later one, expires this long after it was written, as on Couchbase Server. Null: none.
    /// </summary>
    public TimeSpan? BucketMaxTtl { get; init; }

    /// <summary>
    /// Whether HELLO acknowledges alternate requests (flexible framing), PRESERVE_TTL and collections, as Couchbase
    /// Server 7.0 and later do; false plays an older server, which a client must not ask to keep a document's expiry
    /// and which has no collections (no <c>collections</c> bucket capability, every key in the default keyspace).
    /// </summary>
    public bool PreserveTtl { get; init; } = true;

    /// <summary>
    /// Whether HELLO acknowledges unordered execution (0x0e), as Couchbase Server does and SDK 3.x asks by default: then
    /// the replies to pipelined reorderable requests (GET, SET, DELETE, ...) go out last first. False answers every
    /// request in order, as a server must for a client that did not ask.
    /// </summary>
    public bool UnorderedExecution { get; init; } = true;

    /// <summary>
    /// The bucket's scopes and collections besides <c>_default._default</c>, which every bucket has: empty (the
    /// default) is a fresh bucket. Ids are given in order, as Couchbase Server gives them to scopes and collections
    /// created one after the other: scopes from 8, collections from 8 (0 to 7 are reserved), and the manifest uid counts
    /// the creations. Needs <see cref="PreserveTtl"/> (a server older than 7.0 has no collections).
    /// </summary>
    public IReadOnlyList<KvCollectionDefinition> Collections { get; init; } = [];

    /// <summary>
    /// The server's clock: it turns a relative expiry into the absolute time a document keeps, and gives a document
    /// written into a collection with a maximum TTL its expiry. Tests pass a fake one.
    /// </summary>
    public TimeProvider Clock { get; init; } = TimeProvider.System;

    /// <summary>
    /// The replicas the bucket config advertises (<c>numReplicas</c>), 0 to 3. This one node holds them all: every
    /// vBucket's replicas map to node 0, so the SDK sends its replica reads (GET_REPLICA) here, and they are answered
    /// from the active copy: a replica is never behind, never missing, never different. With 0 (the default) GET_REPLICA
    /// is NOT_MY_VBUCKET, as on a node that holds no replica.
    /// </summary>
    public int Replicas { get; init; }

    /// <summary>
    /// Whether the bucket config advertises <c>subdoc.ReviveDocument</c> and the server accepts the revive doc flag
    /// (0x10), as Couchbase Server 7.1 and later do: SDK 3.x's transactions then commit a staged insert or replace with
    /// REPLACE_BODY_WITH_XATTR (and revive a staged insert's tombstone). False plays an older server: the flag is refused
    /// (0x04) and the SDK commits with INSERT and a sub-document whole-body SET instead.
    /// </summary>
    public bool ReviveDocument { get; init; } = true;

    /// <summary>Receives one line per notable event (connections, unknown commands, protocol and auth failures).</summary>
    public Action<string>? Log { get; init; }

    /// <summary>How many commands <see cref="CouchbaseLoopbackServer.Commands"/> keeps (the first ones); counts go on.</summary>
    public int CommandLogCapacity { get; init; } = 10_000;
}
