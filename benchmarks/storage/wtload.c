/*
 * wtload: loads concatenated BSON documents into one WiredTiger table with MongoDB's collection settings, the way
 * benchmarks/storage measures stored bytes.
 *
 *   wtload HOME FILE.bson COMPRESSOR EXTENSIONS
 *
 * HOME        a directory, emptied and created (the database)
 * FILE.bson   BSON documents one after the other (each starts with its int32 length)
 * COMPRESSOR  none, snappy, zlib or zstd (the table's block_compressor)
 * EXTENSIONS  the connection's extensions=[...] list, loading the compressors (may be "[]")
 *
 * Steps: create the table (MongoDB's collection config), one bulk load with keys 1..n in file order (the record ids
 * MongoDB would give them), a checkpoint, close; stat HOME/collection.wt. Then a fresh connection (cache_size=1GB, so
 * nothing is evicted) reads every document back, checks each against the file, and reads the statistic
 * "cache: bytes currently in the cache". Prints one JSON object:
 *   {"compressor":"snappy","documents":N,"valueBytes":B,"fileBytes":F,"cacheBytes":C,"leafPages":L}
 * (leafPages: the statistic "btree: row-store leaf pages", read after the cache bytes.)
 *
 *   wtload --reads HOME FILE.bson COMPRESSOR EXTENSIONS COPIES CACHE_BYTES SECONDS
 *
 * The read phase: what a cache smaller than the collection costs point reads. Loads FILE.bson COPIES times over (keys
 * 1..COPIES*n, the file's documents in order, again and again: the table is large enough for a cache of a few MB, and
 * WiredTiger's least cache is 1 MB), then measures random point reads by key (the record id MongoDB finds through the
 * _id index; the index itself is not modelled), uniformly over the whole table, each a search, get_value and reset,
 * for SECONDS after a warm-up (a full scan, then a quarter of a second of random reads), in three connections:
 *   "small":       cache_size=CACHE_BYTES (run.sh: 1/4 of the plain collection's BSON bytes, the same for every table);
 *   "smallDirect": the same with direct_io=[data] (O_DIRECT: a miss reads the device, not the OS page cache); when
 *                  WiredTiger refuses it, {"error": "..."} instead;
 *   "whole":       cache_size = the bytes the whole table takes in the cache (measured after a full scan with a 1 GB
 *                  cache) / eviction_target (0.80) + 5%, rounded up to 64 KB: the least cache that should hold the whole
 *                  table; missesPerRead says whether it did.
 * Each phase: reads, readsPerSecond, p50Us, p99Us, meanUs (each read timed with CLOCK_MONOTONIC), missesPerRead
 * ("cache: pages read into cache" over the reads), bytesPerMiss ("cache: bytes read into cache", uncompressed) and
 * fileBytesPerMiss ("block-manager: bytes read") and cpuUsPerRead (the process's user + system time over the reads,
 * eviction threads included: less sensitive than wall time to a busy machine). Every connection has MongoDB's
 * eviction=(threads_min=4,threads_max=4). Prints one JSON object (loadAverage: the 1-minute load when the phases start):
 *   {"compressor","copies","documents","valueBytes","fileBytes","wholeCacheBytes","small":{...},"smallDirect":{...},"whole":{...}}
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include <wiredtiger.h>

#define TABLE "table:collection"
#define TABLE_FILE "collection.wt"

/* MongoDB's WiredTiger config for a collection (mongo/db/storage/wiredtiger/wiredtiger_record_store.cpp). */
#define COLLECTION_CONFIG                                                                                             \
    "type=file,key_format=q,value_format=u,memory_page_max=10m,split_pct=90,leaf_value_max=64MB,checksum=on,"         \
    "allocation_size=4KB,internal_page_max=4KB,leaf_page_max=32KB,prefix_compression=false,block_compressor="

static void check(int ret, const char *what)
{
    if (ret != 0) {
        fprintf(stderr, "wtload: %s: %s\n", what, wiredtiger_strerror(ret));
        exit(1);
    }
}

