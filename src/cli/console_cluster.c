/* console_cluster.c -- what both console tools need of the cluster
 * (console.h): the topic's metadata with a leader for each partition used,
 * the partitions used, and one connection to each leader. */
#define _GNU_SOURCE
#include "console.h"
#include "base/clock.h"
#include "broker/wire/kafka_errors.h"

#include <stdlib.h>
#include <time.h>

#define METADATA_WAIT_MS 10000   /* for a leader of every partition used */
#define METADATA_PAUSE_MS 100

void console_sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static int leaderless(const ga_cluster_t *c, int partition)
{
    for (int i = 0; i < c->parts.n; i++)
        if ((partition < 0 || c->parts.v[i].partition == partition) && c->parts.v[i].leader < 0)
            return 1;
    return 0;
}

int console_metadata(kafka_client_t *boot, const char *topic, int partition, ga_cluster_t *out)
{
    uint64_t deadline = clock_mono_ms() + METADATA_WAIT_MS;
    for (;;) {
        ga_cluster_free(out);
        if (ga_metadata(boot, &topic, 1, out) < 0) {
            fprintf(stderr, "Error: %s\n", boot->err);
            return -1;
        }
        if (out->nmissing) {
            fprintf(stderr, "Error: the topic '%s' does not exist (%s)\n", topic,
                    ga_error_text(KERR_UNKNOWN_TOPIC_OR_PARTITION));
            return -1;
        }
        if (!leaderless(out, partition) || clock_mono_ms() >= deadline)
            return 0;
        console_sleep_ms(METADATA_PAUSE_MS);
    }
}

int console_partitions(const ga_cluster_t *c, const char *topic, int partition, ga_partitions_t *out)
{
    for (int i = 0; i < c->parts.n; i++) {
        const ga_partition_t *p = &c->parts.v[i];
        if (partition >= 0 && p->partition != partition)
            continue;
        ga_partition_t *mine = ga_partitions_get(out, p->topic, p->partition);
        if (!mine)
            return -1;
        mine->leader = p->leader;
    }
    if (out->n == 0) {
        fprintf(stderr, "Error: the topic '%s' has no partition %d (%s)\n", topic, partition,
                ga_error_text(KERR_UNKNOWN_TOPIC_OR_PARTITION));
        return -1;
    }
    return 0;
}

void console_update_leaders(ga_partitions_t *ps, const ga_cluster_t *c)
{
    for (int i = 0; i < ps->n; i++) {
        const ga_partition_t *p = ga_partitions_find(&c->parts, ps->v[i].topic, ps->v[i].partition);
        ps->v[i].leader = p ? p->leader : -1;
    }
}

kafka_client_t *console_conn(console_conns_t *cs, const ga_cluster_t *c, int bi, const char *client_id)
{
    if (!cs->v) {
        cs->v = calloc((size_t)(c->nbrokers ? c->nbrokers : 1), sizeof(*cs->v));
        cs->n = cs->v ? c->nbrokers : 0;
        for (int i = 0; i < cs->n; i++)
            cs->v[i].fd = -1;
    }
    if (bi >= cs->n)
        return NULL;
    kafka_client_t *k = &cs->v[bi];
    const ga_broker_t *b = &c->brokers[bi];
    if (k->fd < 0 && kafka_client_open(k, b->host, b->port, CONSOLE_TIMEOUT_MS, client_id) < 0) {
        fprintf(stderr, "Warning: cannot reach broker %d: %s\n", (int)b->id, k->err);
        kafka_client_close(k);
        return NULL;
    }
    return k;
}

void console_conns_close(console_conns_t *cs)
{
    for (int i = 0; i < cs->n; i++)
        if (cs->v[i].fd >= 0)
            kafka_client_close(&cs->v[i]);
    free(cs->v);
    *cs = (console_conns_t){0};
}

int console_leader_index(const ga_cluster_t *c, int32_t leader)
{
    for (int b = 0; b < c->nbrokers; b++)
        if (c->brokers[b].id == leader)
            return b;
    return -1;
}
