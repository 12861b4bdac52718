/* record_batch.c -- the records of one partition in a Produce request, as
 * the leader checks them (api_produce.c, replica.c, partition_log.c): split
 * into whole batches (record_batches_prefix), each header parsed
 * (record_batch_parse_header), the records of each validated
 * (batch_validate_records, any codec, with the leader's bound on the
 * decompressed size) and the CRC-32C checked (record_batch_validate); a
 * batch whose records pass is then searched by timestamp as ListOffsets
 * searches a stored one (batch_find_timestamp_any). Legacy message sets
 * (magic 0/1) are message_set.c's.
 *
 * Input: the records field of one produce partition, bounded by the
 * request (socket.request.max.bytes, 100 MiB). Every batch is checked a
 * second time with its CRC made right, as a client computes it, so that
 * partition_log's path past the CRC is reached too.
 *
 * Oracles: a batch whose records validated is found from its first record
 * when searched from the earliest timestamp (batch.h); a batch whose CRC
 * was made right passes record_batch_validate unless its header says
 * offsets run backwards. */
#include "batch.h"

#include "broker/log/message_convert.h"

#define SOCKET_REQUEST_MAX_BYTES (100 << 20)

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_quiet();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > SOCKET_REQUEST_MAX_BYTES)
        return 0;
    int n = 0;
    size_t whole = record_batches_prefix(data, size, &n);
    FUZZ_CHECK(whole <= size, "a prefix of %zu bytes in %zu", whole, size);
    (void)message_set_is_legacy(data, size);
    uint8_t *copy = malloc(whole ? whole : 1);
    if (!copy)
        abort();
    memcpy(copy, data, whole);
    for (size_t off = 0; off < whole;) {
        record_batch_t h;
        if (record_batch_parse_header(copy + off, whole - off, &h) != PLOG_OK)
            break;
        size_t bsize = (size_t)record_batch_size(&h);
        FUZZ_CHECK(bsize >= BATCH_HEADER_LEN && bsize <= whole - off, "a parsed batch of %zu bytes in %zu", bsize,
                   whole - off);
        record_batch_t v;
        (void)record_batch_validate(copy + off, bsize, &v);
        /* As the client would have sealed it. */
        be32_put(copy + off + BATCH_OFF_CRC, record_batch_compute_crc(copy + off, bsize));
        int rc = record_batch_validate(copy + off, bsize, &v);
        FUZZ_CHECK(rc == PLOG_OK || h.record_count < 0 || h.last_offset_delta < 0 || h.base_offset < 0 ||
                       h.base_offset > INT64_MAX - h.last_offset_delta,
                   "a batch with its CRC made right fails validation (%d)", rc);
        fuzz_validate_and_search(copy + off, bsize);
        off += bsize;
    }
    free(copy);
    return 0;
}
