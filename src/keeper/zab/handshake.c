/* handshake.c -- see handshake.h. */
#include "handshake.h"

#include <stdio.h>
#include <string.h>

void handshake_room_init(handshake_room_t *r)
{
    memset(r, 0, sizeof(*r));
}

int handshake_count(const handshake_room_t *r)
{
    return r->used;
}

int handshake_count_ip(const handshake_room_t *r, const char *ip)
{
    int n = 0;
    for (int i = 0; i < HANDSHAKE_SLOTS; i++)
        if (r->slots[i].owner && strcmp(r->slots[i].ip, ip) == 0)
            n++;
    return n;
}

/* The oldest waiting connection, of ip alone when ip is not NULL. */
static const handshake_slot_t *oldest(const handshake_room_t *r, const char *ip)
{
    const handshake_slot_t *best = NULL;
    for (int i = 0; i < HANDSHAKE_SLOTS; i++) {
        const handshake_slot_t *s = &r->slots[i];
        if (s->owner && (!ip || strcmp(s->ip, ip) == 0) && (!best || s->seq < best->seq))
            best = s;
    }
    return best;
}

void *handshake_victim(const handshake_room_t *r, const char *ip)
{
    const handshake_slot_t *v = NULL;
    if (handshake_count_ip(r, ip) >= HANDSHAKE_SLOTS_PER_IP)
        v = oldest(r, ip);
    else if (r->used >= HANDSHAKE_SLOTS)
        v = oldest(r, NULL);
    return v ? v->owner : NULL;
}

int handshake_enter(handshake_room_t *r, const char *ip, void *owner)
{
    for (int i = 0; i < HANDSHAKE_SLOTS; i++) {
        handshake_slot_t *s = &r->slots[i];
        if (s->owner)
            continue;
        s->owner = owner;
        snprintf(s->ip, sizeof(s->ip), "%s", ip);
        s->seq = r->next_seq++;
        r->used++;
        return 0;
    }
    return -1;
}

void handshake_leave(handshake_room_t *r, void *owner)
{
    for (int i = 0; i < HANDSHAKE_SLOTS; i++)
        if (r->slots[i].owner == owner) {
            r->slots[i].owner = NULL;
            r->used--;
            return;
        }
}

uint64_t handshake_timeout_ms(uint64_t configured_ms)
{
    return configured_ms > 0 && configured_ms < HANDSHAKE_TIMEOUT_MAX_MS ? configured_ms : HANDSHAKE_TIMEOUT_MAX_MS;
}
