/* handshake.h -- the waiting room of a peer port: connections accepted on
 * the election port or the quorum port that have not yet said who they are
 * (the InitialMessage, FOLLOWERINFO).
 *
 * Anyone may connect to these ports (as to ZooKeeper's, unless quorum SASL
 * is configured), so the room is bounded: at most HANDSHAKE_SLOTS
 * connections wait in it, at most HANDSHAKE_SLOTS_PER_IP from one address,
 * and each for a short deadline (handshake_timeout_ms). A newcomer that
 * finds its address's share full, or the room full, takes the place of the
 * oldest connection waiting from that address, or of the oldest of all,
 * instead of being turned away. A real peer names itself in its first bytes
 * and leaves the room within a round trip, so it is never the oldest for
 * long; whoever holds places by saying nothing is, and goes first: holding
 * the room can neither keep the peers out nor stop an election. One address
 * cannot push out the connections of another until the whole room is full.
 *
 * Plain bookkeeping with no I/O: the owner (election.c, leader.c) closes the
 * connection handshake_victim names, then calls handshake_enter. */
#ifndef KIPPER_KEEPER_HANDSHAKE_H
#define KIPPER_KEEPER_HANDSHAKE_H

#include <stdint.h>

#define HANDSHAKE_SLOTS 64
#define HANDSHAKE_SLOTS_PER_IP 8
/* A peer sends its name as soon as it is connected: two seconds are many
 * round trips even on a loaded machine. ZooKeeper's own read timeouts here
 * (tickTime x syncLimit, x initLimit: 10 and 20 s by default) are the
 * limits for syncing, which are longer than naming oneself needs. */
#define HANDSHAKE_TIMEOUT_MAX_MS 2000

typedef struct {
    void *owner;        /* the waiting connection; NULL: a free place */
    char ip[64];
    uint64_t seq;       /* order of arrival: smaller is older */
} handshake_slot_t;

typedef struct {
    handshake_slot_t slots[HANDSHAKE_SLOTS];
    int used;
    uint64_t next_seq;
} handshake_room_t;

void handshake_room_init(handshake_room_t *r);

/* A connection from ip is accepted: the owner of the connection to close
 * to make room for it, or NULL when there is room already. */
void *handshake_victim(const handshake_room_t *r, const char *ip);

/* Take a place for owner; -1 if the room is full (close the victim first). */
int handshake_enter(handshake_room_t *r, const char *ip, void *owner);

/* owner named itself or closed: its place is free. Harmless without one. */
void handshake_leave(handshake_room_t *r, void *owner);

int handshake_count(const handshake_room_t *r);
int handshake_count_ip(const handshake_room_t *r, const char *ip);

/* The deadline to name oneself: the configured one, at most
 * HANDSHAKE_TIMEOUT_MAX_MS (and that when none is configured). */
uint64_t handshake_timeout_ms(uint64_t configured_ms);

#endif
