/* read_replica.c -- see read_replica.h; repl_preferred_read_replica (repl.h)
 * gathers the candidates from the leader's ISR state. */
#include "read_replica.h"
#include "isr.h"
#include "repl.h"

#include <string.h>

#include "broker/core/cluster.h"

int32_t read_replica_select(const char *leader_rack, const read_replica_view_t *candidates, int n,
                            const char *client_rack)
{
    if (!client_rack || !*client_rack || strcmp(client_rack, leader_rack) == 0)
        return -1;
    const read_replica_view_t *best = NULL;
    for (int i = 0; i < n; i++) {
        const read_replica_view_t *c = &candidates[i];
        if (strcmp(c->rack, client_rack) != 0)
            continue;
        if (!best || c->leo > best->leo || (c->leo == best->leo && c->caught_up_ms > best->caught_up_ms))
            best = c;
    }
    return best ? best->id : -1;
}

int32_t repl_preferred_read_replica(const broker_t *b, const replica_t *r, const char *client_rack,
                                    int64_t fetch_offset)
{
    if (!b->cfg.rack_aware_reads || !client_rack || !*client_rack || r->role != REPLICA_LEADER || !r->isr)
        return -1;
    const isr_t *s = r->isr;
    read_replica_view_t candidates[ISR_MAX];
    int n = 0;
    for (int i = 0; i < s->nfollowers && n < ISR_MAX; i++) {
        const isr_follower_t *f = &s->followers[i];
        const broker_node_t *node = cluster_broker(b, f->id);
        if (node && isr_contains(s->isr, s->nisr, f->id) && f->leo >= fetch_offset)
            candidates[n++] = (read_replica_view_t){f->id, node->ep.rack, f->leo, f->caught_up_ms};
    }
    return read_replica_select(b->cfg.broker_rack, candidates, n, client_rack);
}
