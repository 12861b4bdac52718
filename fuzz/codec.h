/* codec.h -- the body of the four codec harnesses (codec_gzip.c,
 * codec_snappy.c, codec_lz4.c, codec_zstd.c), each of which defines
 * FUZZ_CODEC and includes this.
 *
 * Input: one v2 record batch (header and records). Its header is made to
 * fit the input and name the harness's codec (batch length = the input's
 * size - 12, magic 2, attributes' codec bits), so every mutation lands in
 * the compressed records, the record count or the offsets and timestamps.
 * Then, as the leader does on produce and ListOffsets on a stored batch:
 * batch_validate_records with the leader's bound and
 * batch_find_timestamp_any (batch.h, with its oracle); and the records on
 * their own through compression_decompress, as a legacy wrapper's value
 * is decompressed, bounded the way message_convert.c bounds it. */
#ifndef KIPPER_FUZZ_CODEC_H
#define KIPPER_FUZZ_CODEC_H

#include "batch.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_quiet();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < BATCH_HEADER_LEN || size - BATCH_LOG_OVERHEAD > INT32_MAX)
        return 0;
    uint8_t *batch = malloc(size);
    if (!batch)
        abort();
    memcpy(batch, data, size);
    be32_put(batch + BATCH_OFF_LENGTH, (uint32_t)(size - BATCH_LOG_OVERHEAD));
    batch[BATCH_OFF_MAGIC] = 2;
    batch[BATCH_OFF_ATTRIBUTES + 1] =
        (uint8_t)((batch[BATCH_OFF_ATTRIBUTES + 1] & ~BATCH_ATTR_COMPRESSION_MASK) | FUZZ_CODEC);
    record_batch_t h;
    FUZZ_CHECK(record_batch_parse_header(batch, size, &h) == PLOG_OK, "a batch made to fit does not parse");
    fuzz_validate_and_search(batch, size);

    uint8_t *out = NULL;
    size_t out_len = 0;
    char err[256];
    int rc = compression_decompress(FUZZ_CODEC, batch + BATCH_HEADER_LEN, size - BATCH_HEADER_LEN,
                                    2 * FUZZ_MAX_DECOMPRESSED, &out, &out_len, err, sizeof(err));
    FUZZ_CHECK(rc == COMPRESSION_OK ? out != NULL && out_len <= 2 * FUZZ_MAX_DECOMPRESSED : out == NULL,
               "compression_decompress gave %d with %p (%zu bytes)", rc, (void *)out, out_len);
    free(out);
    free(batch);
    return 0;
}

#endif
