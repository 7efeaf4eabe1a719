using Xunit;

namespace Compression.Tool.Tests.Live;

/// <summary>A couchbase:// connection string without the Couchbase plugin beside docz: bad usage, naming what is missing.</summary>
public sealed class CouchbasePluginMissingTests
{
    [Theory]
    [InlineData("verify")]
    [InlineData("stats")]
    [InlineData("train")]
    [InlineData("migrate")]
    [InlineData("recompress")]
    public void Every_live_command_says_the_plugin_is_missing_and_exits_2(string command)
    {
        var output = new StringWriter();
        var error = new StringWriter();
        int exit = Program.Run([command, "--connection", "couchbase://127.0.0.1:1", "--namespace", "default._default._default"], output, error);

        Assert.Equal(2, exit);
        Assert.Equal("", output.ToString());
        string message = error.ToString();
        Assert.Contains($"{command}: A Couchbase connection string needs the Couchbase plugin of docz", message, StringComparison.Ordinal);
        Assert.Contains(Path.Combine(AppContext.BaseDirectory, "Compression.Tool.Couchbase.dll"), message, StringComparison.Ordinal);
        Assert.Contains("dotnet publish src/Compression.Tool.Couchbase", message, StringComparison.Ordinal);
        Assert.DoesNotContain("   at ", message, StringComparison.Ordinal);
    }
}
