using MongoDB.Bson;
using MongoDB.Bson.IO;

namespace Compression.Tool.Backends.MongoDB;

/// <summary>
/// Copies a document from a BSON reader to a BSON writer value by value, without a <see cref="BsonDocument"/> in between:
/// element order, duplicate names and every value's type are kept. From raw BSON to a <see cref="JsonWriter"/> in
/// canonical Extended JSON and back from a <see cref="JsonReader"/>, a document comes back byte for byte (<c>export</c>,
/// <c>import</c>, <c>cat</c>).
/// </summary>
internal static class BsonCopy
{
    public static void Document(IBsonReader reader, IBsonWriter writer)
    {
        reader.ReadStartDocument();
        writer.WriteStartDocument();
        while (reader.ReadBsonType() != BsonType.EndOfDocument)
        {
            writer.WriteName(reader.ReadName());
            Value(reader, writer);
        }
        reader.ReadEndDocument();
        writer.WriteEndDocument();
    }

    private static void Value(IBsonReader reader, IBsonWriter writer)
    {
        switch (reader.CurrentBsonType)
        {
            case BsonType.Document:
                Document(reader, writer);
                break;
            case BsonType.Array:
                reader.ReadStartArray();
                writer.WriteStartArray();
                while (reader.ReadBsonType() != BsonType.EndOfDocument) Value(reader, writer);
                reader.ReadEndArray();
                writer.WriteEndArray();
                break;
            case BsonType.Double: writer.WriteDouble(reader.ReadDouble()); break;
            case BsonType.String: writer.WriteString(reader.ReadString()); break;
            case BsonType.Binary: writer.WriteBinaryData(reader.ReadBinaryData()); break;
            case BsonType.Undefined: reader.ReadUndefined(); writer.WriteUndefined(); break;
            case BsonType.ObjectId: writer.WriteObjectId(reader.ReadObjectId()); break;
            case BsonType.Boolean: writer.WriteBoolean(reader.ReadBoolean()); break;
            case BsonType.DateTime: writer.WriteDateTime(reader.ReadDateTime()); break;
            case BsonType.Null: reader.ReadNull(); writer.WriteNull(); break;
            case BsonType.RegularExpression: writer.WriteRegularExpression(reader.ReadRegularExpression()); break;
            case BsonType.JavaScript: writer.WriteJavaScript(reader.ReadJavaScript()); break;
            case BsonType.Symbol: writer.WriteSymbol(reader.ReadSymbol()); break;
            case BsonType.JavaScriptWithScope:
                writer.WriteJavaScriptWithScope(reader.ReadJavaScriptWithScope());
                Document(reader, writer); // the scope
                break;
            case BsonType.Int32: writer.WriteInt32(reader.ReadInt32()); break;
            case BsonType.Timestamp: writer.WriteTimestamp(reader.ReadTimestamp()); break;
            case BsonType.Int64: writer.WriteInt64(reader.ReadInt64()); break;
            case BsonType.Decimal128: writer.WriteDecimal128(reader.ReadDecimal128()); break;
            case BsonType.MinKey: reader.ReadMinKey(); writer.WriteMinKey(); break;
            case BsonType.MaxKey: reader.ReadMaxKey(); writer.WriteMaxKey(); break;
            default: throw new FormatException($"BSON type {reader.CurrentBsonType} is not supported.");
        }
    }
}
