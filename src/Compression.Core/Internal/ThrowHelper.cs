using System.Diagnostics.CodeAnalysis;

namespace Compression.Internal;

internal static class ThrowHelper
{
    [DoesNotReturn]
    public static void ThrowCorrupt(string message) => throw new InvalidDataException(message);

    [DoesNotReturn]
    public static void ThrowCorrupt(string message, Exception inner) => throw new InvalidDataException(message, inner);

    [DoesNotReturn]
    public static T ThrowCorrupt<T>(string message) => throw new InvalidDataException(message);

    [DoesNotReturn]
    public static void ThrowDestinationTooSmall(string paramName) =>
        throw new ArgumentException("The destination buffer is too small for the result.", paramName);
}
