/* history.h -- the recent transactions a keeper has logged, serialized, in
 * zxid order, so a leader can bring a follower up to date with a DIFF (and
 * find where a follower's log diverges, for a TRUNC) without reading its
 * log files. Bounded by count and bytes; older entries fall off, and a
 * follower too far behind gets a SNAP instead. */
#ifndef KIPPER_KEEPER_HISTORY_H
#define KIPPER_KEEPER_HISTORY_H

#include <stddef.h>
#include <stdint.h>

#include "keeper/data/txn.h"

typedef struct {
    int64_t zxid;
    uint8_t *bytes;   /* TxnHeader + txn record, as a PROPOSAL carries them */
    size_t len;
} history_entry_t;

typedef struct {
    history_entry_t *items;   /* ring */
    size_t cap, head, count;
    size_t bytes, max_bytes;
    int64_t base_zxid;        /* the zxid just before the oldest entry: the state it builds on */
} history_t;

void history_init(history_t *h, size_t max_entries, size_t max_bytes, int64_t base_zxid);
void history_free(history_t *h);
/* Forget everything; the next entry builds on base_zxid. */
void history_reset(history_t *h, int64_t base_zxid);
void history_add(history_t *h, const txn_header_t *hdr, const txn_t *txn);
/* Entry i (0 = oldest). */
const history_entry_t *history_at(const history_t *h, size_t i);
int64_t history_last_zxid(const history_t *h);   /* base_zxid when empty */
/* Index of the entry with exactly this zxid, or -1. */
long history_find(const history_t *h, int64_t zxid);
/* Index of the newest entry with zxid < limit, or -1 (then base_zxid is the answer). */
long history_find_before(const history_t *h, int64_t limit);
/* Drop entries after zxid (a TRUNC). */
void history_truncate_after(history_t *h, int64_t zxid);

#endif
