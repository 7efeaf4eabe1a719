using System.Buffers.Binary;
using System.Text;
using System.Text.Json.Nodes;

namespace Compression.Testing.Couchbase;

/// <summary>
/// SUBDOC_MULTI_LOOKUP (0xd0) and SUBDOC_MULTI_MUTATION (0xd1) on <b>extended attributes and whole bodies only</b>, as
/// kv_engine's docs/SubDocument.md and docs/ExtendedAttributes.md describe them (the mutation itself is in
/// CouchbaseLoopbackServer.SubDocumentMutation.cs, tombstones and macros in CouchbaseLoopbackServer.Tombstones.cs). A spec
/// on a path into a body makes the whole command 0x81, recorded as an unknown command: this double does not look into bodies.
/// </summary>
public sealed partial class CouchbaseLoopbackServer
{
    private const byte XattrPathFlag = 0x04;
    private const byte CreatePathFlag = 0x01;
    private const byte ExpandMacrosFlag = 0x10;
    private const byte DocFlagMkdoc = 0x01;
    private const byte DocFlagAdd = 0x02;
    private const byte DocFlagAccessDeleted = 0x04;
    private const byte DocFlagCreateAsDeleted = 0x08;
    private const byte DocFlagReviveDocument = 0x10;
    private const byte DocFlagReplicaRead = 0x20;

    /// <summary>What a full-document write keeps of a document's xattrs: the system ones (keys starting with <c>_</c>).</summary>
    private static string? SystemXattrs(string? xattrs)
    {
        if (xattrs is null) return null;
        var all = JsonNode.Parse(xattrs)!.AsObject();
        var kept = new JsonObject();
        foreach ((string name, JsonNode? value) in all)
        {
            if (name.StartsWith('_')) kept[name] = value?.DeepClone();
        }

        return kept.Count == 0 ? null : kept.ToJsonString();
    }

    /// <summary>
    /// A sub-document path: members separated by dots (a name in backticks may hold dots; a doubled backtick is one),
    /// array elements as <c>[n]</c> (-1: the last). Null when it does not parse.
    /// </summary>
    private static List<object>? ParsePath(string path)
    {
        var parts = new List<object>();
        int i = 0;
        while (i < path.Length)
        {
            if (path[i] == '[')
            {
                int close = path.IndexOf(']', i);
                if (close < 0 || !int.TryParse(path.AsSpan(i + 1, close - i - 1), System.Globalization.NumberStyles.AllowLeadingSign, System.Globalization.CultureInfo.InvariantCulture, out int index) || index < -1) return null;
                parts.Add(index);
                i = close + 1;
            }
            else
            {
                if (parts.Count > 0)
                {
                    if (path[i] != '.') return null;
                    i++;
                }

                var name = new StringBuilder();
                if (i < path.Length && path[i] == '`')
                {
                    i++;
                    while (true)
                    {
                        if (i >= path.Length) return null;
                        if (path[i] == '`')
                        {
                            if (i + 1 < path.Length && path[i + 1] == '`') { name.Append('`'); i += 2; continue; }
                            i++;
                            break;
                        }

                        name.Append(path[i++]);
                    }
                }
                else
                {
                    while (i < path.Length && path[i] is not ('.' or '[')) name.Append(path[i++]);
                }

                if (name.Length == 0) return null;
                parts.Add(name.ToString());
            }

            if (i < path.Length && path[i] is not ('.' or '[')) return null;
        }

        return parts.Count == 0 ? null : parts;
    }

    /// <summary>The <c>$document</c> virtual xattr, as kv_engine builds it (the fields this double can know).</summary>
    private static JsonObject DocumentVattr(KvDocument document) => new()
    {
        ["value_crc32c"] = Crc32CHex(document.Value.Span),
        ["CAS"] = $"0x{document.Cas:x16}",
        ["vbucket_uuid"] = "0x0000000000000000",
        ["seqno"] = $"0x{document.Cas:x16}",
        ["revid"] = document.Cas.ToString(System.Globalization.CultureInfo.InvariantCulture),
        ["exptime"] = document.Expiry,
        ["value_bytes"] = document.Value.Length,
        ["datatype"] = (document.DataType & KvProtocol.JsonDataType) != 0 ? new JsonArray("json") : new JsonArray("raw"),
        ["deleted"] = document.Deleted,
        ["flags"] = document.Flags,
        ["last_modified"] = (document.Cas >> 16 >> 10).ToString(System.Globalization.CultureInfo.InvariantCulture),
    };

