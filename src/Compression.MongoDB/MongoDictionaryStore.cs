using System.Runtime.CompilerServices;
using Compression.Dictionaries;
using MongoDB.Bson;
using MongoDB.Driver;

namespace Compression.MongoDB;

/// <summary>
/// A <see cref="DictionaryStore"/> in the application's own MongoDB database, shared by every client of it: collection
/// <c>_compression.dictionaries</c>, one document per version,
/// <c>{ _id: &lt;id as long&gt;, ns, v, content: BinData(0), hash, created, codec, level, samples, ratio }</c>, and
/// <c>shapes: BinData(0), shapesHash</c> when the dictionary has a shape table.
/// </summary>
/// <remarks>
/// <para>
/// Durable: a dictionary must outlive every document that names it, on a replica set too. Records are inserted with
/// write concern majority, journaled, and read with read concern majority, so no client adopts a version that a failover
/// could roll back while documents naming it survive. The collection must never be dropped, given a TTL index, or
/// restored apart from the collections whose documents name its records (docs/mongodb.md).
/// </para>
/// <para>
/// The current version is the newest one whose <c>v</c> is a whole number from 1 to <see cref="DictionaryRecord.MaxVersion"/>
/// and whose document reads: a record another client (or a hostile peer) wrote with a <c>v</c> of another type or out of
/// that range is never seen, and one that does not read is skipped and reported (at most 16 of them).
/// </para>
/// Publication is an insert: a unique index on <c>{ ns: 1, v: 1 }</c> (created once, idempotently, before the first
/// publication) makes sure that of two clients publishing the same version only one wins; the other gets the winner back.
/// A duplicate <c>_id</c> with no such version is a <see cref="DictionaryIdConflictException"/>. Nothing is ever updated or
/// deleted. Documents are checked before they are used: their size, then every field's type and range; a damaged one is
/// an <see cref="InvalidDataException"/> naming <see cref="Location"/> and the <c>_id</c>. <see cref="Get"/> uses the
/// driver's synchronous API, for the serializer's synchronous decode path.
/// </remarks>
public sealed class MongoDictionaryStore : DictionaryStore
{
    /// <summary>The collection's name in the application's database.</summary>
    internal const string CollectionName = "_compression.dictionaries";

    /// <summary>What every write asks for: acknowledged by a majority of the replica set, journaled.</summary>
    private static readonly WriteConcern Durable = WriteConcern.WMajority.With(journal: true);

    /// <summary>The unique index on <c>{ ns: 1, v: 1 }</c> that makes publication insert-only per version.</summary>
    internal const string VersionIndexName = "ns_1_v_1";

    private readonly IMongoCollection<RawBsonDocument> _collection;
    private readonly int _maxDictionaryBytes;
    private readonly int _maxDocumentBytes;
    private Task? _index;

    /// <summary>Creates the store over <paramref name="database"/> (the application's database: documents name their dictionaries, so both must live together).</summary>
    /// <param name="database">The database; the store uses its collection <c>_compression.dictionaries</c>.</param>
    /// <param name="maxDictionaryBytes">The largest dictionary a document may hold; larger documents are refused before their fields are read.</param>
    public MongoDictionaryStore(IMongoDatabase database, int maxDictionaryBytes = ZstdDictionary.DefaultMaximumSize)
    {
        ArgumentNullException.ThrowIfNull(database);
        ArgumentOutOfRangeException.ThrowIfLessThan(maxDictionaryBytes, ZstdDictionary.MinimumSize);
        _collection = database.GetCollection<RawBsonDocument>(CollectionName)
            .WithWriteConcern(Durable)
            .WithReadConcern(ReadConcern.Majority);
        _maxDictionaryBytes = maxDictionaryBytes;
        _maxDocumentBytes = (int)DictionaryRecordCodec.MaxRecordBytes(maxDictionaryBytes, base64: false);
        Location = $"MongoDB collection {database.DatabaseNamespace.DatabaseName}.{CollectionName}";
    }

    /// <inheritdoc/>
    public override string Location { get; }

    /// <inheritdoc/>
    /// <value>Always <see langword="true"/>: the driver has a synchronous API.</value>
    public override bool CanGetSynchronously => true;

