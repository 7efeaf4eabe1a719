using System.Text.Json;

namespace Compression.Testing.Couchbase;

/// <summary>The CCCP bucket config GET_CLUSTER_CONFIG returns once a bucket is selected: one node holding all 1024 vBuckets.</summary>
internal static class KvBucketConfig
{
    public const int VBucketCount = 1024;

    public static byte[] Build(string bucket, string uuid, int kvPort, int? managementPort)
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
            // No "collections": the SDK then uses the default collection without collection ids or a manifest.
            foreach (string capability in new[] { "cbhello", "touch", "cccp", "xdcrCheckpointing", "nodesExt" })
            {
                json.WriteStringValue(capability);
            }

            json.WriteEndArray();
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
            json.WriteStartObject("vBucketServerMap");
            json.WriteString("hashAlgorithm", "CRC");
            json.WriteNumber("numReplicas", 0);
            json.WriteStartArray("serverList");
            json.WriteStringValue($"127.0.0.1:{kvPort}");
            json.WriteEndArray();
            json.WriteStartArray("vBucketMap");
            for (int i = 0; i < VBucketCount; i++)
            {
                json.WriteStartArray();
                json.WriteNumberValue(0);
                json.WriteEndArray();
            }

            json.WriteEndArray();
            json.WriteEndObject();
            json.WriteEndObject();
        }

        return buffer.ToArray();
    }
}