static uint8_t *read_file(const char *path, size_t *length)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "wtload: cannot open %s: %s\n", path, strerror(errno));
        exit(1);
    }
    if (fseek(f, 0, SEEK_END) != 0) goto fail;
    long size = ftell(f);
    if (size < 0 || fseek(f, 0, SEEK_SET) != 0) goto fail;
    uint8_t *data = malloc(size > 0 ? (size_t)size : 1);
    if (data == NULL || fread(data, 1, (size_t)size, f) != (size_t)size) goto fail;
    fclose(f);
    *length = (size_t)size;
    return data;
fail:
    fprintf(stderr, "wtload: cannot read %s\n", path);
    exit(1);
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Offsets of the documents in data; checks every length. */
static size_t *split_documents(const uint8_t *data, size_t length, size_t *count)
{
    size_t capacity = 1024, n = 0, offset = 0;
    size_t *offsets = malloc(capacity * sizeof(size_t));
    while (offset < length) {
        if (length - offset < 5) goto bad;
        uint32_t size = le32(data + offset);
        if (size < 5 || size > length - offset || data[offset + size - 1] != 0) goto bad;
        if (n + 1 >= capacity) offsets = realloc(offsets, (capacity *= 2) * sizeof(size_t));
        offsets[n++] = offset;
        offset += size;
    }
    offsets[n] = offset;
    *count = n;
    return offsets;
bad:
    fprintf(stderr, "wtload: document %zu at byte %zu is not a BSON document (bad length)\n", n, offset);
    exit(1);
}

/* Creates HOME afresh and bulk-loads the documents COPIES times over (keys 1..copies*count), then a checkpoint and
 * close; returns the table file's size. */
static long long load(const char *home, const uint8_t *data, const size_t *offsets, size_t count, size_t copies,
    const char *compressor, const char *extensions)
{
    char command[4096];
    snprintf(command, sizeof command, "rm -rf '%s' && mkdir -p '%s'", home, home);
    if (system(command) != 0) {
        fprintf(stderr, "wtload: cannot create %s\n", home);
        exit(1);
    }

    char config[4096];
    WT_CONNECTION *conn;
    WT_SESSION *session;
    WT_CURSOR *cursor;

    /* Load: one bulk cursor, keys in order, then a checkpoint. */
    snprintf(config, sizeof config, "create,cache_size=1GB,extensions=%s", extensions);
    check(wiredtiger_open(home, NULL, config, &conn), "wiredtiger_open (load)");
    check(conn->open_session(conn, NULL, NULL, &session), "open_session");
    snprintf(config, sizeof config, "%s%s", COLLECTION_CONFIG, compressor);
    check(session->create(session, TABLE, config), "create table");
    check(session->open_cursor(session, TABLE, NULL, "bulk", &cursor), "open bulk cursor");
    int64_t key = 0;
    for (size_t copy = 0; copy < copies; copy++) {
        for (size_t i = 0; i < count; i++) {
            WT_ITEM value = {.data = data + offsets[i], .size = offsets[i + 1] - offsets[i]};
            cursor->set_key(cursor, ++key);
            cursor->set_value(cursor, &value);
            check(cursor->insert(cursor), "bulk insert");
        }
    }
    check(cursor->close(cursor), "close bulk cursor");
    check(session->checkpoint(session, NULL), "checkpoint");
    check(conn->close(conn, NULL), "close (load)");

    char file[4096];
    struct stat st;
    snprintf(file, sizeof file, "%s/%s", home, TABLE_FILE);
    if (stat(file, &st) != 0) {
        fprintf(stderr, "wtload: cannot stat %s: %s\n", file, strerror(errno));
        exit(1);
    }
    return (long long)st.st_size;
}

static int64_t statistic(WT_SESSION *session, int key, const char *name)
{
    WT_CURSOR *stats;
    const char *description, *text;
    int64_t value;
    check(session->open_cursor(session, "statistics:", NULL, NULL, &stats), "open statistics cursor");
    stats->set_key(stats, key);
    check(stats->search(stats), name);
    check(stats->get_value(stats, &description, &text, &value), name);
    check(stats->close(stats), "close statistics cursor");
    return value;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static double cpu_seconds(void) /* user + system time of the whole process (every thread: eviction included) */
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)u.ru_utime.tv_sec + (double)u.ru_utime.tv_usec * 1e-6 + (double)u.ru_stime.tv_sec + (double)u.ru_stime.tv_usec * 1e-6;
}

static uint64_t next_random(uint64_t *state) /* xorshift64* */
{
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    return *state * 0x2545F4914F6CDD1DULL;
}

