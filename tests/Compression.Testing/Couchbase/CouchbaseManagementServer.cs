using System.Globalization;
using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Text.Json;

namespace Compression.Testing.Couchbase;

/// <summary>
/// The loopback server's management (HTTP) service, for what SDK 3.x's bucket and collection managers send about the
/// one bucket: its settings (<c>GET /pools/default/buckets/{bucket}</c>), its scopes (<c>GET .../scopes</c>), and
/// creating a scope or a collection (<c>POST .../scopes</c>, <c>POST .../scopes/{scope}/collections</c>, form-encoded, as
/// Couchbase Server 7.x answers them). HTTP Basic authentication with the server's user; with
/// <see cref="CouchbaseLoopbackServerOptions.ManagementAccess"/> false every request is 403, as for a user whose roles
/// do not reach the bucket's settings. Anything else is 404, logged and recorded in <see cref="CouchbaseLoopbackServer.UnknownManagementRequests"/>.
/// </summary>
internal sealed class CouchbaseManagementServer : IAsyncDisposable
{
    private readonly HttpListener _listener;
    private readonly CouchbaseLoopbackServerOptions _options;
    private readonly KvCollectionManifest _manifest;
    private readonly Action<string> _log;
    private readonly Action<string> _unknown;
    private readonly Task _loop;

    private CouchbaseManagementServer(HttpListener listener, int port, CouchbaseLoopbackServerOptions options, KvCollectionManifest manifest, Action<string> log, Action<string> unknown)
    {
        _listener = listener;
        Port = port;
        _options = options;
        _manifest = manifest;
        _log = log;
        _unknown = unknown;
        _loop = Task.Run(LoopAsync);
    }

    /// <summary>The port it listens on (127.0.0.1).</summary>
    public int Port { get; }

    /// <summary>Starts on <paramref name="port"/>, or on a free port when it is 0.</summary>
    public static CouchbaseManagementServer Start(int port, CouchbaseLoopbackServerOptions options, KvCollectionManifest manifest, Action<string> log, Action<string> unknown)
    {
        for (int attempt = 0; ; attempt++)
        {
            int chosen = port != 0 ? port : FreePort();
            var listener = new HttpListener();
            listener.Prefixes.Add($"http://127.0.0.1:{chosen}/");
            try
            {
                listener.Start();
                return new CouchbaseManagementServer(listener, chosen, options, manifest, log, unknown);
            }
            catch (HttpListenerException) when (port == 0 && attempt < 20)
            {
                listener.Close(); // the free port was taken in between: another one
            }
        }
    }

    private static int FreePort()
    {
        using var probe = new TcpListener(IPAddress.Loopback, 0);
        probe.Start();
        return ((IPEndPoint)probe.LocalEndpoint).Port;
    }

    private async Task LoopAsync()
    {
        while (_listener.IsListening)
        {
            HttpListenerContext context;
            try
            {
                context = await _listener.GetContextAsync().ConfigureAwait(false);
            }
            catch (Exception e) when (e is HttpListenerException or ObjectDisposedException or InvalidOperationException)
            {
                return;
            }

            try
            {
                await AnswerAsync(context).ConfigureAwait(false);
            }
            catch (Exception e) when (e is HttpListenerException or IOException or ObjectDisposedException)
            {
                _log($"management: {context.Request.HttpMethod} {context.Request.Url?.AbsolutePath}: {e.Message}");
            }
        }
    }

    private async Task AnswerAsync(HttpListenerContext context)
    {
        HttpListenerRequest request = context.Request;
        string path = request.Url!.AbsolutePath.TrimEnd('/');
        string[] parts = [.. path.Split('/', StringSplitOptions.RemoveEmptyEntries).Select(Uri.UnescapeDataString)];
        (int status, string body) = !Authenticated(request) ? (401, "Unauthorized")
            : !_options.ManagementAccess ? (403, $$"""{"message":"Forbidden. User needs the following permissions","permissions":["cluster.bucket[{{_options.BucketName}}].settings!read"]}""")
            : Route(request.HttpMethod, parts, request.HasEntityBody ? await ReadFormAsync(request).ConfigureAwait(false) : []);
        _log($"management: {request.HttpMethod} {path} -> {status}");
        byte[] bytes = Encoding.UTF8.GetBytes(body);
        context.Response.StatusCode = status;
        context.Response.ContentType = body.StartsWith('{') || body.StartsWith('[') ? "application/json" : "text/plain";
        context.Response.ContentLength64 = bytes.Length;
        await context.Response.OutputStream.WriteAsync(bytes).ConfigureAwait(false);
        context.Response.Close();
    }

    private (int Status, string Body) Route(string method, string[] parts, Dictionary<string, string> form)
    {
        // pools/default/buckets/{bucket}[/scopes[/{scope}/collections]]
        if (parts.Length >= 4 && parts[0] == "pools" && parts[1] == "default" && parts[2] == "buckets")
        {
            if (parts[3] != _options.BucketName)
            {
                return (404, "Requested resource not found.");
            }

            switch (method, parts.Length)
            {
                case ("GET", 4):
                    return (200, BucketJson());
                case ("GET", 5) when parts[4] == "scopes":
                    return (200, ScopesJson());
                case ("POST", 5) when parts[4] == "scopes":
                    return Created(_manifest.CreateScope(form.GetValueOrDefault("name") ?? ""), $"Scope with name \"{form.GetValueOrDefault("name")}\" already exists", "");
                case ("POST", 7) when parts[4] == "scopes" && parts[6] == "collections":
                    uint? maxTtl = null;
                    if (form.TryGetValue("maxTTL", out string? ttl))
                    {
                        if (!uint.TryParse(ttl, NumberStyles.None, CultureInfo.InvariantCulture, out uint seconds) || seconds > int.MaxValue)
                        {
                            // Couchbase Server 7.6 takes -1 (never expire); this double does not.
                            return (400, """{"errors":{"maxTTL":"The value must be in range from 0 to 2147483647 (this test double does not take -1)"}}""");
                        }

                        maxTtl = seconds == 0 ? null : seconds;
                    }

                    return Created(_manifest.CreateCollection(parts[5], form.GetValueOrDefault("name") ?? "", maxTtl),
                        $"Collection with name \"{form.GetValueOrDefault("name")}\" in scope \"{parts[5]}\" already exists", $"Scope with name \"{parts[5]}\" is not found");
            }
        }

        _unknown($"{method} /{string.Join('/', parts)}");
        return (404, "Not found.");
    }

