using System.Text.Json;

namespace Compression.Testing.Couchbase;

/// <summary>
/// The configs GET_CLUSTER_CONFIG returns: before SELECT_BUCKET the global (GCCCP) config, nodes only, as Couchbase
/// Server 6.5 and later do; after it the CCCP bucket config, one node holding all 1024 vBuckets, with the
/// <c>collections</c> capability when the server plays 7.x.
/// </summary>
internal static class KvBucketConfig
{
    public const int VBucketCount = 1024;

    public static byte[] BuildGlobal(int kvPort, int? managementPort)
    {
        using var buffer = new MemoryStream();
        using (var json = new Utf8JsonWriter(buffer))
        {
            json.WriteStartObject();
            json.WriteNumber("rev", 1);
            json.WriteNumber("revEpoch", 1);
            WriteNodesExt(json, kvPort, managementPort);
            json.WriteEndObject();
        }

        return buffer.ToArray();
    }

    public static byte[] Build(string bucket, string uuid, int kvPort, int? managementPort, bool collections, int replicas = 0, bool reviveDocument = true)
    {
        using var buffer = new MemoryStream();
        using (var json = new Utf8JsonWriter(buffer))
        {
            json.WriteStartObject();
            json.WriteNumber("rev", 1);
            json.WriteNumber("revEpoch", 1);
            json.WriteString("name", bucket);
            json.WriteString("uuid", uuid);
            json.WriteString("nodeLocator", "vbucket");
            json.WriteString("bucketCapabilitiesVer", "");
            json.WriteStartArray("bucketCapabilities");
            // "collections" (a 7.x server): the SDK then fetches the manifest and every collection's id. Without it the SDK
            // uses the default collection without collection ids or a manifest.
            // "rangeScan": KV range scans (RANGE_SCAN_CREATE/CONTINUE/CANCEL), as Couchbase Server 7.6 and later advertise.
            // "xattr" and "subdoc.ReplicaRead" (7.6): extended attributes, and sub-document lookups on replicas (GET_REPLICA's xattr kin).
            foreach (string capability in new[] { "cbhello", "touch", "cccp", "xdcrCheckpointing", "nodesExt", "rangeScan", "xattr", "subdoc.ReplicaRead" })
            {
                json.WriteStringValue(capability);
            }

            if (collections)
            {
                json.WriteStringValue("collections");
            }

            // Tombstones that keep xattrs (sub-document create-as-deleted, access-deleted), which SDK 3.x checks before it
            // sends create-as-deleted, and revive, which its transactions check to commit with REPLACE_BODY_WITH_XATTR.
            json.WriteStringValue("tombstonedUserXAttrs");
            json.WriteStringValue("subdoc.AccessDeleted");
            if (reviveDocument)
            {
                json.WriteStringValue("subdoc.ReplaceBodyWithXattr");
                json.WriteStringValue("subdoc.ReviveDocument");
            }

            json.WriteEndArray();
            // The legacy "nodes" list too: SDK 3.9.5 pairs it with nodesExt and, for a bucket config, treats a node
            // missing from it as not serving KV yet (kv port 0), so bucket bootstrap would find no node for the endpoint.
            json.WriteStartArray("nodes");
            json.WriteStartObject();
            json.WriteString("couchApiBase", $"http://127.0.0.1:8092/{Uri.EscapeDataString(bucket)}%2B{uuid}");
            json.WriteString("hostname", $"127.0.0.1:{managementPort ?? 8091}");
            json.WriteStartObject("ports");
            json.WriteNumber("direct", kvPort);
            json.WriteEndObject();
            json.WriteEndObject();
            json.WriteEndArray();
            WriteNodesExt(json, kvPort, managementPort);
            json.WriteStartObject("vBucketServerMap");
            json.WriteString("hashAlgorithm", "CRC");
            json.WriteNumber("numReplicas", replicas);
            json.WriteStartArray("serverList");
            json.WriteStringValue($"127.0.0.1:{kvPort}");
            json.WriteEndArray();
            json.WriteStartArray("vBucketMap");
            for (int i = 0; i < VBucketCount; i++)
            {
                json.WriteStartArray();
                json.WriteNumberValue(0);
                for (int r = 0; r < replicas; r++)
                {
                    json.WriteNumberValue(0); // every replica on this one node too: replica reads come here
                }

                json.WriteEndArray();
            }

            json.WriteEndArray();
            json.WriteEndObject();
            json.WriteEndObject();
        }

        return buffer.ToArray();
    }

    private static void WriteNodesExt(Utf8JsonWriter json, int kvPort, int? managementPort)
    {
        json.WriteStartArray("nodesExt");
        json.WriteStartObject();
        json.WriteStartObject("services");
        json.WriteNumber("kv", kvPort);
        if (managementPort is int mgmt)
        {
            json.WriteNumber("mgmt", mgmt);
        }

        json.WriteEndObject();
        json.WriteBoolean("thisNode", true);
        json.WriteString("hostname", "127.0.0.1");
        json.WriteEndObject();
        json.WriteEndArray();
    }
}
