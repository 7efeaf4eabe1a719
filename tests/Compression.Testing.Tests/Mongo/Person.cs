using MongoDB.Bson;
using MongoDB.Bson.Serialization.Attributes;

namespace Compression.Testing.Tests.Mongo;

public sealed class Person
{
    public ObjectId Id { get; set; }

    public string Name { get; set; } = "";

    public int Age { get; set; }

    public string City { get; set; } = "";

    public List<string> Tags { get; set; } = [];

    [BsonIgnoreIfNull]
    public Address? Address { get; set; }

    public static List<Person> Sample() =>
    [
        new() { Name = "Ada", Age = 36, City = "London", Tags = ["math", "code"], Address = new Address { Street = "Baker", Number = 1 } },
        new() { Name = "Grace", Age = 85, City = "Arlington", Tags = ["navy", "code"] },
        new() { Name = "Alan", Age = 41, City = "London", Tags = ["math"], Address = new Address { Street = "Strand", Number = 7 } },
        new() { Name = "Edsger", Age = 72, City = "Austin", Tags = [] },
        new() { Name = "Barbara", Age = 20, City = "Boston", Tags = ["code"] },
    ];
}

public sealed class Address
{
    public string Street { get; set; } = "";

    public int Number { get; set; }
}