    /// <inheritdoc/>
    public override DictionaryRecord? Get(uint id)
    {
        RawBsonDocument? document = _collection.Find(ById(id)).Limit(1).FirstOrDefault();
        return document is null ? null : Read(document, expectedId: id, expectedNamespace: null);
    }

    /// <inheritdoc/>
    public override async ValueTask<DictionaryRecord?> GetAsync(uint id, CancellationToken cancellationToken = default)
    {
        RawBsonDocument? document = await _collection.Find(ById(id)).Limit(1).FirstOrDefaultAsync(cancellationToken).ConfigureAwait(false);
        return document is null ? null : Read(document, expectedId: id, expectedNamespace: null);
    }

    /// <inheritdoc/>
    public override ValueTask<DictionaryRecord?> GetCurrentAsync(string @namespace, CancellationToken cancellationToken = default)
    {
        ArgumentException.ThrowIfNullOrEmpty(@namespace);
        return NewestAsync(@namespace, DictionaryRecord.MaxVersion + 1, cancellationToken);
    }

    /// <inheritdoc/>
    public override ValueTask<DictionaryRecord?> GetNewestBelowAsync(string @namespace, int version, CancellationToken cancellationToken = default)
    {
        ArgumentException.ThrowIfNullOrEmpty(@namespace);
        return NewestAsync(@namespace, Math.Min(version, DictionaryRecord.MaxVersion + 1), cancellationToken);
    }

    /// <summary>
    /// The newest readable record below <paramref name="below"/>: the server sees only whole-number versions of the
    /// namespace in range, newest first; documents among them that do not read are reported and skipped, at most
    /// <see cref="DictionaryStore.MaxSkippedRecords"/>, then the newest one's problem is thrown.
    /// </summary>
    private async ValueTask<DictionaryRecord?> NewestAsync(string @namespace, int below, CancellationToken cancellationToken)
    {
        var filter = new BsonDocument
        {
            { Fields.Namespace, @namespace },
            { Fields.Version, new BsonDocument { { "$type", new BsonArray { "int", "long" } }, { "$gte", 1 }, { "$lt", below } } },
        };
        var options = new FindOptions<RawBsonDocument> { Sort = new BsonDocument(Fields.Version, -1), Limit = MaxSkippedRecords + 1, BatchSize = MaxSkippedRecords + 1 };
        using IAsyncCursor<RawBsonDocument> cursor = await _collection.FindAsync(filter, options, cancellationToken).ConfigureAwait(false);
        InvalidDataException? newestProblem = null;
        while (await cursor.MoveNextAsync(cancellationToken).ConfigureAwait(false))
        {
            foreach (RawBsonDocument document in cursor.Current)
            {
                try
                {
                    return Read(document, expectedId: null, expectedNamespace: @namespace);
                }
                catch (InvalidDataException ex)
                {
                    newestProblem ??= ex;
                    ReportSkippedRecord(ex.Message);
                }
            }
        }
        return newestProblem is null ? null : throw newestProblem;
    }

    /// <inheritdoc/>
    /// <remarks>
    /// One insert, whatever the other versions hold: a taken version returns its record (the winner), or an
    /// <see cref="InvalidDataException"/> when that record does not read.
    /// </remarks>
    public override async ValueTask<DictionaryRecord> PublishAsync(DictionaryRecord candidate, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(candidate);
        ArgumentException.ThrowIfNullOrEmpty(candidate.Namespace, nameof(candidate));
        ArgumentOutOfRangeException.ThrowIfLessThan(candidate.Version, 1, nameof(candidate));
        ArgumentOutOfRangeException.ThrowIfGreaterThan(candidate.Version, DictionaryRecord.MaxVersion, nameof(candidate));
        await EnsureIndexAsync(cancellationToken).ConfigureAwait(false);

        try
        {
            using var document = new RawBsonDocument(ToDocument(candidate).ToBson());
            await _collection.InsertOneAsync(document, options: null, cancellationToken).ConfigureAwait(false);
            return candidate;
        }
        catch (MongoWriteException ex) when (ex.WriteError?.Category == ServerErrorCategory.DuplicateKey)
        {
            // Either index: another client won this version (the (ns, v) index), or this very record was inserted by an
            // earlier attempt whose reply was lost (both indexes), or the id is taken by another version (only _id). The
            // version decides, whichever index the server happened to report.
            RawBsonDocument? winner = await _collection.Find(ByVersion(candidate.Namespace, candidate.Version)).Limit(1)
                .FirstOrDefaultAsync(cancellationToken).ConfigureAwait(false);
            if (winner is not null) return Read(winner, expectedId: null, expectedNamespace: candidate.Namespace, expectedVersion: candidate.Version);
            throw new DictionaryIdConflictException(candidate.Id);
        }
    }

