using System.Globalization;
using System.Reflection;
using Compression.Dictionaries;
using Microsoft.Extensions.Configuration;

namespace Compression.Configuration;

/// <summary>
/// Binds the <c>Compression</c> section onto <see cref="CompressionEngineOptions"/>, collecting one message per bad key
/// instead of throwing at the first: unknown keys, values that do not parse, with the key's full path and the allowed
/// values. A namespace's section starts from <see cref="CompressionEngineOptions.Defaults"/>. Ranges are checked
/// afterwards by <see cref="CompressionEngineOptions.Validate"/>. The names adapters declared (the last argument of
/// <see cref="Bind"/>) are keys of a namespace's section like the others, bound as lists of names into
/// <see cref="NamespaceOptions.AdapterSettings"/>; the adapter checks their values.
/// </summary>
internal sealed class CompressionConfigurationBinder
{
    private readonly IReadOnlyList<string> _adapterSettings;
    private readonly IReadOnlyList<string> _adapterSections;

    private CompressionConfigurationBinder(IReadOnlyList<string> adapterSettings, IReadOnlyList<string> adapterSections)
    {
        _adapterSettings = adapterSettings;
        _adapterSections = adapterSections;
    }

    /// <param name="section">The <c>Compression</c> section.</param>
    /// <param name="options">What it is bound onto.</param>
    /// <param name="errors">Where each bad key's message goes.</param>
    /// <param name="adapterSettings">Per-namespace settings adapters declared.</param>
    /// <param name="adapterSections">Sections of <c>Compression</c> adapters bind themselves (skipped here).</param>
    public static void Bind(IConfigurationSection section, CompressionEngineOptions options, List<string> errors, IEnumerable<string>? adapterSettings = null,
        IEnumerable<string>? adapterSections = null) =>
        new CompressionConfigurationBinder([.. (adapterSettings ?? []).Distinct(StringComparer.OrdinalIgnoreCase)], [.. adapterSections ?? []])
            .BindRoot(section, options, errors);

    private void BindRoot(IConfigurationSection section, CompressionEngineOptions options, List<string> errors)
    {
        if (IsValue(section))
        {
            errors.Add($"{section.Path}: '{section.Value}' is a value; allowed: a section of settings ({nameof(CompressionEngineOptions.Defaults)}, {nameof(CompressionEngineOptions.Namespaces)}, {string.Join(", ", Settable(typeof(CompressionEngineOptions)).Where(p => p.Name != nameof(CompressionEngineOptions.Defaults)).Select(p => p.Name))}).");
            return;
        }
        if (section.GetSection(nameof(CompressionEngineOptions.Defaults)) is { } defaults && defaults.Exists())
            BindObject(defaults, options.Defaults, errors);
        foreach (var child in section.GetChildren())
        {
            switch (child.Key)
            {
                case var k when Is(k, nameof(CompressionEngineOptions.Defaults)) || _adapterSections.Any(s => Is(k, s)):
                    break;
                case var k when Is(k, nameof(CompressionEngineOptions.Namespaces)):
                    if (IsValue(child))
                        errors.Add($"{child.Path}: '{child.Value}' is a value; allowed: a section with one section of settings per namespace, keyed 'database.collection' or 'bucket.scope.collection'.");
                    foreach (var ns in child.GetChildren())
                    {
                        NamespaceOptions settings = options.Defaults.Clone();
                        BindObject(ns, settings, errors);
                        options.Namespaces[ns.Key] = settings;
                    }
                    break;
                default:
                    BindProperty(child, options, errors);
                    break;
            }
        }
    }

    /// <summary>A key given a plain value where a section is expected (JSON <c>"Namespaces": "shop.orders"</c>); an empty value is an empty section.</summary>
    private static bool IsValue(IConfigurationSection section) => section.Value is { Length: > 0 } && !section.GetChildren().Any();

    private void BindObject(IConfigurationSection section, object target, List<string> errors)
    {
        if (IsValue(section))
        {
            errors.Add($"{section.Path}: '{section.Value}' is a value; allowed: a section of settings ({string.Join(", ", Names(target.GetType()))}).");
            return;
        }
        foreach (var child in section.GetChildren()) BindProperty(child, target, errors);
    }

