using System.Buffers.Binary;
using System.Net.Sockets;
using System.Security.Cryptography;
using System.Text;
using Xunit;

namespace Compression.Testing.Couchbase;

/// <summary>
/// A minimal memcached binary protocol client, with a SCRAM client side written from RFC 5802, for testing the loopback
/// KV server byte by byte: one request at a time, each reply read whole. Linked into every test project that talks to
/// the server without the SDK.
/// </summary>
internal sealed class KvRawClient : IDisposable
{
    /// <summary>What HELLO asks of a 7.x server by default: XERROR, SELECT_BUCKET, JSON, alternate requests, collections, PRESERVE_TTL.</summary>
    public static readonly ushort[] SevenDotXFeatures = [0x07, 0x08, 0x0b, 0x10, 0x12, 0x14];

    private readonly TcpClient _tcp;
    private readonly NetworkStream _stream;
    private uint _opaque;

    private KvRawClient(TcpClient tcp)
    {
        _tcp = tcp;
        _stream = tcp.GetStream();
    }

    public static async Task<KvRawClient> ConnectAsync(int port)
    {
        var tcp = new TcpClient();
        await tcp.ConnectAsync("127.0.0.1", port);
        return new KvRawClient(tcp);
    }

    /// <summary>Connects, says HELLO with <paramref name="features"/> (all of them acknowledged, else the test fails), authenticates and selects the bucket.</summary>
    public static async Task<KvRawClient> OpenBucketAsync(CouchbaseLoopbackServer server, params ushort[] features)
    {
        KvRawClient client = await ConnectAsync(server.Port);
        try
        {
            KvRawResponse hello = await client.CallAsync(KvProtocol.Opcodes.Hello, key: "raw-client", value: [.. features.SelectMany(f => new[] { (byte)(f >> 8), (byte)f })]);
            Assert.Equal(0, hello.Status);
            Assert.Equal(features.Length * 2, hello.Value.Length);
            Assert.True(await client.AuthenticateAsync("SCRAM-SHA512", server.Username, server.Password));
            Assert.Equal(0, (await client.CallAsync(KvProtocol.Opcodes.SelectBucket, key: server.BucketName)).Status);
            return client;
        }
        catch
        {
            client.Dispose();
            throw;
        }
    }

    public async Task<bool> AuthenticateAsync(string mechanism, string user, string password)
    {
        string clientNonce = Convert.ToBase64String(RandomNumberGenerator.GetBytes(18));
        string clientFirstBare = $"n={user},r={clientNonce}";
        (ushort status, byte[] first) = await CallAsync(KvProtocol.Opcodes.SaslAuth, key: mechanism, value: Encoding.UTF8.GetBytes("n,," + clientFirstBare));
        Assert.Equal(KvProtocol.Status.AuthContinue, status);
        string serverFirst = Encoding.UTF8.GetString(first);
        Dictionary<char, string> attributes = serverFirst.Split(',').ToDictionary(a => a[0], a => a[2..]);
        Assert.StartsWith(clientNonce, attributes['r'], StringComparison.Ordinal);

        (HashAlgorithmName hash, int length) = mechanism switch
        {
            "SCRAM-SHA512" => (HashAlgorithmName.SHA512, 64),
            "SCRAM-SHA256" => (HashAlgorithmName.SHA256, 32),
            _ => (HashAlgorithmName.SHA1, 20),
        };
        byte[] salted = Rfc2898DeriveBytes.Pbkdf2(Encoding.UTF8.GetBytes(password), Convert.FromBase64String(attributes['s']), int.Parse(attributes['i'], System.Globalization.CultureInfo.InvariantCulture), hash, length);
        string withoutProof = $"c=biws,r={attributes['r']}";
        string authMessage = $"{clientFirstBare},{serverFirst},{withoutProof}";
        byte[] clientKey = Hmac(hash, salted, "Client Key");
        byte[] signature = Hmac(hash, Digest(hash, clientKey), authMessage);
        byte[] proof = [.. clientKey.Zip(signature, (a, b) => (byte)(a ^ b))];
        (status, byte[] final) = await CallAsync(KvProtocol.Opcodes.SaslStep, key: mechanism, value: Encoding.UTF8.GetBytes($"{withoutProof},p={Convert.ToBase64String(proof)}"));
        if (status != 0)
        {
            Assert.Equal(KvProtocol.Status.AuthError, status);
            return false;
        }

        string expected = "v=" + Convert.ToBase64String(Hmac(hash, Hmac(hash, salted, "Server Key"), authMessage));
        Assert.Equal(expected, Encoding.UTF8.GetString(final));
        return true;
    }

    /// <summary>Sends a request with a text key and reads its response; with <paramref name="framing"/>, as a flexible-framing request (magic 0x08).</summary>
    public Task<KvRawResponse> CallAsync(byte opcode, string key = "", byte[]? value = null, byte[]? framing = null, byte[]? extras = null)
        => CallAsync(opcode, Encoding.UTF8.GetBytes(key), value, framing, extras);

