using System.Collections.Concurrent;
using Compression.Dictionaries;
using MongoDB.Bson;
using MongoDB.Bson.Serialization;

namespace Compression.MongoDB;

/// <summary>Registration of <see cref="CompressedDocumentSerializer{T}"/> with the driver's global serializer registry.</summary>
public static class CompressedDocumentSerializer
{
    /// <summary>
    /// Creates and registers the serializer of <typeparamref name="T"/>, and of the types derived from it (for
    /// <c>OfType&lt;TDerived&gt;()</c>: those the class map knows now, and any other when the driver first asks for it).
    /// Call it at start-up, before the first <c>GetCollection&lt;T&gt;</c> or any other use of the type by the driver.
    /// </summary>
    /// <exception cref="InvalidOperationException">A serializer for <typeparamref name="T"/> is already registered or was
    /// already looked up (and cached) by the driver: registration came too late.</exception>
    public static CompressedDocumentSerializer<T> Register<T>(CompressionNamespace @namespace, CompressedDocumentOptions? options = null)
        where T : class
    {
        var serializer = new CompressedDocumentSerializer<T>(@namespace, options);
        RegisterOne(typeof(T), serializer);
        // The derived types the class map knows ([BsonKnownTypes], class maps registered before): a collection obtained
        // with OfType<TDerived>() serializes, filters and updates through the serializer of TDerived, which must know the
        // compressed form too (without it, updates of compressed members applied to fields the document does not hold).
        foreach (Type derived in DerivedTypes(typeof(T)))
            RegisterOne(derived, DerivedSerializer(derived, typeof(T), serializer));
        // A derived type the class map does not know yet (no [BsonKnownTypes], its class map registered later or made
        // automatically) gets the same when the driver first asks for its serializer.
        s_registered[typeof(T)] = serializer;
        if (Interlocked.Exchange(ref s_providerRegistered, 1) == 0) BsonSerializer.RegisterSerializationProvider(new DerivedTypeProvider());
        return serializer;
    }

    private static readonly ConcurrentDictionary<Type, IBsonSerializer> s_registered = new();
    private static int s_providerRegistered;

    private static IBsonSerializer DerivedSerializer(Type derived, Type registered, IBsonSerializer serializer) =>
        (IBsonSerializer)Activator.CreateInstance(typeof(CompressedDerivedSerializer<,>).MakeGenericType(derived, registered), serializer)!;

    /// <summary>
    /// Serializers for types derived from a registered compressed type that <see cref="Register{T}"/> could not list: the
    /// driver asks its providers for a type's serializer on first use (and caches the answer); the nearest registered
    /// base type's serializer decides. Other types are left to the driver's own providers.
    /// </summary>
    private sealed class DerivedTypeProvider : IBsonSerializationProvider
    {
        public IBsonSerializer? GetSerializer(Type type)
        {
            if (!type.IsClass || type.ContainsGenericParameters) return null;
            for (Type? baseType = type.BaseType; baseType is not null; baseType = baseType.BaseType)
            {
                if (s_registered.TryGetValue(baseType, out IBsonSerializer? serializer)) return DerivedSerializer(type, baseType, serializer);
            }
            return null;
        }
    }

    private static void RegisterOne(Type type, IBsonSerializer serializer)
    {
        try
        {
            BsonSerializer.RegisterSerializer(type, serializer);
        }
        catch (BsonSerializationException ex)
        {
            throw new InvalidOperationException(
                $"Cannot register the compressed serializer of {type.FullName}: the driver already has a serializer for it " +
                "(registered, or cached by an earlier use of the type). Register compression at start-up, before the first GetCollection<T>.", ex);
        }
    }

    /// <summary>Every type the class map of <paramref name="type"/> knows as derived, at any depth, and every registered class map of a derived type.</summary>
    private static IEnumerable<Type> DerivedTypes(Type type)
    {
        var found = new HashSet<Type>();
        var pending = new Stack<Type>([type]);
        while (pending.TryPop(out Type? current))
        {
            foreach (Type known in BsonClassMap.LookupClassMap(current).KnownTypes)
            {
                if (known != type && type.IsAssignableFrom(known) && found.Add(known)) pending.Push(known);
            }
        }
        foreach (BsonClassMap map in BsonClassMap.GetRegisteredClassMaps())
        {
            if (map.ClassType != type && type.IsAssignableFrom(map.ClassType) && map.ClassType.IsClass && !map.ClassType.ContainsGenericParameters)
                found.Add(map.ClassType);
        }
        return found;
    }
}