    private (int, string) Created(KvCollectionManifest.CreateResult result, string exists, string scopeNotFound) => result switch
    {
        KvCollectionManifest.CreateResult.Created => (200, $$"""{"uid":"{{_manifest.Uid.ToString("x", CultureInfo.InvariantCulture)}}"}"""),
        KvCollectionManifest.CreateResult.Exists => (400, $$$"""{"errors":{"name":{{{JsonSerializer.Serialize(exists)}}}}}"""),
        KvCollectionManifest.CreateResult.ScopeNotFound => (404, $$$"""{"errors":{"scope":{{{JsonSerializer.Serialize(scopeNotFound)}}}}}"""),
        _ => (400, """{"errors":{"name":"Can only contain characters A-Z, a-z, 0-9 and the following symbols _ - %"}}"""),
    };

    private bool Authenticated(HttpListenerRequest request)
    {
        string? header = request.Headers["Authorization"];
        if (header is null || !header.StartsWith("Basic ", StringComparison.Ordinal))
        {
            return false;
        }

        try
        {
            string credentials = Encoding.UTF8.GetString(Convert.FromBase64String(header[6..]));
            return credentials == $"{_options.Username}:{_options.Password}";
        }
        catch (FormatException)
        {
            return false;
        }
    }

    private static async Task<Dictionary<string, string>> ReadFormAsync(HttpListenerRequest request)
    {
        using var reader = new StreamReader(request.InputStream, Encoding.UTF8);
        string body = await reader.ReadToEndAsync().ConfigureAwait(false);
        var form = new Dictionary<string, string>(StringComparer.Ordinal);
        foreach (string pair in body.Split('&', StringSplitOptions.RemoveEmptyEntries))
        {
            int equals = pair.IndexOf('=', StringComparison.Ordinal);
            string key = WebUtility.UrlDecode(equals < 0 ? pair : pair[..equals]);
            form[key] = equals < 0 ? "" : WebUtility.UrlDecode(pair[(equals + 1)..]);
        }

        return form;
    }

    private string BucketJson()
    {
        using var buffer = new MemoryStream();
        using (var json = new Utf8JsonWriter(buffer))
        {
            json.WriteStartObject();
            json.WriteString("name", _options.BucketName);
            json.WriteString("bucketType", _options.BucketType);
            json.WriteNumber("maxTTL", (long)(_options.BucketMaxTtl ?? TimeSpan.Zero).TotalSeconds);
            json.WriteNumber("replicaNumber", _options.Replicas);
            json.WriteString("evictionPolicy", _options.EvictionPolicy);
            json.WriteString("durabilityMinLevel", "none");
            json.WriteString("conflictResolutionType", "seqno");
            json.WriteString("compressionMode", "passive");
            json.WriteString("storageBackend", "couchstore");
            json.WriteNumber("numVBuckets", KvBucketConfig.VBucketCount);
            json.WriteStartObject("quota");
            json.WriteNumber("ram", 104857600);
            json.WriteNumber("rawRAM", 104857600);
            json.WriteEndObject();
            json.WriteEndObject();
        }

        return Encoding.UTF8.GetString(buffer.ToArray());
    }

    private string ScopesJson()
    {
        using var buffer = new MemoryStream();
        using (var json = new Utf8JsonWriter(buffer))
        {
            json.WriteStartObject();
            json.WriteString("uid", _manifest.Uid.ToString("x", CultureInfo.InvariantCulture));
            json.WriteStartArray("scopes");
            foreach ((string scope, uint scopeId, IReadOnlyList<KvCollectionManifest.CollectionEntry> collections) in _manifest.Scopes())
            {
                json.WriteStartObject();
                json.WriteString("name", scope);
                json.WriteString("uid", scopeId.ToString("x", CultureInfo.InvariantCulture));
                json.WriteStartArray("collections");
                foreach (KvCollectionManifest.CollectionEntry collection in collections)
                {
                    json.WriteStartObject();
                    json.WriteString("name", collection.Name);
                    json.WriteString("uid", collection.Id.ToString("x", CultureInfo.InvariantCulture));
                    json.WriteNumber("maxTTL", collection.MaxTtlSeconds ?? 0); // 7.x lists 0 for "the bucket's"
                    json.WriteBoolean("history", false);
                    json.WriteEndObject();
                }

                json.WriteEndArray();
                json.WriteEndObject();
            }

            json.WriteEndArray();
            json.WriteEndObject();
        }

        return Encoding.UTF8.GetString(buffer.ToArray());
    }

    /// <inheritdoc />
    public async ValueTask DisposeAsync()
    {
        _listener.Stop();
        _listener.Close();
        await _loop.ConfigureAwait(false);
    }
}
