using MongoDB.Bson;

namespace Compression.Testing.Mongo.Internal;

/// <summary>A command failure sent back as <c>{ ok: 0, errmsg, code, codeName }</c> (or as a write error).</summary>
internal sealed class MongoServerException(int code, string codeName, string message) : Exception(message)
{
    public int Code { get; } = code;

    public string CodeName { get; } = codeName;

    public BsonDocument? Details { get; init; }

    public static MongoServerException BadValue(string message) => new(2, "BadValue", message);

    public static MongoServerException FailedToParse(string message) => new(9, "FailedToParse", message);

    public static MongoServerException TypeMismatch(string message) => new(14, "TypeMismatch", message);

    public static MongoServerException NamespaceNotFound(string message) => new(26, "NamespaceNotFound", message);

    public static MongoServerException CursorNotFound(long id) => new(43, "CursorNotFound", $"cursor id {id} not found");

    public static MongoServerException NamespaceExists(string message) => new(48, "NamespaceExists", message);

    public static MongoServerException CommandNotFound(string name) => new(59, "CommandNotFound", $"no such command: '{name}'");

    public static MongoServerException ImmutableField(string message) => new(66, "ImmutableField", message);

    public static MongoServerException InvalidOptions(string message) => new(72, "InvalidOptions", message);

    public static MongoServerException IndexNotFound(string message) => new(27, "IndexNotFound", message);

    public static MongoServerException IndexOptionsConflict(string message) => new(85, "IndexOptionsConflict", message);

    public static MongoServerException IndexKeySpecsConflict(string message) => new(86, "IndexKeySpecsConflict", message);

    public static MongoServerException PathNotViable(string message) => new(28, "PathNotViable", message);

    public static MongoServerException TooLarge(string message) => new(10334, "BSONObjectTooLarge", message);

    /// <summary>Something a real server does but this test double does not: always names what is missing.</summary>
    public static MongoServerException NotImplemented(string what) =>
        new(238, "NotImplemented", $"MongoLoopbackServer (a test double) does not implement {what}");
}
