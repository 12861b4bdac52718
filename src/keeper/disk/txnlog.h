/* txnlog.h -- the transaction log (ZooKeeper's FileTxnLog layout), written
 * by a helper thread that group-commits with fdatasync.
 *
 * File: dataLogDir/version-2/log.<first zxid in hex>:
 *   FileHeader {int magic "ZKLG", int version 2, long dbid 0}
 *   per txn: long Adler-32 of the entry, int length, the entry (TxnHeader +
 *   txn record), byte 0x42 ('B')
 *   then zeros: files are preallocated in preAllocSize steps so an
 *   fdatasync after an append does not have to update the file size, and
 *   the TXNLOG_ZERO_AHEAD bytes after the records are written as zeros so
 *   that it does not have to record newly written blocks either.
 *
 * The event loop appends serialized records; the writer thread takes
 * everything appended since its last round, writes it, fdatasyncs once, and
 * reports the highest durable zxid back through the loop, so many writes
 * share one fsync and the loop never blocks on the disk. A failed write
 * (ENOSPC, EIO) is reported with the first zxid that did not become
 * durable; the log is cut back to the last durable record and accepts
 * appends again from that zxid. */
#ifndef KIPPER_KEEPER_TXNLOG_H
#define KIPPER_KEEPER_TXNLOG_H

#include <stddef.h>
#include <stdint.h>

#include "base/loop.h"
#include "keeper/data/txn.h"

typedef struct txnlog txnlog_t;

/* With preallocation on, at least this many bytes after the last record
 * are written zeros, not only reserved (txnlog.c, zero_ahead). */
#define TXNLOG_ZERO_AHEAD ((int64_t)64 << 10)

/* Called on the loop thread. err == 0: every txn up to durable_zxid is on
 * disk. err != 0 (an errno): txns from failed_zxid on were not written and
 * are forgotten by the log; durable_zxid is still the last durable one. */
typedef void (*txnlog_done_fn)(void *arg, int64_t durable_zxid, int err, int64_t failed_zxid);

typedef struct {
    const char *dir;          /* dataLogDir/version-2, created if missing */
    int force_sync;           /* 0: no fdatasync (forceSync=no) */
    int64_t prealloc_bytes;   /* preAllocSize; 0 disables preallocation */
    int64_t last_zxid;        /* the last zxid already in the log (from recovery) */
} txnlog_options_t;

txnlog_t *txnlog_open(loop_t *loop, const txnlog_options_t *opts, txnlog_done_fn done, void *arg, char *err,
                      size_t errlen);
/* Flush what was appended, stop the writer thread, close. */
void txnlog_close(txnlog_t *log);

/* Queue one txn (loop thread). Zxids must increase. 0 or -1 (memory). */
int txnlog_append(txnlog_t *log, const txn_header_t *hdr, const txn_t *txn);
/* The next append starts a new file (after a snapshot). */
void txnlog_roll(txnlog_t *log);
/* Txns appended but not yet reported durable. */
size_t txnlog_pending(const txnlog_t *log);

/* ---- reading, for recovery ---- */

/* Called for each txn with zxid > after_zxid, in order. Return 0 to go on. */
typedef int (*txnlog_replay_fn)(void *arg, const txn_header_t *hdr, const txn_t *txn);

typedef struct {
    int64_t last_zxid;        /* the last valid txn found (after_zxid if none) */
    size_t replayed;          /* txns handed to fn */
    int64_t truncated_bytes;  /* torn or corrupt tail cut from the last file */
} txnlog_replay_result_t;

/* Replay dir's logs after after_zxid. A torn or corrupt tail of the newest
 * file is truncated (and reported); damage anywhere else, or a gap in the
 * zxids, is an error: -1 with err, and the caller must refuse to start. */
int txnlog_replay(const char *dir, int64_t after_zxid, txnlog_replay_fn fn, void *arg,
                  txnlog_replay_result_t *result, char *err, size_t errlen);

/* Remove every txn after zxid (a follower told to TRUNC by its leader):
 * later files are deleted, the file holding zxid is cut after it. Only
 * while no txnlog_t is writing to dir. 0, or -1 with err. */
int txnlog_truncate_after(const char *dir, int64_t zxid, char *err, size_t errlen);

/* Delete log files holding only txns at or below zxid (autopurge).
 * Returns how many were removed, or -1. */
int txnlog_purge_before(const char *dir, int64_t zxid);

#endif
