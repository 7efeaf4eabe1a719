using System.Buffers.Binary;
using System.Text;
using System.Text.Json.Nodes;

namespace Compression.Testing.Couchbase;

/// <summary>
/// SUBDOC_MULTI_MUTATION (0xd1), as kv_engine's docs/SubDocument.md and its validators describe it, far enough for SDK
/// 3.x's distributed transactions: xattr specs, the whole-body specs (SET, DELETE, REPLACE_BODY_WITH_XATTR), macro
/// expansion and the tombstone doc flags.
/// </summary>
public sealed partial class CouchbaseLoopbackServer
{
    private const string CasMacro = "${Mutation.CAS}";
    private const string SeqnoMacro = "${Mutation.seqno}";
    private const string Crc32CMacro = "${Mutation.value_crc32c}";

    private sealed partial class Connection
    {
        /// <summary>
        /// SUBDOC_MULTI_MUTATION. Extras: none, 1 (doc flags), 4 (expiry), 5 (expiry, doc flags), 8 (expiry, user flags) or
        /// 9 (expiry, user flags, doc flags), as SDK 3.9.5 writes them (the user flags only when it thinks the server has
        /// binary xattrs, which this one does not acknowledge). Doc flags: mkdoc (0x01: create when missing, body
        /// <c>{}</c>), add (0x02: only when missing or deleted; CAS 0), access-deleted (0x04: a tombstone is operated on),
        /// create-as-deleted (0x08: what is created is a tombstone with the xattrs), revive (0x10, with access-deleted:
        /// the tombstone becomes a live document; on a live one 0xd6; refused 0x04 when
        /// <see cref="CouchbaseLoopbackServerOptions.ReviveDocument"/> is off). Specs, xattr ones first: on xattr paths
        /// under one xattr key (else 0xcf) DICT_ADD, DICT_UPSERT, DELETE, REPLACE, ARRAY_PUSH_LAST/FIRST,
        /// ARRAY_ADD_UNIQUE, COUNTER with create-path (0x01) and expand-macros (0x10: <c>"${Mutation.CAS}"</c>,
        /// <c>"${Mutation.seqno}"</c>, <c>"${Mutation.value_crc32c}"</c>, written once the mutation's CAS and body are
        /// known), REPLACE_BODY_WITH_XATTR (0xd3: the body becomes the xattr's value); on the body, with an empty path,
        /// SET (0x01: the whole body) and DELETE (0x04: the document becomes a tombstone). Any other body spec is 0x81.
        /// All or nothing: the first failing spec makes the reply 0xcc (0xd3 on a tombstone) with its index and status.
        /// The result gets a new CAS and the request's expiry (none without, unless PRESERVE_TTL); a result that is a
        /// tombstone is answered 0xcd (success, deleted). Locks and CAS as on SET.
        /// </summary>
        private byte[] MultiMutation(KvProtocol.RequestHeader request, DocumentKey key, bool preserveTtl, bool durable, ReadOnlySpan<byte> extras, ReadOnlySpan<byte> body)
        {
            uint expiry = 0;
            uint? userFlags = null;
            byte docFlags = 0;
            switch (extras.Length)
            {
                case 0: break;
                case 1: docFlags = extras[0]; break;
                case 4: expiry = BinaryPrimitives.ReadUInt32BigEndian(extras); break;
                case 5: expiry = BinaryPrimitives.ReadUInt32BigEndian(extras); docFlags = extras[4]; break;
                case 8: expiry = BinaryPrimitives.ReadUInt32BigEndian(extras); userFlags = BinaryPrimitives.ReadUInt32BigEndian(extras[4..]); break;
                case 9: expiry = BinaryPrimitives.ReadUInt32BigEndian(extras); userFlags = BinaryPrimitives.ReadUInt32BigEndian(extras[4..]); docFlags = extras[8]; break;
                default: return Error(request, KvProtocol.Status.InvalidArguments, "SUBDOC_MULTI_MUTATION takes 0, 1, 4, 5, 8 or 9 bytes of extras");
            }

            const byte known = DocFlagMkdoc | DocFlagAdd | DocFlagAccessDeleted | DocFlagCreateAsDeleted | DocFlagReviveDocument;
            if ((docFlags & ~known) != 0) return Error(request, KvProtocol.Status.InvalidArguments, $"doc flags 0x{docFlags:x2}: unknown flags");
            bool mkdoc = (docFlags & DocFlagMkdoc) != 0, add = (docFlags & DocFlagAdd) != 0, accessDeleted = (docFlags & DocFlagAccessDeleted) != 0;
            bool createAsDeleted = (docFlags & DocFlagCreateAsDeleted) != 0, revive = (docFlags & DocFlagReviveDocument) != 0;
            if (revive && !server._options.ReviveDocument) return Error(request, KvProtocol.Status.InvalidArguments, "doc flag revive (0x10): this server plays one without subdoc.ReviveDocument");
            if (mkdoc && add) return Error(request, KvProtocol.Status.InvalidArguments, "Request must not contain both add and mkdoc flags");
            if (add && request.Cas != 0) return Error(request, KvProtocol.Status.InvalidArguments, "Request with add flag must have CAS 0");
            if (revive && !accessDeleted) return Error(request, KvProtocol.Status.InvalidArguments, "ReviveDocument can't be used without AccessDeleted");
            if (revive && createAsDeleted) return Error(request, KvProtocol.Status.InvalidArguments, "ReviveDocument can't be used with CreateAsDeleted");

            if (!TryReadSpecs(body, mutation: true, out List<Spec> specs)) return Error(request, KvProtocol.Status.InvalidArguments, "malformed mutation specs (1 to 16)");
            string? xattrKey = null;
            bool bodySeen = false;
            foreach (Spec spec in specs)
            {
                bool xattr = (spec.Flags & XattrPathFlag) != 0;
                if (!xattr)
                {
                    if (spec.Opcode is not (KvProtocol.Opcodes.Set or KvProtocol.Opcodes.Delete) || spec.Path.Length != 0)
                    {
                        return SubdocNotImplemented(request, key.Key, $"a body path ('{spec.Path}', opcode 0x{spec.Opcode:x2})");
                    }

                    if (spec.Opcode == KvProtocol.Opcodes.Delete && spec.Value.Length != 0) return Error(request, KvProtocol.Status.InvalidArguments, "a whole-document DELETE takes no value");
                    if (bodySeen) return Error(request, KvProtocol.Status.SubdocInvalidCombo, "Request contains an invalid combination of commands");
                    bodySeen = true;
                    continue;
                }

                if (bodySeen) return Error(request, KvProtocol.Status.SubdocInvalidXattrOrder, "xattr specs must come before body specs");
                if (spec.Opcode is not (0xc7 or 0xc8 or 0xc9 or 0xca or 0xcb or 0xcc or 0xce or 0xcf or 0xd3)) return SubdocNotImplemented(request, key.Key, $"mutation opcode 0x{spec.Opcode:x2}");
                if ((spec.Flags & ExpandMacrosFlag) != 0 && MacroOf(spec.Value) is null)
                {
                    return Error(request, KvProtocol.Status.SubdocXattrUnknownMacro, $"expand-macros on a value that is not a macro this server knows ({CasMacro}, {SeqnoMacro}, {Crc32CMacro})");
                }

                if (spec.Opcode == 0xd3 && spec.Value.Length != 0) return Error(request, KvProtocol.Status.InvalidArguments, "REPLACE_BODY_WITH_XATTR takes no value");
                string root = ParsePath(spec.Path) is [string first, ..] ? first : "";
                xattrKey ??= root;
                if (root != xattrKey) return Reply(request, KvProtocol.Status.SubdocXattrInvalidKeyCombo);
            }

            lock (server._documentsLock)
            {
                KvDocument? current = server._documents.GetValueOrDefault(key);
                if (current is not null && add) return Reply(request, KvProtocol.Status.KeyExists);
                if (current is null && accessDeleted && !add) current = server._tombstones.GetValueOrDefault(key);
                if (current is null && !mkdoc && !add) return Reply(request, KvProtocol.Status.KeyNotFound);
                if (current is { Deleted: false } && revive) return Reply(request, KvProtocol.Status.SubdocCanOnlyReviveDeletedDocuments);
                if (current is { Deleted: false } && server.IsLocked(key))
                {
                    if (request.Cas != current.Cas) return Locked(request);
                    server._locks.Remove(key);
                }

                if (request.Cas != 0 && (current is null || current.Cas != request.Cas)) return Reply(request, current is null ? KvProtocol.Status.KeyNotFound : KvProtocol.Status.KeyExists);

                // What the document is before the specs: a new one is a tombstone when created as deleted, else {}.
                bool deleted = current?.Deleted ?? createAsDeleted;
                ReadOnlyMemory<byte> newBody = current?.Value ?? (deleted ? ReadOnlyMemory<byte>.Empty : "{}"u8.ToArray());
                byte dataType = current?.DataType ?? (deleted ? (byte)0 : _json ? KvProtocol.JsonDataType : (byte)0);
                JsonObject xattrs = current?.Xattrs is null ? [] : JsonNode.Parse(current.Xattrs)!.AsObject();
                if (revive) deleted = false;

                using var results = new MemoryStream();
                Span<byte> failure = stackalloc byte[3];
                Span<byte> head = stackalloc byte[7];
                bool deleteDocument = false;
                for (int i = 0; i < specs.Count; i++)
                {
                    Spec spec = specs[i];
                    ushort status;
                    byte[]? result = null;
                    if ((spec.Flags & XattrPathFlag) == 0)
                    {
                        status = KvProtocol.Status.Success;
                        if (spec.Opcode == KvProtocol.Opcodes.Delete)
                        {
                            deleteDocument = true;
                        }
                        else
                        {
                            newBody = spec.Value;
                            dataType = _json && IsJson(spec.Value) ? KvProtocol.JsonDataType : (byte)0;
                        }
                    }
                    else if (spec.Opcode == 0xd3)
                    {
                        status = ReplaceBodyWithXattr(spec, xattrs, ref newBody, ref dataType);
                    }
                    else
                    {
                        string? macro = (spec.Flags & ExpandMacrosFlag) != 0 ? MacroOf(spec.Value) : null;
                        Spec applied = macro is null ? spec : spec with { Value = Encoding.UTF8.GetBytes(new JsonArray(MacroPlaceholder(macro)).ToJsonString()[1..^1]) };
                        status = MutateOne(applied, xattrs, out result);
                    }

                    if (status != KvProtocol.Status.Success)
                    {
                        failure[0] = (byte)i;
                        BinaryPrimitives.WriteUInt16BigEndian(failure[1..], status);
                        return Reply(request, current is { Deleted: true } ? KvProtocol.Status.SubdocMultiPathFailureDeleted : KvProtocol.Status.SubdocMultiPathFailure, value: failure);
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

                if (deleted && !newBody.IsEmpty) return Error(request, KvProtocol.Status.InvalidArguments, "a deleted document has no body: revive it (doc flag 0x10) to give it one");
                ulong cas = server.NextCas();
                ExpandMacros(xattrs, cas, newBody.Span);
                uint keptExpiry = preserveTtl && current is not null ? current.Expiry : server.ExpiryOnWrite(expiry, server._manifest.Find(key.CollectionId)!);
                KvDocument document = (current ?? new KvDocument(key.Key, default, 0, 0, 0, 0, key.CollectionId)) with
                {
                    Value = newBody.ToArray(),
                    DataType = dataType,
                    Flags = userFlags ?? current?.Flags ?? 0,
                    Cas = cas,
                    Expiry = deleted ? 0 : keptExpiry,
                    Xattrs = xattrs.Count == 0 ? null : xattrs.ToJsonString(),
                    Deleted = deleted,
                };
                if (deleteDocument) document = Tombstone(document, cas);
                server.Store(key, document);
                if (durable) server._durable[key] = document.Deleted ? null : document;
                return Reply(request, document.Deleted ? KvProtocol.Status.SubdocSuccessDeleted : KvProtocol.Status.Success, document.Cas, value: results.ToArray());
            }
        }

        /// <summary>REPLACE_BODY_WITH_XATTR: the body becomes the xattr's value (its JSON; a JSON string's text when binary is asked, not implemented here).</summary>
        private ushort ReplaceBodyWithXattr(Spec spec, JsonObject xattrs, ref ReadOnlyMemory<byte> newBody, ref byte dataType)
        {
            List<object>? path = ParsePath(spec.Path);
            if (path is null || path[0] is not string root) return KvProtocol.Status.SubdocPathInvalid;
            if (root.StartsWith('$')) return KvProtocol.Status.SubdocXattrCantModifyVattr;
            ushort status = Navigate(xattrs, path, out JsonNode? found);
            if (status != KvProtocol.Status.Success) return status;
            newBody = Encoding.UTF8.GetBytes(found?.ToJsonString() ?? "null");
            dataType = _json ? KvProtocol.JsonDataType : (byte)0;
            return KvProtocol.Status.Success;
        }

        /// <summary>The macro a spec's value names (<c>"${Mutation.CAS}"</c> as JSON, quotes optional), or null.</summary>
        private static string? MacroOf(byte[] value)
        {
            string text = Encoding.UTF8.GetString(value).Trim();
            if (text.Length >= 2 && text[0] == '"' && text[^1] == '"') text = text[1..^1];
            return text is CasMacro or SeqnoMacro or Crc32CMacro ? text : null;
        }

        private static string MacroPlaceholder(string macro) => "\u0001loopback-macro\u0001" + macro;

        /// <summary>Writes every macro placeholder of this mutation as the value kv_engine writes: CAS and seqno as "0x" and 16 hex digits, little-endian; the body's CRC32-C.</summary>
        private static void ExpandMacros(JsonNode? node, ulong cas, ReadOnlySpan<byte> finalBody)
        {
            string crc = Crc32CHex(finalBody);
            var pending = new Stack<JsonNode>();
            if (node is not null) pending.Push(node);
            while (pending.Count > 0)
            {
                switch (pending.Pop())
                {
                    case JsonObject o:
                        foreach ((string name, JsonNode? child) in o.ToList())
                        {
                            if (Expanded(child, cas, crc) is { } value) o[name] = value;
                            else if (child is not null) pending.Push(child);
                        }

                        break;
                    case JsonArray a:
                        for (int i = 0; i < a.Count; i++)
                        {
                            if (Expanded(a[i], cas, crc) is { } value) a[i] = value;
                            else if (a[i] is { } child) pending.Push(child);
                        }

                        break;
                }
            }
        }

        private static string? Expanded(JsonNode? node, ulong cas, string crc)
        {
            if (node is not JsonValue value || !value.TryGetValue(out string? text) || !text.StartsWith(MacroPlaceholder(""), StringComparison.Ordinal)) return null;
            return text[MacroPlaceholder("").Length..] switch
            {
                CasMacro => MacroHex(cas),
                SeqnoMacro => MacroHex(cas), // this double's seqno is the CAS (as $document.seqno says)
                _ => crc,
            };
        }
    }
}