    private sealed partial class Connection
    {
        private readonly record struct Spec(byte Opcode, byte Flags, string Path, byte[] Value);

        private static bool TryReadSpecs(ReadOnlySpan<byte> body, bool mutation, out List<Spec> specs)
        {
            specs = [];
            int header = mutation ? 8 : 4;
            while (!body.IsEmpty)
            {
                if (body.Length < header) return false;
                byte opcode = body[0];
                byte flags = body[1];
                int pathLength = BinaryPrimitives.ReadUInt16BigEndian(body[2..]);
                int valueLength = mutation ? (int)BinaryPrimitives.ReadUInt32BigEndian(body[4..]) : 0;
                if (valueLength < 0 || body.Length < header + pathLength + valueLength) return false;
                string path = Encoding.UTF8.GetString(body.Slice(header, pathLength));
                byte[] value = body.Slice(header + pathLength, valueLength).ToArray();
                specs.Add(new Spec(opcode, flags, path, value));
                body = body[(header + pathLength + valueLength)..];
            }

            return specs.Count is > 0 and <= 16;
        }

        /// <summary>Answers a sub-document command this double does not implement: 0x81, recorded and logged, never guessed.</summary>
        private byte[] SubdocNotImplemented(KvProtocol.RequestHeader request, string key, string what)
        {
            string name = KvProtocol.OpcodeName(request.Opcode);
            server._unknownCommands.Enqueue(new KvUnknownCommand(request.Opcode, name, key, id));
            server.Log($"UNKNOWN COMMAND {name} (opcode 0x{request.Opcode:x2}) on connection {id}, key \"{key}\": {what}; answered 0x81");
            return Error(request, KvProtocol.Status.UnknownCommand, $"{name}: {what} is not implemented by the Couchbase loopback test server (xattr paths only)");
        }

        /// <summary>
        /// SUBDOC_MULTI_LOOKUP: extras none or 1 byte of doc flags (access-deleted 0x04, replica read 0x20 when the bucket
        /// has replicas); specs of opcode, flags, path length and path. GET (0xc5), EXISTS (0xc6) and GET_COUNT (0xd2) on
        /// xattr paths, <c>$document</c> among them; the reply is, per spec, a status (2 bytes), a length (4) and a value;
        /// overall success, or 0xcc (multi-path failure) when any spec failed.
        /// </summary>
        private byte[] MultiLookup(KvProtocol.RequestHeader request, DocumentKey key, ReadOnlySpan<byte> extras, ReadOnlySpan<byte> body)
        {
            if (extras.Length > 1) return Error(request, KvProtocol.Status.InvalidArguments, "SUBDOC_MULTI_LOOKUP takes no extras or 1 byte of doc flags");
            byte docFlags = extras.Length == 1 ? extras[0] : (byte)0;
            if ((docFlags & ~(DocFlagAccessDeleted | DocFlagReplicaRead)) != 0) return Error(request, KvProtocol.Status.InvalidArguments, $"doc flags 0x{docFlags:x2} on a lookup");
            if ((docFlags & DocFlagReplicaRead) != 0 && server._options.Replicas == 0) return Reply(request, KvProtocol.Status.NotMyVBucket);
            if (!TryReadSpecs(body, mutation: false, out List<Spec> specs)) return Error(request, KvProtocol.Status.InvalidArguments, "malformed lookup specs (1 to 16)");
            foreach (Spec spec in specs)
            {
                if (spec.Opcode == KvProtocol.Opcodes.Get && (spec.Flags & XattrPathFlag) == 0 && spec.Path.Length == 0) continue; // the whole body
                if ((spec.Flags & XattrPathFlag) == 0) return SubdocNotImplemented(request, key.Key, $"a body path ('{spec.Path}', opcode 0x{spec.Opcode:x2})");
                if (spec.Opcode is not (0xc5 or 0xc6 or 0xd2)) return SubdocNotImplemented(request, key.Key, $"lookup opcode 0x{spec.Opcode:x2}");
            }

            KvDocument? document;
            JsonObject vbucket;
            lock (server._documentsLock)
            {
                document = server._documents.GetValueOrDefault(key);
                if (document is null && (docFlags & DocFlagAccessDeleted) != 0) document = server._tombstones.GetValueOrDefault(key);
                vbucket = server.VBucketVattr();
            }

            if (document is null) return Reply(request, KvProtocol.Status.KeyNotFound);
            JsonObject xattrs = document.Xattrs is null ? [] : JsonNode.Parse(document.Xattrs)!.AsObject();
            using var reply = new MemoryStream();
            bool failed = false;
            Span<byte> head = stackalloc byte[6];
            foreach (Spec spec in specs)
            {
                ushort status = LookupOne(spec, document, xattrs, vbucket, out byte[] value);
                failed |= status != KvProtocol.Status.Success;
                BinaryPrimitives.WriteUInt16BigEndian(head, status);
                BinaryPrimitives.WriteUInt32BigEndian(head[2..], (uint)value.Length);
                reply.Write(head);
                reply.Write(value);
            }

            ushort overall = (failed, document.Deleted) switch
            {
                (false, false) => KvProtocol.Status.Success,
                (true, false) => KvProtocol.Status.SubdocMultiPathFailure,
                (false, true) => KvProtocol.Status.SubdocSuccessDeleted,
                (true, true) => KvProtocol.Status.SubdocMultiPathFailureDeleted,
            };
            return Reply(request, overall, document.Cas, value: reply.ToArray());
        }

