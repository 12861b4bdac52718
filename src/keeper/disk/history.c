/* history.c -- see history.h. */
#include "history.h"
#include "base/buf.h"
#include "base/alloc.h"

#include <stdlib.h>
#include <string.h>

void history_init(history_t *h, size_t max_entries, size_t max_bytes, int64_t base_zxid)
{
    memset(h, 0, sizeof(*h));
    h->cap = max_entries ? max_entries : 1;
    h->items = xcalloc(h->cap, sizeof(*h->items));
    h->max_bytes = max_bytes;
    h->base_zxid = base_zxid;
}

static history_entry_t *slot(const history_t *h, size_t i)
{
    return &h->items[(h->head + i) % h->cap];
}

static void drop_oldest(history_t *h)
{
    history_entry_t *e = slot(h, 0);
    h->base_zxid = e->zxid;
    h->bytes -= e->len;
    free(e->bytes);
    e->bytes = NULL;
    h->head = (h->head + 1) % h->cap;
    h->count--;
}

void history_reset(history_t *h, int64_t base_zxid)
{
    while (h->count)
        drop_oldest(h);
    h->base_zxid = base_zxid;
}

void history_free(history_t *h)
{
    if (!h->items)
        return;
    history_reset(h, 0);
    free(h->items);
    h->items = NULL;
}

void history_add(history_t *h, const txn_header_t *hdr, const txn_t *txn)
{
    buf_t b;
    buf_init(&b);
    txn_header_write(&b, hdr);
    txn_body_write(&b, txn);
    while (h->count && (h->count == h->cap || h->bytes + b.len > h->max_bytes))
        drop_oldest(h);
    history_entry_t *e = slot(h, h->count);
    e->zxid = hdr->zxid;
    /* The buffer's memory moves into the entry, trimmed to its length so
     * the byte bound counts what is really held. */
    uint8_t *trimmed = realloc(b.data, b.len ? b.len : 1);
    e->bytes = trimmed ? trimmed : b.data;
    e->len = b.len;
    h->bytes += b.len;
    h->count++;
}

const history_entry_t *history_at(const history_t *h, size_t i)
{
    return i < h->count ? slot(h, i) : NULL;
}

int64_t history_last_zxid(const history_t *h)
{
    return h->count ? slot(h, h->count - 1)->zxid : h->base_zxid;
}

long history_find(const history_t *h, int64_t zxid)
{
    size_t lo = 0, hi = h->count;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int64_t z = slot(h, mid)->zxid;
        if (z == zxid)
            return (long)mid;
        if (z < zxid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

long history_find_before(const history_t *h, int64_t limit)
{
    long found = -1;
    size_t lo = 0, hi = h->count;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (slot(h, mid)->zxid < limit) {
            found = (long)mid;
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return found;
}

void history_truncate_after(history_t *h, int64_t zxid)
{
    while (h->count && slot(h, h->count - 1)->zxid > zxid) {
        history_entry_t *e = slot(h, h->count - 1);
        h->bytes -= e->len;
        free(e->bytes);
        e->bytes = NULL;
        h->count--;
    }
    if (h->base_zxid > zxid)
        h->base_zxid = zxid;
}
