using System.Buffers.Binary;
using System.Collections.Concurrent;
using System.Net;
using System.Net.Sockets;
using System.Text;

namespace Compression.Tool.Tests.Live;

/// <summary>
/// A TCP proxy between a child <c>docz</c> process and the MongoDB server that kills the child at an exact operation
/// boundary: at the <see cref="Arm"/>ed count of counted commands (every command but the handshake and monitoring ones),
/// either before the request reaches the server (the operation never happened) or after the server has done it and
/// replied, before the child reads the reply (the operation happened, the child never knew). No clock is involved.
/// </summary>
internal sealed class KillSwitchProxy : IAsyncDisposable
{
    private static readonly HashSet<string> NotCounted = new(StringComparer.OrdinalIgnoreCase) { "hello", "isMaster", "ping", "buildInfo", "endSessions" };

    private readonly TcpListener _listener = new(IPAddress.Loopback, 0);
    private readonly IPEndPoint _server;
    private readonly ConcurrentDictionary<Socket, byte> _sockets = new();
    private readonly CancellationTokenSource _stop = new();
    private readonly object _gate = new();
    private readonly Task _accepting;
    private int _counted;
    private int _killAt;
    private bool _afterReply;
    private Action? _kill;

    public KillSwitchProxy(IPEndPoint server)
    {
        _server = server;
        _listener.Start();
        _accepting = AcceptAsync();
    }

    public int Port => ((IPEndPoint)_listener.LocalEndpoint).Port;

    /// <summary>The command at which the last kill happened, and whether it was done by the server.</summary>
    public string? KilledAt { get; private set; }

    /// <summary>Kills (with <paramref name="kill"/>) at the <paramref name="killAt"/>-th counted command from now; 0 disarms.</summary>
    public void Arm(int killAt, bool afterReply, Action? kill)
    {
        lock (_gate)
        {
            _counted = 0;
            _killAt = killAt;
            _afterReply = afterReply;
            _kill = kill;
            KilledAt = null;
        }
    }

    private async Task AcceptAsync()
    {
        while (!_stop.IsCancellationRequested)
        {
            Socket client;
            try
            {
                client = await _listener.AcceptSocketAsync(_stop.Token);
            }
            catch (Exception ex) when (ex is OperationCanceledException or SocketException or ObjectDisposedException)
            {
                return;
            }
            var server = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
            client.NoDelay = true;
            try
            {
                await server.ConnectAsync(_server, _stop.Token);
            }
            catch (Exception ex) when (ex is OperationCanceledException or SocketException)
            {
                client.Dispose();
                server.Dispose();
                continue;
            }
            _sockets[client] = 0;
            _sockets[server] = 0;
            var connection = new Connection();
            _ = PumpAsync(client, server, connection, requests: true);
            _ = PumpAsync(server, client, connection, requests: false);
        }
    }

    private sealed class Connection
    {
        public volatile bool KillOnNextReply;
    }

    private async Task PumpAsync(Socket from, Socket to, Connection connection, bool requests)
    {
        byte[] header = new byte[16];
        try
        {
            while (true)
            {
                if (!await ReadExactlyAsync(from, header)) break;
                int length = BinaryPrimitives.ReadInt32LittleEndian(header);
                byte[] message = new byte[length];
                header.CopyTo(message, 0);
                if (!await ReadExactlyAsync(from, message.AsMemory(16))) break;

                if (requests && CommandName(message) is { } name && !NotCounted.Contains(name))
                {
                    Action? kill = null;
                    lock (_gate)
                    {
                        if (_killAt > 0 && ++_counted == _killAt)
                        {
                            KilledAt = $"{name} ({(_afterReply ? "done, reply lost" : "never sent")})";
                            if (_afterReply) connection.KillOnNextReply = true;
                            else kill = _kill;
                            _killAt = 0;
                        }
                    }
                    if (kill is not null)
                    {
                        kill();
                        break;
                    }
                }
                if (!requests && connection.KillOnNextReply)
                {
                    connection.KillOnNextReply = false;
                    Action? kill;
                    lock (_gate) kill = _kill;
                    kill?.Invoke();
                    break;
                }
                await to.SendAsync(message, SocketFlags.None);
            }
        }
        catch (Exception ex) when (ex is SocketException or ObjectDisposedException or OperationCanceledException)
        {
        }
        finally
        {
            Close(from);
            Close(to);
        }
    }

    private void Close(Socket socket)
    {
        if (!_sockets.TryRemove(socket, out _)) return;
        try
        {
            socket.Shutdown(SocketShutdown.Both);
        }
        catch (SocketException)
        {
        }
        socket.Dispose();
    }

    /// <summary>The command name of an OP_MSG (its body's first element) or of the OP_QUERY handshake.</summary>
    private static string? CommandName(byte[] message)
    {
        int opCode = BinaryPrimitives.ReadInt32LittleEndian(message.AsSpan(12));
        int at;
        if (opCode == 2013)
        {
            at = 20;
            while (at < message.Length && message[at] == 1) at += 1 + BinaryPrimitives.ReadInt32LittleEndian(message.AsSpan(at + 1)); // document sequences
            if (at >= message.Length) return null;
            at += 1 + 4 + 1; // kind 0, document length, first element's type
        }
        else if (opCode == 2004)
        {
            at = 20;
            at = Array.IndexOf(message, (byte)0, at) + 1 + 8 + 4 + 1; // collection name, skip, return, document length, type
        }
        else
        {
            return null;
        }
        int end = Array.IndexOf(message, (byte)0, at);
        return end < 0 ? null : Encoding.UTF8.GetString(message, at, end - at);
    }

    private static async Task<bool> ReadExactlyAsync(Socket socket, Memory<byte> buffer)
    {
        int read = 0;
        while (read < buffer.Length)
        {
            int n = await socket.ReceiveAsync(buffer[read..], SocketFlags.None);
            if (n == 0) return false;
            read += n;
        }
        return true;
    }

    /// <summary>Closes every connection (after a kill, so the server sees them go).</summary>
    public void DropAll()
    {
        foreach (Socket socket in _sockets.Keys) Close(socket);
    }

    public async ValueTask DisposeAsync()
    {
        _stop.Cancel();
        _listener.Stop();
        DropAll();
        await _accepting;
        _stop.Dispose();
    }
}