        private static ushort LookupOne(Spec spec, KvDocument document, JsonObject xattrs, JsonObject vbucket, out byte[] value)
        {
            value = [];
            if (spec.Opcode == KvProtocol.Opcodes.Get)
            {
                value = document.Value.ToArray(); // the whole body (none on a tombstone)
                return KvProtocol.Status.Success;
            }

            List<object>? path = ParsePath(spec.Path);
            if (path is null || path[0] is not string root) return KvProtocol.Status.SubdocPathInvalid;
            JsonNode? node;
            if (root.StartsWith('$'))
            {
                if (root == "$document") node = DocumentVattr(document);
                else if (root == "$vbucket") node = vbucket;
                else return KvProtocol.Status.SubdocXattrUnknownVattr;
            }
            else
            {
                node = xattrs;
            }

            ushort status = Navigate(node, root.StartsWith('$') ? path.Skip(1) : path, out JsonNode? found);
            if (status != KvProtocol.Status.Success) return status;
            switch (spec.Opcode)
            {
                case 0xc6: // EXISTS
                    return KvProtocol.Status.Success;
                case 0xd2: // GET_COUNT
                    int? count = found switch { JsonObject o => o.Count, JsonArray a => a.Count, _ => null };
                    if (count is null) return KvProtocol.Status.SubdocPathMismatch;
                    value = Encoding.UTF8.GetBytes(count.Value.ToString(System.Globalization.CultureInfo.InvariantCulture));
                    return KvProtocol.Status.Success;
                default:
                    value = Encoding.UTF8.GetBytes(found?.ToJsonString() ?? "null");
                    return KvProtocol.Status.Success;
            }
        }

        private static ushort Navigate(JsonNode? node, IEnumerable<object> path, out JsonNode? found)
        {
            found = node;
            foreach (object part in path)
            {
                switch (part, found)
                {
                    case (string name, JsonObject o):
                        if (!o.TryGetPropertyValue(name, out found)) return KvProtocol.Status.SubdocPathNotFound;
                        break;
                    case (int index, JsonArray a):
                        int at = index == -1 ? a.Count - 1 : index;
                        if (at < 0 || at >= a.Count) return KvProtocol.Status.SubdocPathNotFound;
                        found = a[at];
                        break;
                    default:
                        return KvProtocol.Status.SubdocPathMismatch;
                }
            }

            return KvProtocol.Status.Success;
        }

