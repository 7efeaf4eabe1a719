using System.Reflection;
using Compression.Couchbase.Internal;
using Couchbase.KeyValue;
using Xunit;

namespace Compression.Couchbase.Tests.Adapter;

/// <summary>
/// Every member of the SDK's collection interfaces is implemented by the decorator itself (issue #39). A member a new SDK
/// release adds without a default body breaks the build; one added WITH a default body (a default interface method)
/// would compile and run the SDK's default against the inner collection, bypassing compression: this test fails then,
/// until the decorator implements the member deliberately (pass through, decode, or refuse).
/// </summary>
public sealed class InterfaceCoverageTests
{
    [Theory]
    [InlineData(typeof(ICouchbaseCollection), typeof(CompressedCollection))]
    [InlineData(typeof(IBinaryCollection), typeof(CounterOnlyBinaryCollection))]
    public void Every_interface_member_is_implemented_by_the_decorator_itself(Type contract, Type decorator)
    {
        Assert.NotEmpty(decorator.GetInterfaceMap(contract).InterfaceMethods);
        List<string> notOwn = LeftToDefaults(contract, decorator);
        Assert.True(notOwn.Count == 0, $"{decorator.Name} leaves {contract.Name} members to their default bodies: {string.Join("; ", notOwn)}");
    }

    [Fact]
    public void A_member_with_a_default_body_the_decorator_does_not_implement_is_found()
    {
        Assert.Equal(["Int32 Added()"], LeftToDefaults(typeof(IGrowing), typeof(Decorating)));
    }

    private static List<string> LeftToDefaults(Type contract, Type decorator)
    {
        InterfaceMapping map = decorator.GetInterfaceMap(contract);
        var notOwn = new List<string>();
        for (int i = 0; i < map.InterfaceMethods.Length; i++)
        {
            if (map.TargetMethods[i].DeclaringType != decorator) notOwn.Add(map.InterfaceMethods[i].ToString()!);
        }
        return notOwn;
    }

    /// <summary>An interface as a later SDK release might change one: a member added with a default body.</summary>
    public interface IGrowing
    {
        int Existing();

        int Added() => 0;
    }

    private sealed class Decorating : IGrowing
    {
        public int Existing() => 1;
    }
}