    /// <summary>Sends a request with <paramref name="key"/> as given (a collection id prefix included) and reads its response.</summary>
    public async Task<KvRawResponse> CallAsync(byte opcode, byte[] key, byte[]? value = null, byte[]? framing = null, byte[]? extras = null, ulong cas = 0)
    {
        uint opaque = framing is null
            ? await SendAsync(KvProtocol.RequestMagic, opcode, extras ?? [], key, value ?? [], cas: cas)
            : await SendAsync(KvProtocol.FlexibleRequestMagic, opcode, extras ?? [], key, value ?? [], framing, cas);
        KvRawResponse response = await ReadAsync();
        Assert.Equal(opcode, response.Opcode);
        Assert.Equal(opaque, response.Opaque);
        return response;
    }

    /// <summary>Reads the next response, whichever request it answers.</summary>
    public async Task<KvRawResponse> ReadAsync()
    {
        var header = new byte[KvProtocol.HeaderLength];
        await _stream.ReadExactlyAsync(header);
        Assert.Equal(KvProtocol.ResponseMagic, header[0]);
        var body = new byte[BinaryPrimitives.ReadUInt32BigEndian(header.AsSpan(8))];
        await _stream.ReadExactlyAsync(body);
        int extrasLength = header[4];
        int skip = extrasLength + BinaryPrimitives.ReadUInt16BigEndian(header.AsSpan(2));
        return new KvRawResponse(BinaryPrimitives.ReadUInt16BigEndian(header.AsSpan(6)), body[..extrasLength], body[skip..], header[5],
            BinaryPrimitives.ReadUInt64BigEndian(header.AsSpan(16)), header[1], BinaryPrimitives.ReadUInt32BigEndian(header.AsSpan(12)));
    }

    /// <summary>
    /// Sends <paramref name="requests"/> (opcode, key, flexible framing or null) pipelined, in one write, so that the server
    /// finds them all buffered; returns their opaques in order. Read the replies with <see cref="ReadAsync"/>.
    /// </summary>
    public async Task<uint[]> SendPipelineAsync(params (byte Opcode, byte[] Key, byte[]? Framing)[] requests)
    {
        var opaques = new uint[requests.Length];
        using var pipeline = new MemoryStream();
        for (int i = 0; i < requests.Length; i++)
        {
            (byte opcode, byte[] key, byte[]? framing) = requests[i];
            byte magic = framing is null ? KvProtocol.RequestMagic : KvProtocol.FlexibleRequestMagic;
            pipeline.Write(BuildRequest(magic, opcode, [], key, [], framing, out opaques[i]));
        }

        await _stream.WriteAsync(pipeline.ToArray());
        return opaques;
    }

    public async Task<uint> SendAsync(byte magic, byte opcode, byte[] extras, byte[] key, byte[] value, byte[]? framing = null, ulong cas = 0)
    {
        await _stream.WriteAsync(BuildRequest(magic, opcode, extras, key, value, framing, out uint opaque, cas));
        return opaque;
    }

    private byte[] BuildRequest(byte magic, byte opcode, byte[] extras, byte[] key, byte[] value, byte[]? framing, out uint opaque, ulong cas = 0)
    {
        opaque = ++_opaque;
        framing ??= [];
        int body = framing.Length + extras.Length + key.Length + value.Length;
        var request = new byte[KvProtocol.HeaderLength + body];
        request[0] = magic;
        request[1] = opcode;
        if (magic == KvProtocol.FlexibleRequestMagic)
        {
            request[2] = (byte)framing.Length;
            request[3] = (byte)key.Length;
        }
        else
        {
            BinaryPrimitives.WriteUInt16BigEndian(request.AsSpan(2), (ushort)key.Length);
        }

        request[4] = (byte)extras.Length;
        BinaryPrimitives.WriteUInt32BigEndian(request.AsSpan(8), (uint)body);
        BinaryPrimitives.WriteUInt32BigEndian(request.AsSpan(12), opaque);
        BinaryPrimitives.WriteUInt64BigEndian(request.AsSpan(16), cas);
        framing.CopyTo(request, KvProtocol.HeaderLength);
        extras.CopyTo(request, KvProtocol.HeaderLength + framing.Length);
        key.CopyTo(request, KvProtocol.HeaderLength + framing.Length + extras.Length);
        value.CopyTo(request, KvProtocol.HeaderLength + framing.Length + extras.Length + key.Length);
        return request;
    }

    /// <summary>Reads until the server closes the connection; returns the bytes read.</summary>
    public async Task<int> ReadToEndAsync()
    {
        var buffer = new byte[256];
        int total = 0;
        int read;
        while ((read = await _stream.ReadAsync(buffer)) > 0)
        {
            total += read;
        }

        return total;
    }

    public void Dispose() => _tcp.Dispose();

    private static byte[] Hmac(HashAlgorithmName hash, byte[] key, string data)
        => CryptographicOperations.HmacData(hash, key, Encoding.UTF8.GetBytes(data));

    private static byte[] Digest(HashAlgorithmName hash, byte[] data) => CryptographicOperations.HashData(hash, data);
}

/// <summary>A reply as <see cref="KvRawClient"/> read it: status, extras, value (after extras and key), datatype, CAS, and the opcode and opaque it answers.</summary>
internal sealed record KvRawResponse(ushort Status, byte[] Extras, byte[] Value, byte DataType, ulong Cas, byte Opcode, uint Opaque)
{
    /// <summary>Status and value, what most tests look at.</summary>
    public void Deconstruct(out ushort status, out byte[] value)
    {
        status = Status;
        value = Value;
    }
}
