using Compression.Dictionaries;
using Compression.Testing.Mongo;
using MongoDB.Bson;
using MongoDB.Bson.Serialization;
using MongoDB.Bson.Serialization.Attributes;
using MongoDB.Driver;
using Xunit;

namespace Compression.MongoDB.Tests.EndToEnd;

[BsonKnownTypes(typeof(Dog), typeof(Cat))]
public class Animal
{
    public ObjectId Id { get; set; }

    public string Name { get; set; } = "";

    public string Story { get; set; } = "";
}

public sealed class Dog : Animal
{
    public string Breed { get; set; } = "";
}

public sealed class Cat : Animal
{
    public int Lives { get; set; }
}

/// <summary>A derived type the base class map does not name: its class map is made when first used, after registration.</summary>
public sealed class Parrot : Animal
{
    public int Words { get; set; }
}

/// <summary>
/// A polymorphic class map through <c>MongoClient</c>: the driver adds the discriminator (<c>_t</c>) to the filters of
/// <c>OfType&lt;TDerived&gt;()</c> and of LINQ type tests without asking the serializer, so it must be stored in the clear.
/// </summary>
public sealed class PolymorphicFixture : IAsyncLifetime
{
    public MongoTestServer Server { get; private set; } = null!;

    public MongoTestDatabase Db { get; private set; } = null!;

    public CompressionEngine Engine { get; private set; } = null!;

    public async Task InitializeAsync()
    {
        Server = await MongoTestServer.StartAsync();
        Db = Server.CreateDatabase("e2e-polymorphic");
        Engine = E2e.Engine(Db.Database);
        // The driver's registry is global: once per process, for every test of the class.
        CompressedDocumentSerializer.Register<Animal>(Engine.GetNamespace($"{Db.Name}.animals"), new CompressedDocumentOptions { ClearFields = ["Name"] });
    }

    public async Task DisposeAsync()
    {
        await Engine.DisposeAsync();
        await Db.DisposeAsync();
        var failures = Server.Loopback?.Failures ?? [];
        await Server.DisposeAsync();
        Assert.Empty(failures);
    }
}

public sealed class PolymorphicTests(PolymorphicFixture fixture) : IClassFixture<PolymorphicFixture>
{
    private readonly MongoTestDatabase _db = fixture.Db;

    [Fact]
    public async Task Discriminator_IsStoredInTheClear_SoOfTypeFiltersAndUpdatesMatch()
    {
        IMongoCollection<Animal> animals = _db.Database.GetCollection<Animal>("animals");
        var rex = new Dog { Id = ObjectId.GenerateNewId(), Name = "Rex", Breed = "collie", Story = "found at the harbour" };
        var tom = new Cat { Id = ObjectId.GenerateNewId(), Name = "Tom", Lives = 9, Story = "never sleeps indoors" };
        await animals.InsertManyAsync([rex, tom]);

        BsonDocument stored = await _db.Database.GetCollection<BsonDocument>("animals").Find(new BsonDocument("_id", rex.Id)).SingleAsync();
        Assert.Equal(["_id", "_t", "Name", "_z"], stored.Names);
        Assert.Equal(new BsonString("Dog"), stored["_t"]);

        // Found by review: with _t compressed, these filters matched nothing and the update was lost without an error.
        UpdateResult renamed = await animals.OfType<Dog>().UpdateOneAsync(d => d.Id == rex.Id, Builders<Dog>.Update.Set(d => d.Name, "Rex II"));
        Assert.Equal(1, renamed.MatchedCount);
        Assert.Equal(1, await animals.OfType<Cat>().CountDocumentsAsync(c => c.Id == tom.Id || c.Id == rex.Id));
        Assert.Equal(1, await animals.CountDocumentsAsync(a => a is Dog && (a.Id == tom.Id || a.Id == rex.Id)));

        var dog = Assert.IsType<Dog>(await animals.Find(a => a.Id == rex.Id).SingleAsync());
        Assert.Equal(("Rex II", "collie", "found at the harbour"), (dog.Name, dog.Breed, dog.Story));
        var cat = Assert.IsType<Cat>(await animals.Find(a => a is Cat && (a.Id == tom.Id || a.Id == rex.Id)).SingleAsync());
        Assert.Equal((9, "never sleeps indoors"), (cat.Lives, cat.Story));

        // The derived collection reads compressed documents too (its serializer is registered with the base type's).
        Dog throughOfType = await animals.OfType<Dog>().Find(d => d.Id == rex.Id).SingleAsync();
        Assert.Equal(("Rex II", "collie", "found at the harbour"), (throughOfType.Name, throughOfType.Breed, throughOfType.Story));

        DeleteResult deleted = await animals.OfType<Cat>().DeleteOneAsync(c => c.Id == tom.Id);
        Assert.Equal(1, deleted.DeletedCount);
    }

