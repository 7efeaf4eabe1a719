/*
 * A zstd block compressor for WiredTiger 3.2.x (Debian's libwiredtiger ships snappy and zlib only), written for
 * benchmarks/storage. It stores what WiredTiger's own ext/compressors/zstd does, so the page bytes on disk are
 * the same as MongoDB's: an 8-byte little-endian length of the zstd frame, then one standard zstd frame.
 * The level defaults to 6 (MongoDB's --zstdDefaultCompressionLevel); load it with
 *   extensions=[/path/wt_zstd.so=(config="compression_level=N")]
 * to change it.
 *
 *   gcc -O2 -shared -fPIC -o wt_zstd.so wt_zstd.c -lzstd
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <wiredtiger.h>
#include <wiredtiger_ext.h>
#include <zstd.h>
#include <zstd_errors.h>

#define LENGTH_PREFIX 8 /* the frame length, as WiredTiger's extension writes it */

struct zstd_compressor {
    WT_COMPRESSOR iface; /* first: WiredTiger casts between the two */
    WT_EXTENSION_API *api;
    int level;
};

static void put_le64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

static int fail(WT_COMPRESSOR *self, WT_SESSION *session, const char *what, size_t code)
{
    WT_EXTENSION_API *api = ((struct zstd_compressor *)self)->api;
    (void)api->err_printf(api, session, "wt_zstd: %s: %s", what, ZSTD_getErrorName(code));
    return WT_ERROR;
}

static int zc_compress(WT_COMPRESSOR *self, WT_SESSION *session, uint8_t *src, size_t src_len,
    uint8_t *dst, size_t dst_len, size_t *result_lenp, int *compression_failed)
{
    struct zstd_compressor *z = (struct zstd_compressor *)self;
    if (dst_len <= LENGTH_PREFIX) {
        *compression_failed = 1;
        return 0;
    }
    size_t n = ZSTD_compress(dst + LENGTH_PREFIX, dst_len - LENGTH_PREFIX, src, src_len, z->level);
    if (ZSTD_isError(n)) {
        /* A destination too small only means "does not pay": WiredTiger then writes the page uncompressed. */
        *compression_failed = 1;
        return ZSTD_getErrorCode(n) == ZSTD_error_dstSize_tooSmall ? 0 : fail(self, session, "ZSTD_compress", n);
    }
    if (n + LENGTH_PREFIX >= src_len) {
        *compression_failed = 1;
        return 0;
    }
    put_le64(dst, (uint64_t)n);
    *result_lenp = n + LENGTH_PREFIX;
    *compression_failed = 0;
    return 0;
}

static int zc_decompress(WT_COMPRESSOR *self, WT_SESSION *session, uint8_t *src, size_t src_len,
    uint8_t *dst, size_t dst_len, size_t *result_lenp)
{
    if (src_len < LENGTH_PREFIX) return fail(self, session, "decompress", (size_t)-ZSTD_error_srcSize_wrong);
    uint64_t frame = get_le64(src);
    if (frame > src_len - LENGTH_PREFIX) return fail(self, session, "decompress", (size_t)-ZSTD_error_srcSize_wrong);
    size_t n = ZSTD_decompress(dst, dst_len, src + LENGTH_PREFIX, (size_t)frame);
    if (ZSTD_isError(n)) return fail(self, session, "ZSTD_decompress", n);
    *result_lenp = n;
    return 0;
}

static int zc_pre_size(WT_COMPRESSOR *self, WT_SESSION *session, uint8_t *src, size_t src_len, size_t *result_lenp)
{
    (void)self;
    (void)session;
    (void)src;
    *result_lenp = ZSTD_compressBound(src_len) + LENGTH_PREFIX;
    return 0;
}

static int zc_terminate(WT_COMPRESSOR *self, WT_SESSION *session)
{
    (void)session;
    free(self);
    return 0;
}

/*
 * Reads compression_level from the extension's config: WiredTiger 3.2 hands the extension the contents of its
 * config="..." string as the WT_CONFIG_ARG, so the key is looked up there directly.
 */
static int read_level(WT_CONNECTION *conn, WT_CONFIG_ARG *config, int *level)
{
    if (config == NULL) return 0;
    WT_EXTENSION_API *api = conn->get_extension_api(conn);
    WT_CONFIG_ITEM value;
    int ret = api->config_get(api, NULL, config, "compression_level", &value);
    if (ret == WT_NOTFOUND) return 0;
    if (ret != 0) return ret;
    if (value.val < ZSTD_minCLevel() || value.val > ZSTD_maxCLevel()) {
        (void)api->err_printf(api, NULL, "wt_zstd: compression_level=%lld is out of zstd's range", (long long)value.val);
        return EINVAL;
    }
    *level = (int)value.val;
    return 0;
}

int wiredtiger_extension_init(WT_CONNECTION *conn, WT_CONFIG_ARG *config)
{
    int level = 6, ret;
    if ((ret = read_level(conn, config, &level)) != 0) return ret;
    struct zstd_compressor *z = calloc(1, sizeof(*z));
    if (z == NULL) return errno;
    z->iface.compress = zc_compress;
    z->iface.decompress = zc_decompress;
    z->iface.pre_size = zc_pre_size;
    z->iface.terminate = zc_terminate;
    z->api = conn->get_extension_api(conn);
    z->level = level;
    return conn->add_compressor(conn, "zstd", &z->iface, NULL);
}
