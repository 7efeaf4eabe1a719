using Compression.Dictionaries;
using Microsoft.Extensions.Options;

namespace Compression.Configuration;

/// <summary>Validates the options once, at start-up: what the binder could not read, then every range, each naming its key.</summary>
internal sealed class CompressionOptionsValidator : IValidateOptions<CompressionEngineOptions>
{
    public ValidateOptionsResult Validate(string? name, CompressionEngineOptions options)
    {
        List<string> failures = [.. options.BindingErrors, .. options.Validate()];
        return failures.Count == 0 ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(failures);
    }
}
