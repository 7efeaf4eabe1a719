using Compression.Testing;
using Xunit;

namespace Compression.Tool.Tests.Live;

/// <summary>
/// A connection string nothing answers at: one line naming the address and the cause, exit code 1, nothing on stdout
/// (docz as a child process, as a user runs it; docs/docz.md, "A server that does not answer"). Nothing here is timed:
/// the child process gets minutes, only as a guard against a hang.
/// </summary>
public sealed class NoServerTests
{
    private static readonly TimeSpan HangGuard = TimeSpan.FromMinutes(5);

    [Fact]
    public async Task Verify_ConnectionRefused_OneLineNamingTheAddressAndTheCause_Exit1()
    {
        int port = UnusedPort.Take();
        using var docz = ChildDocz.Start("verify", "--connection", $"mongodb://127.0.0.1:{port}/", "--namespace", "shop.orders");
        using var guard = new CancellationTokenSource(HangGuard);

        var (exit, output, error) = await docz.WaitAsync(guard.Token);

        Assert.True(exit == 1, $"exit {exit}\nstdout:\n{output}\nstderr:\n{error}");
        Assert.Equal("", output);
        Assert.Equal(
            $"verify: no MongoDB server answered at 127.0.0.1:{port} (Connection refused); check the connection string, or try docz with --loopback (an in-memory test double, no server)",
            error.TrimEnd());
    }
}
