using System.Reflection;
using System.Runtime.Loader;
using Compression.Tool.Backends.MongoDB;
using Compression.Tool.Live;
using Microsoft.Extensions.Configuration;

namespace Compression.Tool.Backends;

/// <summary>
/// Finds the backend for a command line: null for MongoDB (built in: <see cref="MongoBackend"/>), the Couchbase plugin for a
/// <c>couchbase://</c> or <c>couchbases://</c> connection string. The plugin is <c>Compression.Tool.Couchbase.dll</c>
/// beside docz (or the file <c>DOCZ_COUCHBASE_PLUGIN</c> names), loaded with its own dependencies (the SDK) in a load
/// context of its own; whatever docz itself ships (Compression.Core, Compression.Extensions, Microsoft.Extensions.*) is shared with docz.
/// </summary>
internal static class CouchbasePlugin
{
    public const string AssemblyName = "Compression.Tool.Couchbase";

    public const string PathVariable = "DOCZ_COUCHBASE_PLUGIN";

    /// <summary>The configuration keys of a Couchbase connection string (the SDK's ClusterOptions section, or ConnectionStrings).</summary>
    public const string ConnectionKey = "Couchbase:ConnectionString";

    private static readonly Lock Gate = new();
    private static IDoczBackend? _loaded;

    public static bool IsCouchbase(string? connection) =>
        connection is not null && (connection.StartsWith("couchbase://", StringComparison.OrdinalIgnoreCase)
            || connection.StartsWith("couchbases://", StringComparison.OrdinalIgnoreCase));

    /// <summary>The connection string the command will use: <c>--connection</c>, else MongoDB's keys, else Couchbase's.</summary>
    public static string? Connection(LiveSettings settings, IConfiguration configuration) =>
        settings.Connection
        ?? configuration[MongoSession.ConnectionKey]
        ?? configuration.GetConnectionString("MongoDB")
        ?? configuration[ConnectionKey]
        ?? configuration.GetConnectionString("Couchbase");

    /// <summary>
    /// What the command says of an exception of the Couchbase SDK (from the plugin: the server could not be reached,
    /// refused, timed out...), or null when it is not one (<see cref="DoczBackends.Failure"/>).
    /// </summary>
    public static string? Failure(Exception exception) =>
        exception.GetType().FullName?.StartsWith("Couchbase.", StringComparison.Ordinal) == true
            ? $"Couchbase: {exception.GetType().Name}: {LiveRunner.FirstLine(exception.Message)}"
            : null;

    /// <summary>The Couchbase backend when the command line is for Couchbase; null for MongoDB.</summary>
    /// <exception cref="UsageException">It is for Couchbase and the plugin is missing or cannot be loaded; the message names what is missing.</exception>
    public static IDoczBackend? Find(LiveSettings settings)
    {
        if (!IsCouchbase(Connection(settings, LiveConfiguration.Read(settings.ConfigPath)))) return null;
        lock (Gate)
        {
            return _loaded ??= Load();
        }
    }

    private static IDoczBackend Load()
    {
        string path = Path.GetFullPath(Environment.GetEnvironmentVariable(PathVariable) is { Length: > 0 } set
            ? set
            : Path.Combine(AppContext.BaseDirectory, AssemblyName + ".dll"));
        const string how = "Build it where the CouchbaseNetClient package restores and put its output beside docz: " +
            "dotnet publish src/Compression.Tool.Couchbase -c Release -o <docz's directory> (or set " + PathVariable + " to its Compression.Tool.Couchbase.dll).";
        if (!File.Exists(path))
        {
            throw new UsageException($"A Couchbase connection string needs the Couchbase plugin of docz, and {path} does not exist. {how}");
        }
        try
        {
            var context = new PluginLoadContext(path);
            Assembly assembly = context.LoadFromAssemblyName(new AssemblyName(AssemblyName));
            Type type = assembly.GetTypes().FirstOrDefault(t => typeof(IDoczBackend).IsAssignableFrom(t) && t is { IsAbstract: false, IsInterface: false })
                ?? throw new UsageException($"{path} holds no docz backend (no type implements {nameof(IDoczBackend)}); it is not docz's Couchbase plugin or not of this version.");
            return (IDoczBackend)Activator.CreateInstance(type)!;
        }
        catch (Exception ex) when (ex is FileNotFoundException or FileLoadException or BadImageFormatException or ReflectionTypeLoadException or TypeLoadException)
        {
            string missing = ex switch
            {
                FileNotFoundException f when f.FileName is not null => $"{f.FileName} is missing",
                ReflectionTypeLoadException r when r.LoaderExceptions.OfType<FileNotFoundException>().FirstOrDefault() is { FileName: { } name } => $"{name} is missing",
                _ => ex.Message,
            };
            throw new UsageException($"The Couchbase plugin {path} cannot be loaded: {missing}. {how}");
        }
    }

    /// <summary>The plugin's own dependencies from its directory (its deps.json); anything docz ships comes from docz.</summary>
    private sealed class PluginLoadContext(string pluginPath) : AssemblyLoadContext("docz-couchbase")
    {
        private static readonly HashSet<string> HostAssemblies = new(
            ((AppContext.GetData("TRUSTED_PLATFORM_ASSEMBLIES") as string) ?? "").Split(Path.PathSeparator, StringSplitOptions.RemoveEmptyEntries)
                .Select(Path.GetFileNameWithoutExtension)!, StringComparer.OrdinalIgnoreCase);

        private readonly AssemblyDependencyResolver _resolver = new(pluginPath);
        private readonly string _directory = Path.GetDirectoryName(pluginPath)!;

        protected override Assembly? Load(AssemblyName assemblyName)
        {
            if (assemblyName.Name is null || HostAssemblies.Contains(assemblyName.Name)) return null; // shared with docz
            string? path = _resolver.ResolveAssemblyToPath(assemblyName);
            if (path is null)
            {
                string beside = Path.Combine(_directory, assemblyName.Name + ".dll");
                path = File.Exists(beside) ? beside : null;
            }
            return path is null ? null : LoadFromAssemblyPath(path);
        }

        protected override IntPtr LoadUnmanagedDll(string unmanagedDllName) =>
            _resolver.ResolveUnmanagedDllToPath(unmanagedDllName) is { } path ? LoadUnmanagedDllFromPath(path) : IntPtr.Zero;
    }
}