        private static ushort MutateOne(Spec spec, JsonObject xattrs, out byte[]? result)
        {
            result = null;
            List<object>? path = ParsePath(spec.Path);
            if (path is null || path[0] is not string root) return KvProtocol.Status.SubdocPathInvalid;
            if (root.StartsWith('$')) return KvProtocol.Status.SubdocXattrCantModifyVattr;

            // An xattr that does not exist yet is an empty object to a path below it (kv_engine operates on the xattr's
            // value, {} when absent): SDK 3.x creates its transactions' client record with DICT_ADD "records.clients"
            // and no create-path. All or nothing: a spec that then fails leaves nothing behind.
            if (path.Count > 1 && !xattrs.ContainsKey(root)) xattrs[root] = new JsonObject();
            JsonNode? value = null;
            if (spec.Opcode is not 0xc9)
            {
                try
                {
                    value = spec.Value.Length == 0 ? null : JsonNode.Parse(spec.Value);
                }
                catch (System.Text.Json.JsonException)
                {
                    return KvProtocol.Status.SubdocCannotInsert;
                }

                if (spec.Value.Length == 0) return KvProtocol.Status.SubdocCannotInsert;
            }

            // The parent of the last part, created on the way when the spec asks (create-path) and the op allows it.
            bool createPath = (spec.Flags & CreatePathFlag) != 0 && spec.Opcode is not (0xc9 or 0xca);
            JsonNode parent = xattrs;
            for (int i = 0; i < path.Count - 1; i++)
            {
                ushort status = Navigate(parent, [path[i]], out JsonNode? next);
                if (status == KvProtocol.Status.SubdocPathNotFound && createPath && path[i] is string name && parent is JsonObject o)
                {
                    next = path[i + 1] is int ? new JsonArray() : new JsonObject();
                    o[name] = next;
                }
                else if (status != KvProtocol.Status.Success)
                {
                    return status;
                }

                if (next is null) return KvProtocol.Status.SubdocPathMismatch;
                parent = next;
            }

            object last = path[^1];
            switch (spec.Opcode)
            {
                case 0xc7 or 0xc8: // DICT_ADD, DICT_UPSERT
                    if (last is not string member || parent is not JsonObject dict) return KvProtocol.Status.SubdocPathMismatch;
                    if (spec.Opcode == 0xc7 && dict.ContainsKey(member)) return KvProtocol.Status.SubdocPathExists;
                    dict[member] = value;
                    return KvProtocol.Status.Success;
                case 0xc9 or 0xca: // DELETE, REPLACE
                    if (Navigate(parent, [last], out _) is var found && found != KvProtocol.Status.Success) return found;
                    if (parent is JsonObject inObject)
                    {
                        if (spec.Opcode == 0xc9) inObject.Remove((string)last);
                        else inObject[(string)last] = value;
                    }
                    else if (parent is JsonArray inArray)
                    {
                        int at = (int)last == -1 ? inArray.Count - 1 : (int)last;
                        if (spec.Opcode == 0xc9) inArray.RemoveAt(at);
                        else inArray[at] = value;
                    }

                    return KvProtocol.Status.Success;
                case 0xcb or 0xcc or 0xce: // ARRAY_PUSH_LAST, ARRAY_PUSH_FIRST, ARRAY_ADD_UNIQUE: the path is the array
                    if (last is not string arrayName || parent is not JsonObject holder) return KvProtocol.Status.SubdocPathMismatch;
                    if (!holder.TryGetPropertyValue(arrayName, out JsonNode? existing))
                    {
                        if ((spec.Flags & CreatePathFlag) == 0) return KvProtocol.Status.SubdocPathNotFound;
                        existing = new JsonArray();
                        holder[arrayName] = existing;
                    }

                    if (existing is not JsonArray array) return KvProtocol.Status.SubdocPathMismatch;
                    if (spec.Opcode == 0xce)
                    {
                        if (value is JsonObject or JsonArray) return KvProtocol.Status.SubdocCannotInsert;
                        if (array.Any(e => JsonNode.DeepEquals(e, value))) return KvProtocol.Status.SubdocPathExists;
                    }

                    if (spec.Opcode == 0xcc) array.Insert(0, value);
                    else array.Add(value);
                    return KvProtocol.Status.Success;
                default: // COUNTER
                    if (last is not string counterName || parent is not JsonObject counters) return KvProtocol.Status.SubdocPathMismatch;
                    if (value is not JsonValue delta || !delta.TryGetValue(out long by) || by == 0) return KvProtocol.Status.SubdocDeltaInvalid;
                    long now = 0;
                    if (counters.TryGetPropertyValue(counterName, out JsonNode? held))
                    {
                        if (held is not JsonValue number || !number.TryGetValue(out now)) return KvProtocol.Status.SubdocPathMismatch;
                    }

                    now = checked(now + by);
                    counters[counterName] = now;
                    result = Encoding.UTF8.GetBytes(now.ToString(System.Globalization.CultureInfo.InvariantCulture));
                    return KvProtocol.Status.Success;
            }
        }
    }
}
