using System.Buffers.Binary;
using System.Text;
using System.Text.Json.Nodes;

namespace Compression.Testing.Couchbase;

/// <summary>
/// SUBDOC_MULTI_LOOKUP (0xd0) and SUBDOC_MULTI_MUTATION (0xd1) on <b>extended attributes only</b>, as kv_engine's
/// docs/SubDocument.md and docs/ExtendedAttributes.md describe them. A spec on a body path (no xattr flag) makes the whole
/// command 0x81, recorded as an unknown command: this double does not look into bodies.
/// </summary>
public sealed partial class CouchbaseLoopbackServer
{
    private const byte XattrPathFlag = 0x04;
    private const byte CreatePathFlag = 0x01;
    private const byte ExpandMacrosFlag = 0x10;
    private const byte DocFlagMkdoc = 0x01;
    private const byte DocFlagAdd = 0x02;
    private const byte DocFlagAccessDeleted = 0x04;
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
        ["CAS"] = $"0x{document.Cas:x16}",
        ["vbucket_uuid"] = "0x0000000000000000",
        ["seqno"] = $"0x{document.Cas:x16}",
        ["revid"] = document.Cas.ToString(System.Globalization.CultureInfo.InvariantCulture),
        ["exptime"] = document.Expiry,
        ["value_bytes"] = document.Value.Length,
        ["datatype"] = (document.DataType & KvProtocol.JsonDataType) != 0 ? new JsonArray("json") : new JsonArray("raw"),
        ["deleted"] = false,
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
                if ((spec.Flags & XattrPathFlag) == 0) return SubdocNotImplemented(request, key.Key, $"a body path ('{spec.Path}', opcode 0x{spec.Opcode:x2})");
                if (spec.Opcode is not (0xc5 or 0xc6 or 0xd2)) return SubdocNotImplemented(request, key.Key, $"lookup opcode 0x{spec.Opcode:x2}");
            }

            KvDocument? document;
            lock (server._documentsLock)
            {
                document = server._documents.GetValueOrDefault(key);
            }

            if (document is null) return Reply(request, KvProtocol.Status.KeyNotFound);
            JsonObject xattrs = document.Xattrs is null ? [] : JsonNode.Parse(document.Xattrs)!.AsObject();
            using var reply = new MemoryStream();
            bool failed = false;
            Span<byte> head = stackalloc byte[6];
            foreach (Spec spec in specs)
            {
                ushort status = LookupOne(spec, document, xattrs, out byte[] value);
                failed |= status != KvProtocol.Status.Success;
                BinaryPrimitives.WriteUInt16BigEndian(head, status);
                BinaryPrimitives.WriteUInt32BigEndian(head[2..], (uint)value.Length);
                reply.Write(head);
                reply.Write(value);
            }

            return Reply(request, failed ? KvProtocol.Status.SubdocMultiPathFailure : KvProtocol.Status.Success, document.Cas, value: reply.ToArray());
        }

        private static ushort LookupOne(Spec spec, KvDocument document, JsonObject xattrs, out byte[] value)
        {
            value = [];
            List<object>? path = ParsePath(spec.Path);
            if (path is null || path[0] is not string root) return KvProtocol.Status.SubdocPathInvalid;
            JsonNode? node;
            if (root.StartsWith('$'))
            {
                if (root != "$document") return KvProtocol.Status.SubdocXattrUnknownVattr;
                node = DocumentVattr(document);
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

        /// <summary>
        /// SUBDOC_MULTI_MUTATION: extras none, 1 (doc flags), 4 (expiry) or 5 (expiry, doc flags), as SDK 3.9.5 writes
        /// them; doc flags mkdoc (0x01: create the document, body <c>{}</c>, when missing) and add (0x02: only when missing);
        /// specs of opcode, flags, path length, value length, path, value, all on xattr paths under one xattr key
        /// (else 0xcf): DICT_ADD, DICT_UPSERT, DELETE, REPLACE, ARRAY_PUSH_LAST/FIRST, ARRAY_ADD_UNIQUE, COUNTER, with
        /// create-path (0x01). All or nothing: the first failing spec makes the reply 0xcc with its index and status.
        /// The body is never touched; the document gets a new CAS and the request's expiry (none without extras, as
        /// the server clears it, unless PRESERVE_TTL). Locks and CAS as on SET. Macro expansion, access-deleted,
        /// create-as-deleted and revive (transactions) are refused 0x04: no tombstones here.
        /// </summary>
        private byte[] MultiMutation(KvProtocol.RequestHeader request, DocumentKey key, bool preserveTtl, bool durable, ReadOnlySpan<byte> extras, ReadOnlySpan<byte> body)
        {
            uint expiry = 0;
            byte docFlags = 0;
            switch (extras.Length)
            {
                case 0: break;
                case 1: docFlags = extras[0]; break;
                case 4: expiry = BinaryPrimitives.ReadUInt32BigEndian(extras); break;
                case 5: expiry = BinaryPrimitives.ReadUInt32BigEndian(extras); docFlags = extras[4]; break;
                default: return Error(request, KvProtocol.Status.InvalidArguments, "SUBDOC_MULTI_MUTATION takes 0, 1, 4 or 5 bytes of extras");
            }

            if ((docFlags & ~(DocFlagMkdoc | DocFlagAdd)) != 0)
            {
                return Error(request, KvProtocol.Status.InvalidArguments, $"doc flags 0x{docFlags:x2}: only mkdoc (0x01) and add (0x02) are implemented by this test double (no tombstones: no access-deleted, create-as-deleted or revive)");
            }

            if (!TryReadSpecs(body, mutation: true, out List<Spec> specs)) return Error(request, KvProtocol.Status.InvalidArguments, "malformed mutation specs (1 to 16)");
            string? xattrKey = null;
            foreach (Spec spec in specs)
            {
                if ((spec.Flags & XattrPathFlag) == 0) return SubdocNotImplemented(request, key.Key, $"a body path ('{spec.Path}', opcode 0x{spec.Opcode:x2})");
                if (spec.Opcode is not (0xc7 or 0xc8 or 0xc9 or 0xca or 0xcb or 0xcc or 0xce or 0xcf)) return SubdocNotImplemented(request, key.Key, $"mutation opcode 0x{spec.Opcode:x2}");
                if ((spec.Flags & ExpandMacrosFlag) != 0) return Error(request, KvProtocol.Status.InvalidArguments, "macro expansion (path flag 0x10) is not implemented by this test double");
                string root = ParsePath(spec.Path) is [string first, ..] ? first : "";
                xattrKey ??= root;
                if (root != xattrKey) return Reply(request, KvProtocol.Status.SubdocXattrInvalidKeyCombo);
            }

            lock (server._documentsLock)
            {
                KvDocument? current = server._documents.GetValueOrDefault(key);
                if (current is null && (docFlags & (DocFlagMkdoc | DocFlagAdd)) == 0) return Reply(request, KvProtocol.Status.KeyNotFound);
                if (current is not null && (docFlags & DocFlagAdd) != 0) return Reply(request, KvProtocol.Status.KeyExists);
                if (current is not null && server.IsLocked(key))
                {
                    if (request.Cas != current.Cas) return Locked(request);
                    server._locks.Remove(key);
                }

                if (request.Cas != 0 && (current is null || current.Cas != request.Cas)) return Reply(request, current is null ? KvProtocol.Status.KeyNotFound : KvProtocol.Status.KeyExists);
                JsonObject xattrs = current?.Xattrs is null ? [] : JsonNode.Parse(current.Xattrs)!.AsObject();
                using var results = new MemoryStream();
                Span<byte> failure = stackalloc byte[3];
                Span<byte> head = stackalloc byte[7];
                for (int i = 0; i < specs.Count; i++)
                {
                    ushort status = MutateOne(specs[i], xattrs, out byte[]? result);
                    if (status != KvProtocol.Status.Success)
                    {
                        failure[0] = (byte)i;
                        BinaryPrimitives.WriteUInt16BigEndian(failure[1..], status);
                        return Reply(request, KvProtocol.Status.SubdocMultiPathFailure, value: failure);
                    }

                    if (result is not null)
                    {
                        head[0] = (byte)i;
                        BinaryPrimitives.WriteUInt16BigEndian(head[1..], KvProtocol.Status.Success);
                        BinaryPrimitives.WriteUInt32BigEndian(head[3..], (uint)result.Length);
                        results.Write(head);
                        results.Write(result);
                    }
                }

                uint keptExpiry = preserveTtl && current is not null ? current.Expiry : server.ExpiryOnWrite(expiry, server._manifest.Find(key.CollectionId)!);
                KvDocument document = (current ?? new KvDocument(key.Key, "{}"u8.ToArray(), 0, _json ? KvProtocol.JsonDataType : (byte)0, 0, 0, key.CollectionId)) with
                {
                    Cas = server.NextCas(),
                    Expiry = keptExpiry,
                    Xattrs = xattrs.Count == 0 ? null : xattrs.ToJsonString(),
                };
                server._documents[key] = document;
                if (durable) server._durable[key] = document;
                return Reply(request, KvProtocol.Status.Success, document.Cas, value: results.ToArray());
            }
        }

        private static ushort MutateOne(Spec spec, JsonObject xattrs, out byte[]? result)
        {
            result = null;
            List<object>? path = ParsePath(spec.Path);
            if (path is null || path[0] is not string root) return KvProtocol.Status.SubdocPathInvalid;
            if (root.StartsWith('$')) return KvProtocol.Status.SubdocXattrCantModifyVattr;
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
