using System.Runtime.CompilerServices;
using Compression.Dictionaries;
using Couchbase.KeyValue;

namespace Compression.Couchbase;

// Every version, each as its record or as the problem that keeps it from reading: what `docz dictionaries list` and
// `export` show (ListAsync stops at the first version that does not read).
public sealed partial class CouchbaseDictionaryStore
{
    /// <summary>
    /// Every version of one namespace or of all (the index's), oldest first, each as its record or as its problem: a
    /// version key or record that does not read is given as a problem and the next version is read, up to the first
    /// version with no key. An index that does not read is one problem, and nothing else is listed.
    /// </summary>
    internal async IAsyncEnumerable<(DictionaryRecord? Record, string? Problem)> ListEachAsync(string? @namespace,
        [EnumeratorCancellation] CancellationToken cancellationToken = default)
    {
        ICouchbaseCollection collection = await _collection(cancellationToken).ConfigureAwait(false);
        IEnumerable<string> namespaces;
        if (@namespace is not null)
        {
            namespaces = [@namespace];
        }
        else
        {
            string? indexProblem = null;
            namespaces = [];
            try
            {
                namespaces = (await ReadIndexAsync(collection, cancellationToken).ConfigureAwait(false)).Names.Order(StringComparer.Ordinal);
            }
            catch (InvalidDataException ex)
            {
                indexProblem = ex.Message;
            }
            if (indexProblem is not null)
            {
                yield return (null, indexProblem);
                yield break;
            }
        }
        foreach (string ns in namespaces)
        {
            for (int version = 1; version <= DictionaryRecord.MaxVersion; version++)
            {
                DictionaryRecord? record = null;
                string? problem = null;
                bool end = false;
                try
                {
                    uint? id = await ReadPointerAsync(collection, ns, version, cancellationToken).ConfigureAwait(false);
                    if (id is uint found) record = await ReadVersionRecordAsync(collection, ns, version, found, cancellationToken).ConfigureAwait(false);
                    else end = true;
                }
                catch (InvalidDataException ex)
                {
                    problem = ex.Message;
                }
                if (end) break;
                yield return (record, problem);
            }
        }
    }
}