static int compare_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Reads every record in key order; returns how many. */
static size_t scan(WT_SESSION *session)
{
    WT_CURSOR *cursor;
    size_t n = 0;
    int ret;
    check(session->open_cursor(session, TABLE, NULL, NULL, &cursor), "open cursor (scan)");
    while ((ret = cursor->next(cursor)) == 0) n++;
    if (ret != WT_NOTFOUND) check(ret, "cursor next (scan)");
    check(cursor->close(cursor), "close cursor (scan)");
    return n;
}

/* One phase: opens HOME with CONFIG_EXTRA, scans, reads at random for a quarter of a second, then measures SECONDS of
 * random point reads; prints the phase's JSON object (after "name":). Returns 0, or -1 (printing {"error": ...}) when
 * WiredTiger refuses the connection or the first read. */
static int read_phase(const char *name, const char *home, const char *extensions, const char *config_extra,
    int64_t records, const size_t *sizes, size_t count, double seconds)
{
    char config[4096];
    WT_CONNECTION *conn;
    WT_SESSION *session;
    WT_CURSOR *cursor;
    snprintf(config, sizeof config, "statistics=(fast),eviction=(threads_min=4,threads_max=4),extensions=%s,%s", extensions, config_extra);
    int ret = wiredtiger_open(home, NULL, config, &conn);
    if (ret == 0) {
        check(conn->open_session(conn, NULL, NULL, &session), "open_session (reads)");
        ret = session->open_cursor(session, TABLE, NULL, NULL, &cursor);
        if (ret == 0) {
            cursor->set_key(cursor, (int64_t)1);
            ret = cursor->search(cursor);
            if (ret == 0) ret = cursor->reset(cursor);
            if (ret != 0) cursor->close(cursor);
        }
        if (ret != 0) conn->close(conn, NULL);
    }
    if (ret != 0) {
        printf("\"%s\":{\"config\":\"%s\",\"error\":\"%s\"}", name, config_extra, wiredtiger_strerror(ret));
        return -1;
    }
    if ((int64_t)scan(session) != records) {
        fprintf(stderr, "wtload: the scan did not read %" PRId64 " records\n", records);
        exit(1);
    }

    uint64_t state = 0x9E3779B97F4A7C15ULL;
    size_t capacity = 1 << 20, n = 0;
    uint32_t *latencies = malloc(capacity * sizeof(uint32_t));
    int64_t misses = 0, bytes = 0, file_bytes = 0;
    double start = 0, end = 0, cpu = 0;
    for (int measured = 0; measured <= 1; measured++) {
        if (measured) {
            misses = statistic(session, WT_STAT_CONN_CACHE_READ, "cache: pages read into cache");
            bytes = statistic(session, WT_STAT_CONN_CACHE_BYTES_READ, "cache: bytes read into cache");
            file_bytes = statistic(session, WT_STAT_CONN_BLOCK_BYTE_READ, "block-manager: bytes read");
        }
        double stop = now() + (measured ? seconds : 0.25);
        start = now();
        cpu = cpu_seconds();
        for (;;) {
            int64_t key = (int64_t)(next_random(&state) % (uint64_t)records) + 1;
            double before = now();
            if (before >= stop) break;
            WT_ITEM value;
            cursor->set_key(cursor, key);
            check(cursor->search(cursor), "search");
            check(cursor->get_value(cursor, &value), "get_value");
            size_t expected = sizes[(size_t)(key - 1) % count];
            check(cursor->reset(cursor), "reset");
            double after = now();
            if (value.size != expected) {
                fprintf(stderr, "wtload: record %" PRId64 " has %zu bytes, not %zu\n", key, (size_t)value.size, expected);
                exit(1);
            }
            if (!measured) continue;
            if (n == capacity) latencies = realloc(latencies, (capacity *= 2) * sizeof(uint32_t));
            double ns = (after - before) * 1e9;
            latencies[n++] = ns > 4e9 ? UINT32_MAX : (uint32_t)ns;
            end = after;
        }
    }
    cpu = cpu_seconds() - cpu;
    misses = statistic(session, WT_STAT_CONN_CACHE_READ, "cache: pages read into cache") - misses;
    bytes = statistic(session, WT_STAT_CONN_CACHE_BYTES_READ, "cache: bytes read into cache") - bytes;
    file_bytes = statistic(session, WT_STAT_CONN_BLOCK_BYTE_READ, "block-manager: bytes read") - file_bytes;
    int64_t in_cache = statistic(session, WT_STAT_CONN_CACHE_BYTES_INUSE, "cache: bytes currently in the cache");
    check(cursor->close(cursor), "close cursor (reads)");
    check(conn->close(conn, NULL), "close (reads)");

    double total = 0;
    for (size_t i = 0; i < n; i++) total += latencies[i];
    qsort(latencies, n, sizeof(uint32_t), compare_u32);
    double elapsed = end - start;
    printf("\"%s\":{\"config\":\"%s\",\"reads\":%zu,\"seconds\":%.3f,\"readsPerSecond\":%.0f,\"p50Us\":%.3f,"
           "\"p99Us\":%.3f,\"meanUs\":%.3f,\"missesPerRead\":%.4f,\"bytesPerMiss\":%.0f,\"fileBytesPerMiss\":%.0f,"
           "\"cpuUsPerRead\":%.3f,\"cacheBytesAfter\":%" PRId64 "}",
        name, config_extra, n, elapsed, n / elapsed, n ? latencies[n / 2] / 1e3 : 0, n ? latencies[n * 99 / 100] / 1e3 : 0,
        n ? total / n / 1e3 : 0, n ? (double)misses / n : 0, misses ? (double)bytes / misses : 0,
        misses ? (double)file_bytes / misses : 0, n ? cpu / n * 1e6 : 0, in_cache);
    free(latencies);
    return 0;
}

