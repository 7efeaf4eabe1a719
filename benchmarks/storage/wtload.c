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
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: wtload HOME FILE.bson none|snappy|zlib|zstd EXTENSIONS\n");
        return 2;
    }
    const char *home = argv[1], *path = argv[2], *compressor = argv[3], *extensions = argv[4];
    size_t length, count;
    uint8_t *data = read_file(path, &length);
    size_t *offsets = split_documents(data, length, &count);

    char command[4096];
    snprintf(command, sizeof command, "rm -rf '%s' && mkdir -p '%s'", home, home);
    if (system(command) != 0) {
        fprintf(stderr, "wtload: cannot create %s\n", home);
        return 1;
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
    for (size_t i = 0; i < count; i++) {
        WT_ITEM value = {.data = data + offsets[i], .size = offsets[i + 1] - offsets[i]};
        cursor->set_key(cursor, (int64_t)(i + 1));
        cursor->set_value(cursor, &value);
        check(cursor->insert(cursor), "bulk insert");
    }
    check(cursor->close(cursor), "close bulk cursor");
    check(session->checkpoint(session, NULL), "checkpoint");
    check(conn->close(conn, NULL), "close (load)");

    char file[4096];
    struct stat st;
    snprintf(file, sizeof file, "%s/%s", home, TABLE_FILE);
    if (stat(file, &st) != 0) {
        fprintf(stderr, "wtload: cannot stat %s: %s\n", file, strerror(errno));
        return 1;
    }

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
        compressor, count, length, (long long)st.st_size, cache_bytes, leaf_pages);
    free(offsets);
    free(data);
    return 0;
}
