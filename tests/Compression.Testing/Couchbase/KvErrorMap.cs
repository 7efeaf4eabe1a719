using System.Text;

namespace Compression.Testing.Couchbase;

/// <summary>The error map GET_ERROR_MAP returns (version 2): the statuses this server answers with, none retryable.</summary>
internal static class KvErrorMap
{
    public static byte[] Json { get; } = Encoding.UTF8.GetBytes("""
        {"version":2,"revision":1,"errors":{
        "0":{"name":"SUCCESS","desc":"Success","attrs":["success"]},
        "1":{"name":"KEY_ENOENT","desc":"Not Found","attrs":["item-only"]},
        "2":{"name":"KEY_EEXISTS","desc":"key already exists, or CAS mismatch","attrs":["item-only"]},
        "4":{"name":"EINVAL","desc":"Invalid packet","attrs":["internal","invalid-input"]},
        "5":{"name":"NOT_STORED","desc":"Not stored (append/prepend on a missing document)","attrs":["item-only"]},
        "6":{"name":"DELTA_BADVAL","desc":"Non-numeric server-side value for incr or decr","attrs":["item-only","invalid-input"]},
        "7":{"name":"NOT_MY_VBUCKET","desc":"Server which received this command does not own the vbucket","attrs":["fetch-config","invalid-input"]},
        "9":{"name":"LOCKED","desc":"Requested resource is locked","attrs":["item-locked","item-only"]},
        "e":{"name":"NOT_LOCKED","desc":"The document is not locked","attrs":["item-only"]},
        "8":{"name":"NO_BUCKET","desc":"Not connected to a bucket","attrs":["conn-state-invalidated"]},
        "20":{"name":"AUTH_ERROR","desc":"Auth failure","attrs":["auth","conn-state-invalidated"]},
        "21":{"name":"AUTH_CONTINUE","desc":"Continue authentication","attrs":["special-handling","support"]},
        "24":{"name":"EACCESS","desc":"No access","attrs":["auth","item-only"]},
        "81":{"name":"UNKNOWN_COMMAND","desc":"Unknown command (not implemented by the Couchbase loopback test server)","attrs":["support"]},
        "85":{"name":"EBUSY","desc":"The server is busy (a range scan continue is already running)","attrs":["temp"]},
        "86":{"name":"ETMPFAIL","desc":"Temporary failure","attrs":["temp"]},
        "88":{"name":"UNKNOWN_COLLECTION","desc":"Unknown collection (the manifest has no collection with this id or path)","attrs":["item-only"]},
        "8c":{"name":"UNKNOWN_SCOPE","desc":"Unknown scope (the manifest has no scope of this name)","attrs":["item-only"]},
        "c0":{"name":"SUBDOC_PATH_ENOENT","desc":"Subdoc: path not found","attrs":["subdoc","item-only"]},
        "c1":{"name":"SUBDOC_PATH_MISMATCH","desc":"Subdoc: path mismatch","attrs":["subdoc","item-only"]},
        "c2":{"name":"SUBDOC_PATH_EINVAL","desc":"Subdoc: invalid path","attrs":["subdoc","item-only","invalid-input"]},
        "c5":{"name":"SUBDOC_VALUE_CANTINSERT","desc":"Subdoc: the value cannot be inserted","attrs":["subdoc","item-only","invalid-input"]},
        "c8":{"name":"SUBDOC_DELTA_ERANGE","desc":"Subdoc: invalid delta","attrs":["subdoc","item-only","invalid-input"]},
        "c9":{"name":"SUBDOC_PATH_EEXISTS","desc":"Subdoc: path exists","attrs":["subdoc","item-only"]},
        "cc":{"name":"SUBDOC_MULTI_PATH_FAILURE","desc":"Subdoc: one or more paths failed","attrs":["subdoc","item-only"]},
        "cb":{"name":"SUBDOC_INVALID_COMBO","desc":"Subdoc: an invalid combination of commands","attrs":["subdoc","item-only","invalid-input"]},
        "d0":{"name":"SUBDOC_XATTR_UNKNOWN_MACRO","desc":"Subdoc: unknown macro","attrs":["subdoc","item-only","invalid-input"]},
        "d4":{"name":"SUBDOC_INVALID_XATTR_ORDER","desc":"Subdoc: xattr specs must come before body specs","attrs":["subdoc","item-only","invalid-input"]},
        "cd":{"name":"SUBDOC_SUCCESS_DELETED","desc":"Subdoc: success, on a deleted document","attrs":["success","subdoc"]},
        "d3":{"name":"SUBDOC_MULTI_PATH_FAILURE_DELETED","desc":"Subdoc: one or more paths failed, on a deleted document","attrs":["subdoc","item-only"]},
        "d6":{"name":"SUBDOC_CAN_ONLY_REVIVE_DELETED_DOCUMENTS","desc":"Subdoc: only a deleted document can be revived","attrs":["subdoc","item-only","invalid-input"]},
        "cf":{"name":"SUBDOC_XATTR_INVALID_KEY_COMBO","desc":"Subdoc: only one xattr key may be accessed at a time","attrs":["subdoc","item-only","invalid-input"]},
        "d1":{"name":"SUBDOC_XATTR_UNKNOWN_VATTR","desc":"Subdoc: unknown virtual xattr","attrs":["subdoc","item-only","invalid-input"]},
        "d2":{"name":"SUBDOC_XATTR_CANT_MODIFY_VATTR","desc":"Subdoc: a virtual xattr cannot be modified","attrs":["subdoc","item-only","invalid-input"]},
        "a5":{"name":"RANGE_SCAN_CANCELLED","desc":"The range scan was cancelled","attrs":["item-only"]},
        "a6":{"name":"RANGE_SCAN_MORE","desc":"The range scan continue stopped at a limit; more may follow","attrs":["success","support"]},
        "a7":{"name":"RANGE_SCAN_COMPLETE","desc":"The range scan is complete","attrs":["success","support"]}
        }}
        """);
}