static int reads_main(int argc, char **argv)
{
    if (argc != 9) {
        fprintf(stderr, "usage: wtload --reads HOME FILE.bson none|snappy|zlib|zstd EXTENSIONS COPIES CACHE_BYTES SECONDS\n");
        return 2;
    }
    const char *home = argv[2], *path = argv[3], *compressor = argv[4], *extensions = argv[5];
    size_t copies = strtoull(argv[6], NULL, 10);
    long long cache_bytes = strtoll(argv[7], NULL, 10);
    double seconds = strtod(argv[8], NULL);
    if (copies < 1 || cache_bytes < (1 << 20) || seconds <= 0) {
        fprintf(stderr, "wtload: COPIES >= 1, CACHE_BYTES >= 1 MB (WiredTiger's least) and SECONDS > 0\n");
        return 2;
    }
    size_t length, count;
    uint8_t *data = read_file(path, &length);
    size_t *offsets = split_documents(data, length, &count);
    size_t *sizes = malloc(count * sizeof(size_t));
    for (size_t i = 0; i < count; i++) sizes[i] = offsets[i + 1] - offsets[i];
    int64_t records = (int64_t)(count * copies);
    long long file_bytes = load(home, data, offsets, count, copies, compressor, extensions);

    /* What the whole table takes in the cache: a full scan with a cache that evicts nothing. */
    char config[4096];
    WT_CONNECTION *conn;
    WT_SESSION *session;
    snprintf(config, sizeof config, "cache_size=1GB,statistics=(fast),extensions=%s", extensions);
    check(wiredtiger_open(home, NULL, config, &conn), "wiredtiger_open (whole)");
    check(conn->open_session(conn, NULL, NULL, &session), "open_session (whole)");
    scan(session);
    int64_t whole = statistic(session, WT_STAT_CONN_CACHE_BYTES_INUSE, "cache: bytes currently in the cache");
    check(conn->close(conn, NULL), "close (whole)");
    long long fit = (long long)(whole / 0.80 * 1.05);
    fit = (fit + 65535) / 65536 * 65536;
    if (fit < (1 << 20)) fit = 1 << 20;

    double load_average[1] = {0};
    getloadavg(load_average, 1);
    printf("{\"compressor\":\"%s\",\"loadAverage\":%.2f,\"copies\":%zu,\"documents\":%" PRId64 ",\"valueBytes\":%zu,\"fileBytes\":%lld,"
           "\"wholeCacheBytes\":%" PRId64 ",\"smallCacheSize\":%lld,\"wholeCacheSize\":%lld,",
        compressor, load_average[0], copies, records, length * copies, file_bytes, whole, cache_bytes, fit);
    char extra[256];
    snprintf(extra, sizeof extra, "cache_size=%lld", cache_bytes);
    read_phase("small", home, extensions, extra, records, sizes, count, seconds);
    printf(",");
    snprintf(extra, sizeof extra, "cache_size=%lld,direct_io=[data]", cache_bytes);
    read_phase("smallDirect", home, extensions, extra, records, sizes, count, seconds);
    printf(",");
    snprintf(extra, sizeof extra, "cache_size=%lld", fit);
    read_phase("whole", home, extensions, extra, records, sizes, count, seconds);
    printf("}\n");
    free(sizes);
    free(offsets);
    free(data);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--reads") == 0) return reads_main(argc, argv);
    if (argc != 5) {
        fprintf(stderr, "usage: wtload HOME FILE.bson none|snappy|zlib|zstd EXTENSIONS\n"
                        "       wtload --reads HOME FILE.bson none|snappy|zlib|zstd EXTENSIONS COPIES CACHE_BYTES SECONDS\n");
        return 2;
    }
    const char *home = argv[1], *path = argv[2], *compressor = argv[3], *extensions = argv[4];
    size_t length, count;
    uint8_t *data = read_file(path, &length);
    size_t *offsets = split_documents(data, length, &count);
    long long file_bytes = load(home, data, offsets, count, 1, compressor, extensions);

    char config[4096];
    WT_CONNECTION *conn;
    WT_SESSION *session;
    WT_CURSOR *cursor;

    /* Read back in a fresh connection: the cache starts empty and is big enough for everything. */
    snprintf(config, sizeof config, "cache_size=1GB,statistics=(all),extensions=%s", extensions);
    check(wiredtiger_open(home, NULL, config, &conn), "wiredtiger_open (read)");
    check(conn->open_session(conn, NULL, NULL, &session), "open_session");
    check(session->open_cursor(session, TABLE, NULL, NULL, &cursor), "open cursor");
    size_t read = 0;
    int ret;
    while ((ret = cursor->next(cursor)) == 0) {
        int64_t key;
        WT_ITEM value;
        check(cursor->get_key(cursor, &key), "get_key");
        check(cursor->get_value(cursor, &value), "get_value");
        if (key != (int64_t)(read + 1) || read >= count || value.size != offsets[read + 1] - offsets[read] ||
            memcmp(value.data, data + offsets[read], value.size) != 0) {
            fprintf(stderr, "wtload: record %" PRId64 " read back differs from document %zu of %s\n", key, read, path);
            return 1;
        }
        read++;
    }
    if (ret != WT_NOTFOUND) check(ret, "cursor next");
    if (read != count) {
        fprintf(stderr, "wtload: read back %zu documents, loaded %zu\n", read, count);
        return 1;
    }
    check(cursor->close(cursor), "close cursor");

    WT_CURSOR *stats;
    check(session->open_cursor(session, "statistics:", NULL, NULL, &stats), "open statistics cursor");
    stats->set_key(stats, WT_STAT_CONN_CACHE_BYTES_INUSE);
    check(stats->search(stats), "statistic 'cache: bytes currently in the cache'");
    const char *description, *text;
    int64_t cache_bytes;
    check(stats->get_value(stats, &description, &text, &cache_bytes), "statistic value");
    check(stats->close(stats), "close statistics cursor");

    /* Leaf pages (a tree walk, so after the cache figure): how much each block compressor call saw. */
    int64_t leaf_pages;
    check(session->open_cursor(session, "statistics:" TABLE, NULL, "statistics=(all)", &stats), "open table statistics cursor");
    stats->set_key(stats, WT_STAT_DSRC_BTREE_ROW_LEAF);
    check(stats->search(stats), "statistic 'btree: row-store leaf pages'");
    check(stats->get_value(stats, &description, &text, &leaf_pages), "statistic value");
    check(stats->close(stats), "close table statistics cursor");
    check(conn->close(conn, NULL), "close (read)");

    printf("{\"compressor\":\"%s\",\"documents\":%zu,\"valueBytes\":%zu,\"fileBytes\":%lld,\"cacheBytes\":%" PRId64
           ",\"leafPages\":%" PRId64 "}\n",
        compressor, count, length, file_bytes, cache_bytes, leaf_pages);
    free(offsets);
    free(data);
    return 0;
}
