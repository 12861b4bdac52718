/* message_set.c -- legacy message sets (magic 0 and 1, Produce v0-v2 from
 * Kafka 0.8-0.10 clients) up-converted to one v2 batch as replica.c does
 * before appending them (message_set_upconvert, with the leader's bound),
 * compressed wrappers (gzip, snappy, lz4) included.
 *
 * Input: the records field of one produce partition, bounded by the request
 * (socket.request.max.bytes, 100 MiB); as api_produce.c does, only records
 * that split into whole entries, the first of magic 0 or 1, get this far. It is converted as it is, and again
 * with the CRC-32 of each outer entry made right (a mutation almost always
 * breaks it), so the fuzzer reaches keys, values, timestamps and the
 * wrappers' compressed message sets.
 *
 * Oracle: what the conversion gives is exactly one v2 batch that passes the
 * checks a produced batch must pass: its header and CRC-32C
 * (record_batch_validate), and its records (batch_validate_records). */
#include "batch.h"

#include <zlib.h>

#include "broker/log/message_convert.h"

#define SOCKET_REQUEST_MAX_BYTES (100 << 20)
#define LEGACY_OFF_SIZE 8
#define LEGACY_OFF_CRC 12
#define LEGACY_OFF_MAGIC 16
#define LEGACY_OVERHEAD 12   /* offset, size */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_quiet();
    return 0;
}

static void convert(const uint8_t *p, size_t len)
{
    uint8_t *out = NULL;
    size_t out_len = 0;
    char err[256];
    int rc = message_set_upconvert(p, len, FUZZ_MAX_DECOMPRESSED, &out, &out_len, err, sizeof(err));
    if (rc != MSGCONV_OK) {
        FUZZ_CHECK(out == NULL, "a failed conversion (%d) left output", rc);
        return;
    }
    FUZZ_CHECK(out != NULL && out_len <= FUZZ_MAX_DECOMPRESSED, "a conversion gave %zu bytes", out_len);
    int n = 0;
    FUZZ_CHECK(record_batches_prefix(out, out_len, &n) == out_len && n == 1,
               "a conversion gave %d batches in %zu bytes", n, out_len);
    record_batch_t h;
    rc = record_batch_validate(out, out_len, &h);
    FUZZ_CHECK(rc == PLOG_OK, "a converted batch fails its header or CRC check (%d)", rc);
    rc = batch_validate_records(out, out_len, FUZZ_MAX_DECOMPRESSED, err, sizeof(err));
    FUZZ_CHECK(rc == COMPRESSION_OK, "a converted batch's records fail validation: %s", err);
    free(out);
}

/* Each outer entry's CRC-32 made right, as far as the sizes lead. */
static int fix_crcs(uint8_t *p, size_t len)
{
    int changed = 0;
    size_t off = 0;
    while (len - off >= LEGACY_OFF_MAGIC) {
        uint32_t size = be32_get(p + off + LEGACY_OFF_SIZE);
        if (size < LEGACY_OFF_MAGIC - LEGACY_OVERHEAD || size > len - off - LEGACY_OVERHEAD)
            break;
        size_t end = off + LEGACY_OVERHEAD + size;
        uint32_t crc = (uint32_t)crc32(crc32(0L, Z_NULL, 0), p + off + LEGACY_OFF_MAGIC,
                                       (uInt)(end - off - LEGACY_OFF_MAGIC));
        if (be32_get(p + off + LEGACY_OFF_CRC) != crc) {
            be32_put(p + off + LEGACY_OFF_CRC, crc);
            changed = 1;
        }
        off = end;
    }
    return changed;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* api_produce.c: the records split into whole entries, the first of magic 0/1. */
    int n = 0;
    if (size > SOCKET_REQUEST_MAX_BYTES || record_batches_prefix(data, size, &n) != size || n == 0 ||
        !message_set_is_legacy(data, size))
        return 0;
    convert(data, size);
    uint8_t *copy = malloc(size);
    if (!copy)
        abort();
    memcpy(copy, data, size);
    if (fix_crcs(copy, size))
        convert(copy, size);
    free(copy);
    return 0;
}