    /// <inheritdoc/>
    public override async IAsyncEnumerable<DictionaryRecord> ListAsync(string? @namespace = null, [EnumeratorCancellation] CancellationToken cancellationToken = default)
    {
        FilterDefinition<RawBsonDocument> filter = @namespace is null ? FilterDefinition<RawBsonDocument>.Empty : ByNamespace(@namespace);
        var sort = new BsonDocument { { Fields.Namespace, 1 }, { Fields.Version, 1 } };
        using IAsyncCursor<RawBsonDocument> cursor = await _collection.Find(filter).Sort(sort).ToCursorAsync(cancellationToken).ConfigureAwait(false);
        while (await cursor.MoveNextAsync(cancellationToken).ConfigureAwait(false))
        {
            foreach (RawBsonDocument document in cursor.Current)
            {
                yield return Read(document, expectedId: null, expectedNamespace: @namespace);
            }
        }
    }

    /// <summary>
    /// Every stored document, of one namespace or of all, oldest first, each as its record or as the problem that keeps it
    /// from reading (where <see cref="ListAsync"/> stops at the first such document): what <c>docz dictionaries list</c> and
    /// <c>export</c> show, so that one unreadable record never hides the others.
    /// </summary>
    internal async IAsyncEnumerable<(DictionaryRecord? Record, string? Problem)> ListEachAsync(string? @namespace,
        [EnumeratorCancellation] CancellationToken cancellationToken = default)
    {
        FilterDefinition<RawBsonDocument> filter = @namespace is null ? FilterDefinition<RawBsonDocument>.Empty : ByNamespace(@namespace);
        var sort = new BsonDocument { { Fields.Namespace, 1 }, { Fields.Version, 1 } };
        using IAsyncCursor<RawBsonDocument> cursor = await _collection.Find(filter).Sort(sort).ToCursorAsync(cancellationToken).ConfigureAwait(false);
        while (await cursor.MoveNextAsync(cancellationToken).ConfigureAwait(false))
        {
            foreach (RawBsonDocument document in cursor.Current)
            {
                DictionaryRecord? record = null;
                string? problem = null;
                try
                {
                    record = Read(document, expectedId: null, expectedNamespace: @namespace);
                }
                catch (InvalidDataException ex)
                {
                    problem = ex.Message;
                }
                yield return (record, problem);
            }
        }
    }

    /// <summary>
    /// Creates the unique <c>{ ns: 1, v: 1 }</c> index once per store object, shared by concurrent publishers (creating an
    /// existing identical index is a no-op on the server, so several clients may all do it). A failed attempt is retried
    /// by the next publication.
    /// </summary>
    private Task EnsureIndexAsync(CancellationToken cancellationToken)
    {
        Task? current = Volatile.Read(ref _index);
        if (current is null || current.IsFaulted || current.IsCanceled)
        {
            Task created = CreateIndexAsync();
            current = Interlocked.CompareExchange(ref _index, created, current) == current ? created : Volatile.Read(ref _index)!;
        }
        return current.IsCompletedSuccessfully ? Task.CompletedTask : current.WaitAsync(cancellationToken);
    }

    private async Task CreateIndexAsync()
    {
        var model = new CreateIndexModel<RawBsonDocument>(
            new BsonDocument { { Fields.Namespace, 1 }, { Fields.Version, 1 } },
            new CreateIndexOptions { Name = VersionIndexName, Unique = true });
        await _collection.Indexes.CreateOneAsync(model, options: null, CancellationToken.None).ConfigureAwait(false);
    }

