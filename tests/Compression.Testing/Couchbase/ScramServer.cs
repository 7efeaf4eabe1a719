using System.Diagnostics.CodeAnalysis;
using System.Security.Cryptography;
using System.Text;

namespace Compression.Testing.Couchbase;

/// <summary>
/// The server side of SCRAM-SHA-1/256/512 (RFC 5802, no channel binding) as Couchbase Server speaks it over
/// SASL_AUTH / SASL_STEP: the client proof is computed from the configured password and checked, and the server
/// signature is returned in the final message.
/// </summary>
internal sealed class ScramServer
{
    private readonly string _mechanism;
    private readonly HashAlgorithmName _hash;
    private readonly int _hashLength;
    private readonly string _expectedUser;
    private readonly byte[] _saltedPassword;
    private readonly byte[] _salt;
    private readonly int _iterations;
    private string? _clientFirstBare;
    private string? _serverFirst;
    private string? _nonce;
    private bool _userKnown;

    private ScramServer(string mechanism, HashAlgorithmName hash, int hashLength, string user, string password, byte[] salt, int iterations)
    {
        _mechanism = mechanism;
        _hash = hash;
        _hashLength = hashLength;
        _expectedUser = user;
        _salt = salt;
        _iterations = iterations;
        _saltedPassword = Rfc2898DeriveBytes.Pbkdf2(
            Encoding.UTF8.GetBytes(password.Normalize(NormalizationForm.FormKC)), salt, iterations, hash, hashLength);
    }

    /// <summary>The SASL mechanism names this class implements, strongest first.</summary>
    public static IReadOnlyList<string> Mechanisms { get; } = ["SCRAM-SHA512", "SCRAM-SHA256", "SCRAM-SHA1"];

    public static bool TryCreate(string mechanism, string user, string password, byte[] salt, int iterations, [NotNullWhen(true)] out ScramServer? server)
    {
        (HashAlgorithmName hash, int length)? algorithm = mechanism switch
        {
            "SCRAM-SHA512" => (HashAlgorithmName.SHA512, 64),
            "SCRAM-SHA256" => (HashAlgorithmName.SHA256, 32),
            "SCRAM-SHA1" => (HashAlgorithmName.SHA1, 20),
            _ => null,
        };
        server = algorithm is { } a ? new ScramServer(mechanism, a.hash, a.length, user, password, salt, iterations) : null;
        return server is not null;
    }

    public string Mechanism => _mechanism;

    /// <summary>Handles the client-first message; returns the server-first message, or null with a reason.</summary>
    public string? Start(string clientFirst, out string? error)
    {
        error = null;
        // gs2-header: "n,," (no channel binding, no authzid) is all Couchbase clients send over plain TCP.
        if (!clientFirst.StartsWith("n,,", StringComparison.Ordinal))
        {
            error = "SCRAM: only the gs2 header \"n,,\" (no channel binding) is supported";
            return null;
        }

        _clientFirstBare = clientFirst[3..];
        Dictionary<char, string> attributes = ParseAttributes(_clientFirstBare);
        if (!attributes.TryGetValue('n', out string? user) || !attributes.TryGetValue('r', out string? clientNonce) || clientNonce.Length == 0)
        {
            error = "SCRAM: client-first message without n= or r=";
            return null;
        }

        user = user.Replace("=2C", ",", StringComparison.Ordinal).Replace("=3D", "=", StringComparison.Ordinal);
        // An unknown user still gets a server-first message (as real servers do); the proof check fails later.
        _userKnown = string.Equals(user, _expectedUser, StringComparison.Ordinal);
        _nonce = clientNonce + Convert.ToBase64String(RandomNumberGenerator.GetBytes(18));
        _serverFirst = $"r={_nonce},s={Convert.ToBase64String(_salt)},i={_iterations}";
        return _serverFirst;
    }

    /// <summary>Handles the client-final message; returns "v=ServerSignature" when the proof is right, else null with a reason.</summary>
    public string? Finish(string clientFinal, out string? error)
    {
        error = null;
        if (_clientFirstBare is null || _serverFirst is null || _nonce is null)
        {
            error = "SCRAM: SASL_STEP before SASL_AUTH";
            return null;
        }

        int proofAt = clientFinal.LastIndexOf(",p=", StringComparison.Ordinal);
        if (proofAt < 0)
        {
            error = "SCRAM: client-final message without p=";
            return null;
        }

        string withoutProof = clientFinal[..proofAt];
        Dictionary<char, string> attributes = ParseAttributes(withoutProof);
        if (!attributes.TryGetValue('c', out string? binding) || binding != "biws")
        {
            error = "SCRAM: channel binding must be c=biws (base64 of \"n,,\")";
            return null;
        }

        if (!attributes.TryGetValue('r', out string? nonce) || nonce != _nonce)
        {
            error = "SCRAM: nonce does not match the server-first message";
            return null;
        }

        byte[] proof;
        try
        {
            proof = Convert.FromBase64String(clientFinal[(proofAt + 3)..]);
        }
        catch (FormatException)
        {
            error = "SCRAM: client proof is not base64";
            return null;
        }

        string authMessage = $"{_clientFirstBare},{_serverFirst},{withoutProof}";
        byte[] clientKey = Hmac(_saltedPassword, "Client Key");
        byte[] storedKey = Digest(clientKey);
        byte[] clientSignature = Hmac(storedKey, authMessage);
        if (proof.Length != _hashLength)
        {
            error = $"SCRAM: client proof has {proof.Length} bytes, {_mechanism} needs {_hashLength}";
            return null;
        }

        // RFC 5802 section 3: recover ClientKey from the proof and compare its hash with StoredKey.
        for (int i = 0; i < proof.Length; i++)
        {
            proof[i] ^= clientSignature[i];
        }

        if (!_userKnown || !CryptographicOperations.FixedTimeEquals(Digest(proof), storedKey))
        {
            error = "SCRAM: authentication failed (unknown user or wrong password)";
            return null;
        }

        byte[] serverKey = Hmac(_saltedPassword, "Server Key");
        return "v=" + Convert.ToBase64String(Hmac(serverKey, authMessage));
    }

    private byte[] Hmac(byte[] key, string data)
    {
        byte[] bytes = Encoding.UTF8.GetBytes(data);
        return _hashLength switch
        {
            64 => HMACSHA512.HashData(key, bytes),
            32 => HMACSHA256.HashData(key, bytes),
            _ => HMACSHA1.HashData(key, bytes),
        };
    }

    private byte[] Digest(byte[] data) => _hashLength switch
    {
        64 => SHA512.HashData(data),
        32 => SHA256.HashData(data),
        _ => SHA1.HashData(data),
    };

    private static Dictionary<char, string> ParseAttributes(string message)
    {
        var attributes = new Dictionary<char, string>();
        foreach (string part in message.Split(','))
        {
            if (part.Length >= 2 && part[1] == '=')
            {
                attributes[part[0]] = part[2..];
            }
        }

        return attributes;
    }

    public override string ToString() => $"{_mechanism} ({_hash.Name})";
}
