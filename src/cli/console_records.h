/* console_records.h -- the records of `kipper console-producer` and
 * `kipper console-consumer`: v2 record batches (src/broker/log/record_batch.h)
 * built from lines, and the records of fetched batches read one by one.
 *
 * Pure: no I/O, no global state; the unit tests drive both directions.
 * Everything read is bounded by the bytes it came in: every length is
 * checked against what is left of its record before it is used, and a
 * batch whose CRC-32C fails or whose records do not parse is an error
 * (CR_ERR_CORRUPT with a reason), never read past. */
#ifndef KIPPER_CLI_CONSOLE_RECORDS_H
#define KIPPER_CLI_CONSOLE_RECORDS_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"

/* A compressed batch's records, decompressed, at most this many bytes
 * (a fetch answer is bounded by kafka_client.h far below it). */
#define CR_DECOMPRESSED_MAX ((size_t)256 << 20)

enum { CR_OK = 0, CR_ERR_CORRUPT = -1, CR_ERR_MEMORY = -2 };

/* A record to send: key or value NULL for null; header_count headers
 * encoded by cr_header_append in headers[0..headers_len). */
typedef struct {
    const char *key;
    size_t key_len;
    const char *value;
    size_t value_len;
    const uint8_t *headers;
    size_t headers_len;
    int32_t header_count;
} cr_input_t;

/* Appends to out one record header as a v2 record holds it (varint key
 * length and key, varint value length and value; value NULL: null). A
 * header key cannot be null, so key is never NULL. */
void cr_header_append(buf_t *out, const char *key, size_t key_len, const char *value, size_t value_len);

/* Appends to out one uncompressed v2 batch of recs[0..n) (n >= 1): base
 * offset 0, no producer id, every record's timestamp `now` (CreateTime). */
void cr_batch_build(buf_t *out, const cr_input_t *recs, int n, int64_t now);

/* A record read: pointers into the batch (or its decompressed records). */
typedef struct {
    int64_t offset, timestamp;
    int log_append_time;          /* the batch's timestamp type */
    const uint8_t *key, *value;   /* NULL: null */
    int32_t key_len, value_len;
    const uint8_t *headers;       /* header_count headers, as on the wire; cr_header_next reads them */
    size_t headers_len;
    int32_t header_count;
} cr_record_t;

typedef struct {
    const uint8_t *key, *value;   /* value NULL: null */
    int32_t key_len, value_len;
} cr_header_t;

/* The next header of r at *pos (0 to start): 1 with *h, 0 after the last.
 * The headers were checked when the record was read. */
int cr_header_next(const cr_record_t *r, size_t *pos, cr_header_t *h);

/* Called for each record; nonzero stops the walk (cr_batches_read returns it). */
typedef int (*cr_record_fn)(void *ctx, const cr_record_t *r);

/* Reads the whole batches at the start of p[0..len) (a fetch may end in the
 * middle of one: that rest is left) and passes each record at or after
 * from_offset to fn; control batches are skipped. *next is the offset after
 * the last whole batch (from_offset when there is none). CR_OK, the value fn
 * stopped with, or CR_ERR_* with err saying what is wrong. */
int cr_batches_read(const uint8_t *p, size_t len, int64_t from_offset, cr_record_fn fn, void *ctx,
                    int64_t *next, char *err, size_t errlen);

#endif