    private static FilterDefinition<RawBsonDocument> ById(uint id) => new BsonDocument(Fields.Id, (long)id);

    private static FilterDefinition<RawBsonDocument> ByNamespace(string @namespace) => new BsonDocument(Fields.Namespace, @namespace);

    private static FilterDefinition<RawBsonDocument> ByVersion(string @namespace, int version) =>
        new BsonDocument { { Fields.Namespace, @namespace }, { Fields.Version, version } };

    internal static BsonDocument ToDocument(DictionaryRecord record)
    {
        var document = new BsonDocument();
        DictionaryRecordCodec.Write(record, new Writer(document));
        return document;
    }

    /// <summary>
    /// Reads a stored document into a record: its size first, then the codec checks each field (the types below are this
    /// store's), then that it is the record asked for.
    /// </summary>
    private DictionaryRecord Read(RawBsonDocument document, uint? expectedId, string? expectedNamespace, int? expectedVersion = null)
    {
        int size = document.Slice.Length;
        if (size > _maxDocumentBytes)
        {
            throw new InvalidDataException(
                $"Dictionary document {Describe(document)} in {Location} has {size} bytes, over the {_maxDocumentBytes} a record of at most {_maxDictionaryBytes} dictionary bytes can take; it was not read.");
        }

        DictionaryRecord record = DictionaryRecordCodec.Read(new Reader(document, $"Dictionary document {Describe(document)} in {Location}"), _maxDictionaryBytes);
        if (expectedId is uint expected && record.Id != expected) throw Invalid(document, $"asked for id {expected}, the document has _id {record.Id}");
        if (expectedNamespace is not null && !string.Equals(record.Namespace, expectedNamespace, StringComparison.Ordinal))
            throw Invalid(document, $"asked for namespace '{expectedNamespace}', the document has '{record.Namespace}'");
        if (expectedVersion is int v && record.Version != v) throw Invalid(document, $"asked for version {v}, the document has {record.Version}");
        return record;
    }

    private InvalidDataException Invalid(RawBsonDocument document, string problem) =>
        new($"Dictionary document {Describe(document)} in {Location} is invalid and was not used: {problem}.");

    private static string Describe(RawBsonDocument document)
    {
        try
        {
            return document.TryGetValue(Fields.Id, out BsonValue id) ? $"_id {id}" : "without _id";
        }
        catch (Exception ex) when (ex is FormatException or BsonSerializationException or EndOfStreamException)
        {
            return "(unreadable _id)";
        }
    }

    /// <summary>The BSON of a record: the id as an Int64, hashes as Int64 (their bits), bytes as BinData(0), the created time as a DateTime.</summary>
    private sealed class Writer(BsonDocument document) : IDictionaryRecordWriter
    {
        public void WriteInteger(DictionaryRecordField field, long value) =>
            document.Add(Fields.Name(field), field == DictionaryRecordField.Id ? new BsonInt64(value) : new BsonInt32(checked((int)value)));

        public void WriteText(DictionaryRecordField field, string value) => document.Add(Fields.Name(field), value);

        public void WriteBytes(DictionaryRecordField field, ReadOnlyMemory<byte> value) =>
            document.Add(Fields.Name(field), new BsonBinaryData(value.ToArray(), BsonBinarySubType.Binary));

        public void WriteHash(DictionaryRecordField field, ulong value) => document.Add(Fields.Name(field), unchecked((long)value));

        public void WriteTimestamp(DictionaryRecordField field, DateTimeOffset value) => document.Add(Fields.Name(field), new BsonDateTime(value.UtcDateTime));

        public void WriteNumber(DictionaryRecordField field, double value) => document.Add(Fields.Name(field), value);

        public void WriteAbsent(DictionaryRecordField field)
        {
            // records without a shape table have neither field
        }
    }

    /// <summary>A stored document's fields, of the BSON types <see cref="Writer"/> writes (integers as Int32 or Int64); a malformed document is refused.</summary>
    private sealed class Reader(RawBsonDocument document, string description) : IDictionaryRecordReader
    {
        public string Description => description;

