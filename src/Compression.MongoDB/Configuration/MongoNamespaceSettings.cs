using System.Diagnostics.CodeAnalysis;
using Compression.Dictionaries;
using Microsoft.Extensions.Options;

namespace Compression.MongoDB.Configuration;

/// <summary>
/// The MongoDB adapter's own per-namespace setting, <c>ClearFields</c>: top-level fields stored beside <c>_z</c>, not in
/// it (<see cref="StoredLayout"/>). <c>AddMongoDB</c> declares it, so it binds from <c>Compression:Namespaces:&lt;ns&gt;:ClearFields</c>
/// and <c>Compression:Defaults:ClearFields</c> into <see cref="NamespaceOptions.AdapterSettings"/>, and checks its values
/// at start-up with Core's other settings.
/// </summary>
internal static class MongoNamespaceSettings
{
    /// <summary>The setting's key in a namespace's section.</summary>
    public const string ClearFields = "ClearFields";

    /// <summary>The clear fields a namespace's handle was made with (none when not configured).</summary>
    public static IReadOnlyList<string> ClearFieldsOf(CompressionNamespace @namespace) =>
        @namespace.AdapterSettings.TryGetValue(ClearFields, out IReadOnlyList<string>? fields) ? fields : [];

    /// <summary>The clear fields of a namespace's settings (none when not configured).</summary>
    public static IList<string> ClearFieldsOf(NamespaceOptions settings) =>
        settings.AdapterSettings is { } adapter && adapter.TryGetValue(ClearFields, out IList<string>? fields) && fields is not null ? fields : [];

    /// <summary>The start-up errors of the clear fields of one namespace's settings, each naming the key and what is allowed.</summary>
    public static IEnumerable<string> Validate(NamespaceOptions settings, string prefix)
    {
        if (settings.AdapterSettings is null || !settings.AdapterSettings.TryGetValue(ClearFields, out IList<string>? fields)) yield break;
        if (fields is null)
        {
            yield return $"{prefix}:{ClearFields}: null; allowed: a list of top-level field names.";
            yield break;
        }
        foreach (string? field in fields)
        {
            if (!IsClearFieldName(field)) yield return $"{prefix}:{ClearFields}: '{field}' is not a clear field; allowed: {AllowedClearFieldNames}.";
        }
    }

    /// <summary>What <see cref="IsClearFieldName"/> allows, for messages.</summary>
    public const string AllowedClearFieldNames = "top-level field names, not empty, without '.', not starting with '$', not '" + StoredLayout.CompressedName + "'";

    /// <summary>Whether <paramref name="field"/> can be a clear field: a top-level element name other than the envelope's.</summary>
    public static bool IsClearFieldName([NotNullWhen(true)] string? field) =>
        !string.IsNullOrEmpty(field) && !field.Contains('.', StringComparison.Ordinal) && !field.StartsWith('$') && field != StoredLayout.CompressedName;
}

/// <summary>Checks <c>ClearFields</c> with the engine's options at start-up: its failures join Core's in one message.</summary>
internal sealed class MongoNamespaceSettingsValidator : IValidateOptions<CompressionEngineOptions>
{
    public ValidateOptionsResult Validate(string? name, CompressionEngineOptions options)
    {
        var failures = new List<string>();
        string root = CompressionEngineOptions.SectionName;
        if (options.Defaults is { } defaults) failures.AddRange(MongoNamespaceSettings.Validate(defaults, $"{root}:{nameof(CompressionEngineOptions.Defaults)}"));
        if (options.Namespaces is { } namespaces)
        {
            foreach ((string ns, NamespaceOptions settings) in namespaces)
            {
                if (settings is not null) failures.AddRange(MongoNamespaceSettings.Validate(settings, $"{root}:{nameof(CompressionEngineOptions.Namespaces)}:{ns}"));
            }
        }
        return failures.Count == 0 ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(failures);
    }
}
