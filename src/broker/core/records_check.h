/* records_check.h -- a Produce request's records validated on a helper
 * thread (records_validate, broker/log/batch_validate.h), so decompressing
 * them never holds up the event loop and every other client is served
 * meanwhile; a small request is first tried on the loop within a few
 * kilobytes of decompression (records_check_try_here).
 *
 * Why a thread and not slices of work on the loop: the validator stays one
 * plain function over (bytes, length, limits), the same the unit tests and
 * the fuzzers call, with no resumable state to get wrong; and the codec
 * libraries cannot all be cut into bounded slices (libsnappy decodes a raw
 * block whole, however large), so only a thread bounds what the loop waits.
 * Ordering needs nothing new: the request waits as any waiting request
 * does (broker.c), its connection's later frames are held behind it until
 * it has appended (a pipelined Produce is taken only behind requests that
 * appended already), and the append runs on the loop when the check is
 * done, so appends keep the order the requests were sent in.
 *
 * One job per request, holding each partition's records: a reference to
 * the request's frame when it was taken out of the input whole (a large
 * one, broker_request_t.frame_mem), else a copy (the request's own frame
 * may go with its connection while the thread reads).
 * Jobs run one at a time, in the order submitted. Bounded: at most
 * RECORDS_CHECK_MAX_JOBS jobs and RECORDS_CHECK_MAX_BYTES of records in
 * flight (one job is always let in, however large); a request that finds
 * it full waits and is woken to try again when a job finishes. Loop thread
 * only, except the thread's own work. */
#ifndef KIPPER_BROKER_CORE_RECORDS_CHECK_H
#define KIPPER_BROKER_CORE_RECORDS_CHECK_H

#include "broker_impl.h"
#include "broker/log/batch_validate.h"

#define RECORDS_CHECK_MAX_JOBS 256
#define RECORDS_CHECK_MAX_BYTES ((size_t)64 << 20)
/* Uncompressed records up to this size (per request) are checked on the
 * loop at once: walking them costs about what their CRC pass does. */
#define RECORDS_CHECK_INLINE_BYTES ((size_t)64 << 10)
/* Compressed records of a request that size are first tried on the loop,
 * decompressing at most this much (records_check_try_here): what a small
 * batch of a producer holds. A bomb is stopped there after one window of
 * its codec (COMPRESSION_WINDOW_BYTES, 64 KiB: about 150 us of zlib here),
 * once per connection per RECORDS_CHECK_HERE_PAUSE_MS. */
#define RECORDS_CHECK_INLINE_DECOMPRESSED ((size_t)16 << 10)

/* After records that needed the thread, a connection's next ones go to it
 * at once for this long: a client that keeps sending bombs costs the loop
 * one try in that time, not one per request (COMPRESSION_WINDOW_BYTES of
 * decompression, as the codecs stop at the bound a window at a time). */
#define RECORDS_CHECK_HERE_PAUSE_MS 10000

typedef struct records_check records_check_t;

int records_check_start(broker_t *b);   /* 0, or -1 when the thread cannot start */
void records_check_stop(broker_t *b);   /* runs (or skips) the jobs left, then joins */

/* 1 when records p[0..len) need the thread: some batch or legacy wrapper is
 * compressed (a small input may decompress to a large one). The request's
 * total size is the caller's to compare with RECORDS_CHECK_INLINE_BYTES. */
int records_check_wanted(const uint8_t *p, size_t len);

/* A job for a request of n partitions; the slots not added are not
 * checked. The partitions share one budget of decompressed bytes: the
 * smallest lim->max_decompressed they were added with. */
records_check_t *records_check_new(int n);
/* p[0..len) lies in mem when mem is not NULL (shared, not copied). */
void records_check_add(records_check_t *j, int slot, const uint8_t *p, size_t len, const records_limits_t *lim,
                       shared_bytes_t *mem);
/* Check j on the loop, now, when its records are at most
 * RECORDS_CHECK_INLINE_BYTES and decompress to at most
 * RECORDS_CHECK_INLINE_DECOMPRESSED bytes: 1 when every verdict is in (j
 * is finished, not to be submitted), 0 when j needs the thread (nothing of
 * this try is kept; the thread checks it whole). Why: the thread takes
 * jobs one at a time, in order, so a producer's small compressed batch
 * would wait there behind every bomb another client sent first, each
 * decompressed up to its budget; on the loop it costs what its CRC pass
 * and a few kilobytes of decompression do, and a bomb tried here costs one
 * codec window before it goes to the thread. */
int records_check_try_here(records_check_t *j);
/* Hand j to the thread: 1 when taken (the request conn_id/request_id is
 * woken once it is done), 0 when the service is full (j freed; the request
 * is woken when it may try again), -1 out of memory (j freed). */
int records_check_submit(broker_t *b, records_check_t *j, uint64_t conn_id, uint64_t request_id);
int records_check_finished(const records_check_t *j);
/* A slot's verdict once finished; NULL when it was not added, or when j is
 * NULL (a request none of whose partitions went to the check: the ones not
 * refused before it had no records, which a Produce v0-v2 may send). */
records_verdict_t *records_check_verdict(records_check_t *j, int slot);
/* The request is done with j (answered, or gone with its connection): freed
 * now, or as soon as the thread is done with it, skipping it if not begun. */
void records_check_release(records_check_t *j);

#endif