    private void BindProperty(IConfigurationSection child, object target, List<string> errors)
    {
        if (target is NamespaceOptions settings && _adapterSettings.FirstOrDefault(n => Is(n, child.Key)) is { } adapterSetting)
        {
            // A single string (JSON "Fields": "CustomerId") is not a list of one: refused, or the adapter would take it for
            // an empty list without a word.
            if (IsValue(child))
            {
                errors.Add($"{child.Path}: '{child.Value}' is a value; allowed: a list of names, e.g. [ \"{child.Value}\" ].");
                return;
            }
            var items = new List<string>();
            foreach (var item in child.GetChildren())
            {
                if (item.GetChildren().Any()) errors.Add($"{item.Path}: a section; allowed: a name.");
                else items.Add(item.Value ?? "");
            }
            settings.AdapterSettings[adapterSetting] = items;
            return;
        }
        PropertyInfo? property = Settable(target.GetType()).FirstOrDefault(p => Is(p.Name, child.Key));
        if (property is null)
        {
            errors.Add($"{child.Path}: unknown setting; allowed: {string.Join(", ", Names(target.GetType()))}.");
            return;
        }
        Type type = property.PropertyType;
        if (type == typeof(DictionaryOptions))
        {
            BindObject(child, property.GetValue(target)!, errors);
            return;
        }
        if (child.GetChildren().Any())
        {
            errors.Add($"{child.Path}: a section; allowed: {Describe(type)}.");
            return;
        }
        if (TryParse(child.Value, type, out object? value)) property.SetValue(target, value);
        else errors.Add($"{child.Path}: '{child.Value}' is not valid; allowed: {Describe(type)}.");
    }

    private static bool TryParse(string? text, Type type, out object? value)
    {
        value = null;
        Type? nullable = Nullable.GetUnderlyingType(type);
        if (nullable is not null)
        {
            if (string.IsNullOrWhiteSpace(text)) return true;
            type = nullable;
        }
        text = text?.Trim();
        if (string.IsNullOrEmpty(text)) return false;
        CultureInfo c = CultureInfo.InvariantCulture;
        bool ok;
        if (type == typeof(int)) { ok = int.TryParse(text, NumberStyles.Integer, c, out int v); value = v; }
        else if (type == typeof(double)) { ok = double.TryParse(text, NumberStyles.Float, c, out double v) && double.IsFinite(v); value = v; }
        else if (type == typeof(bool)) { ok = bool.TryParse(text, out bool v); value = v; }
        else if (type == typeof(TimeSpan)) { ok = TimeSpan.TryParse(text, c, out TimeSpan v); value = v; }
        else if (type.IsEnum)
        {
            object? parsed = null;
            ok = !char.IsAsciiDigit(text[0]) && text[0] != '-' && Enum.TryParse(type, text, ignoreCase: true, out parsed) && Enum.IsDefined(type, parsed!);
            value = ok ? parsed : null;
        }
        else ok = false;
        return ok;
    }

    private static string Describe(Type type)
    {
        Type? nullable = Nullable.GetUnderlyingType(type);
        string empty = nullable is null ? "" : " or empty for the default";
        type = nullable ?? type;
        return (type == typeof(int) ? "a whole number"
            : type == typeof(double) ? "a number (invariant culture, e.g. 0.95)"
            : type == typeof(bool) ? "true or false"
            : type == typeof(TimeSpan) ? "a duration as [d.]hh:mm:ss[.fff], e.g. 00:00:30"
            : type == typeof(CompressionCodec) ? "one of " + DocumentCompressorOptions.SettableCodecNames
            : type.IsEnum ? "one of " + string.Join(", ", Enum.GetNames(type))
            : type.Name) + empty;
    }

    private static IEnumerable<PropertyInfo> Settable(Type type) =>
        Declared(type).Where(p => p.Name != nameof(CompressionEngineOptions.Namespaces) && p.Name != nameof(NamespaceOptions.AdapterSettings));

    /// <summary>The settable properties of <paramref name="type"/> in declaration order, a base type's first (<see cref="NamespaceOptions"/>' own after the compressor options it inherits).</summary>
    private static IEnumerable<PropertyInfo> Declared(Type type) =>
        type.GetProperties(BindingFlags.Public | BindingFlags.Instance).Where(p => p.CanWrite && p.SetMethod!.IsPublic)
            .OrderBy(p => Depth(p.DeclaringType!)).ThenBy(p => p.MetadataToken);

    private static int Depth(Type type)
    {
        int depth = 0;
        for (Type? t = type.BaseType; t is not null; t = t.BaseType) depth++;
        return depth;
    }

    /// <summary>The keys a section of <paramref name="type"/> takes, in order: a namespace's adapter settings stand where <see cref="NamespaceOptions.AdapterSettings"/> is declared.</summary>
    private IEnumerable<string> Names(Type type) =>
        Declared(type).Where(p => p.Name != nameof(CompressionEngineOptions.Namespaces))
            .SelectMany(p => type == typeof(NamespaceOptions) && p.Name == nameof(NamespaceOptions.AdapterSettings) ? _adapterSettings : [p.Name]);

    private static bool Is(string a, string b) => string.Equals(a, b, StringComparison.OrdinalIgnoreCase);
}