    [Fact]
    public async Task OfType_UpdatesAndFiltersOnACompressedMember_FailNamingIt_AndChangeNothing()
    {
        // Found by review: OfType<TDerived>() used the derived type's plain class map, so these were sent as if the member
        // were stored in the clear: $inc made Lives 1 (from a missing field; the clear value then won over the compressed
        // 9), $set of Breed added a clear copy, a filter on Breed matched nothing, all without an error.
        IMongoCollection<Animal> animals = _db.Database.GetCollection<Animal>("animals");
        var tom = new Cat { Id = ObjectId.GenerateNewId(), Name = "Tom", Lives = 9, Story = "never sleeps indoors" };
        var rex = new Dog { Id = ObjectId.GenerateNewId(), Name = "Rex", Breed = "collie", Story = "found at the harbour" };
        await animals.InsertManyAsync([tom, rex]);
        byte[] catBefore = await StoredAsync(tom.Id), dogBefore = await StoredAsync(rex.Id);

        var inc = await Assert.ThrowsAsync<InvalidOperationException>(() =>
            animals.OfType<Cat>().UpdateOneAsync(c => c.Id == tom.Id, Builders<Cat>.Update.Inc(c => c.Lives, 1)));
        Assert.Contains("'Lives'", inc.Message);
        var set = await Assert.ThrowsAsync<InvalidOperationException>(() =>
            animals.OfType<Dog>().UpdateOneAsync(d => d.Id == rex.Id, Builders<Dog>.Update.Set(d => d.Breed, "beagle")));
        Assert.Contains("'Breed'", set.Message);
        var filter = await Assert.ThrowsAsync<InvalidOperationException>(() =>
            animals.OfType<Dog>().UpdateOneAsync(d => d.Breed == "collie", Builders<Dog>.Update.Set(d => d.Name, "Renamed")));
        Assert.Contains("'Breed'", filter.Message);
        var count = await Assert.ThrowsAsync<InvalidOperationException>(() =>
            animals.CountDocumentsAsync(Builders<Animal>.Filter.OfType<Dog>(d => d.Breed == "collie")));
        Assert.Contains("'Breed'", count.Message);
        Assert.Equal(catBefore, await StoredAsync(tom.Id));
        Assert.Equal(dogBefore, await StoredAsync(rex.Id));

        // What is clear still works through the derived collection, and the document comes back read.
        Cat? renamed = await animals.OfType<Cat>().FindOneAndUpdateAsync<Cat>(c => c.Id == tom.Id, Builders<Cat>.Update.Set(c => c.Name, "Tom II"),
            new FindOneAndUpdateOptions<Cat> { ReturnDocument = ReturnDocument.After });
        Assert.Equal(("Tom II", 9, "never sleeps indoors"), (renamed!.Name, renamed.Lives, renamed.Story));
    }

    [Fact]
    public async Task OfType_InsertAndReplace_AreStoredCompressedWithTheDiscriminator_AndReadByEitherCollection()
    {
        IMongoCollection<Animal> animals = _db.Database.GetCollection<Animal>("animals");
        IMongoCollection<Dog> dogs = animals.OfType<Dog>();
        var fido = new Dog { Id = ObjectId.GenerateNewId(), Name = "Fido", Breed = "terrier", Story = "digs under every fence" };
        await dogs.InsertOneAsync(fido);
        BsonDocument stored = BsonSerializer.Deserialize<BsonDocument>(await StoredAsync(fido.Id));
        Assert.Equal(["_id", "_t", "Name", "_z"], stored.Names);

        fido.Breed = "spaniel";
        ReplaceOneResult replaced = await dogs.ReplaceOneAsync(d => d.Id == fido.Id, fido);
        Assert.Equal(1, replaced.ModifiedCount);
        stored = BsonSerializer.Deserialize<BsonDocument>(await StoredAsync(fido.Id));
        Assert.Equal(["_id", "_t", "Name", "_z"], stored.Names);
        var read = Assert.IsType<Dog>(await animals.Find(a => a.Id == fido.Id).SingleAsync());
        Assert.Equal(("Fido", "spaniel", "digs under every fence"), (read.Name, read.Breed, read.Story));
        Assert.Equal("spaniel", (await dogs.Find(d => d.Id == fido.Id).SingleAsync()).Breed);
    }

    [Fact]
    public async Task OfType_OfADerivedTypeTheClassMapDidNotKnow_CompressesAndRefusesCompressedMembersToo()
    {
        // Documented as a limit until 2026-11-25: Register<T> covered the derived types the class map knew; for any other
        // (no [BsonKnownTypes], a class map made after registration) OfType<TDerived>() used the plain class map, so an
        // $inc of a compressed member was applied to a field the stored document did not hold, and that partial clear
        // value then won on reading (Words 12, $inc 1, read back 1), without an error.
        IMongoCollection<Animal> animals = _db.Database.GetCollection<Animal>("animals");
        IMongoCollection<Parrot> parrots = animals.OfType<Parrot>();
        var polly = new Parrot { Id = ObjectId.GenerateNewId(), Name = "Polly", Words = 12, Story = "repeats the harbour master" };
        await animals.InsertOneAsync(polly);
        byte[] before = await StoredAsync(polly.Id);

        var inc = await Assert.ThrowsAsync<InvalidOperationException>(() =>
            parrots.UpdateOneAsync(p => p.Id == polly.Id, Builders<Parrot>.Update.Inc(p => p.Words, 1)));
        Assert.Contains("Member 'Words' of Parrot is compressed", inc.Message);
        Assert.Equal(before, await StoredAsync(polly.Id));
        Assert.Equal(12, (await parrots.Find(p => p.Id == polly.Id).SingleAsync()).Words);

        var kiwi = new Parrot { Id = ObjectId.GenerateNewId(), Name = "Kiwi", Words = 3, Story = "sings at dawn" };
        await parrots.InsertOneAsync(kiwi);
        Assert.Equal(["_id", "_t", "Name", "_z"], BsonSerializer.Deserialize<BsonDocument>(await StoredAsync(kiwi.Id)).Names);
        var read = Assert.IsType<Parrot>(await animals.Find(a => a.Id == kiwi.Id).SingleAsync());
        Assert.Equal(("Kiwi", 3, "sings at dawn"), (read.Name, read.Words, read.Story));
    }

    private async Task<byte[]> StoredAsync(ObjectId id)
    {
        using RawBsonDocument raw = await _db.Database.GetCollection<RawBsonDocument>("animals").Find(new BsonDocument("_id", id)).SingleAsync();
        return raw.Slice.AccessBackingBytes(0).AsSpan(0, raw.Slice.Length).ToArray();
    }
}