        public string NameOf(DictionaryRecordField field) => Fields.Name(field);

        public bool Contains(DictionaryRecordField field) => Guard(() => document.Contains(Fields.Name(field)));

        public long ReadInteger(DictionaryRecordField field) => Guard(() =>
        {
            BsonValue value = document[Fields.Name(field)];
            return value.BsonType switch
            {
                BsonType.Int64 => value.AsInt64,
                BsonType.Int32 => value.AsInt32,
                _ => throw WrongType(field, value, "an Int32 or Int64"),
            };
        });

        public string ReadText(DictionaryRecordField field) => Guard(() => Typed(field, BsonType.String).AsString);

        public ReadOnlyMemory<byte> ReadBytes(DictionaryRecordField field) => Guard(() =>
        {
            BsonBinaryData binary = Typed(field, BsonType.Binary).AsBsonBinaryData;
            return binary.SubType == BsonBinarySubType.Binary ? binary.Bytes
                : throw new InvalidDataException($"'{Fields.Name(field)}' is BinData(0x{(byte)binary.SubType:x2}), not BinData(0)");
        });

        public ulong ReadHash(DictionaryRecordField field) => Guard(() =>
        {
            BsonValue value = document[Fields.Name(field)];
            return value.BsonType == BsonType.Int64 ? unchecked((ulong)value.AsInt64) : throw WrongType(field, value, "an Int64");
        });

        public DateTimeOffset ReadTimestamp(DictionaryRecordField field) =>
            Guard(() => new DateTimeOffset(Typed(field, BsonType.DateTime).ToUniversalTime(), TimeSpan.Zero));

        public double ReadNumber(DictionaryRecordField field) => Guard(() =>
        {
            BsonValue value = document[Fields.Name(field)];
            return value.BsonType switch
            {
                BsonType.Double => value.AsDouble,
                BsonType.Int32 => value.AsInt32,
                BsonType.Int64 => value.AsInt64,
                _ => throw WrongType(field, value, "a number"),
            };
        });

        private BsonValue Typed(DictionaryRecordField field, BsonType type)
        {
            BsonValue value = document[Fields.Name(field)];
            return value.BsonType == type ? value : throw WrongType(field, value, $"a {type}");
        }

        private static InvalidDataException WrongType(DictionaryRecordField field, BsonValue value, string expected) =>
            new($"field '{Fields.Name(field)}' is a {value.BsonType}, not {expected}");

        /// <summary>Reads from the raw bytes, which a peer may have written malformed: the driver's exceptions become the record's problem.</summary>
        private static T Guard<T>(Func<T> read)
        {
            try
            {
                return read();
            }
            catch (Exception ex) when (ex is FormatException or BsonSerializationException or InvalidCastException or OverflowException or ArgumentException or EndOfStreamException)
            {
                throw new InvalidDataException($"it is not a well-formed BSON document ({ex.Message})", ex);
            }
        }
    }

    /// <summary>The stored field names (short: they are in every document, and documents are few).</summary>
    internal static class Fields
    {
        public const string Id = "_id";
        public const string Namespace = "ns";
        public const string Version = "v";
        public const string Content = "content";
        public const string Hash = "hash";
        public const string Created = "created";
        public const string Codec = "codec";
        public const string Level = "level";
        public const string Samples = "samples";
        public const string Ratio = "ratio";
        public const string Shapes = "shapes";
        public const string ShapesHash = "shapesHash";

        public static string Name(DictionaryRecordField field) => field switch
        {
            DictionaryRecordField.Id => Id,
            DictionaryRecordField.Namespace => Namespace,
            DictionaryRecordField.Version => Version,
            DictionaryRecordField.Content => Content,
            DictionaryRecordField.ContentHash => Hash,
            DictionaryRecordField.Created => Created,
            DictionaryRecordField.Codec => Codec,
            DictionaryRecordField.Level => Level,
            DictionaryRecordField.SampleCount => Samples,
            DictionaryRecordField.Ratio => Ratio,
            DictionaryRecordField.Shapes => Shapes,
            _ => ShapesHash,
        };
    }
}
