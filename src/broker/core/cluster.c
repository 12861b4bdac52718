/* cluster.c -- the broker's view of the cluster as the coordinator
 * describes it: live brokers and topics (sorted arrays, binary search), each
 * topic's partitions by id. cluster_sync.c keeps it current; nothing here
 * talks to the coordinator. */
#define _GNU_SOURCE
#include "cluster.h"
#include "base/alloc.h"
#include "base/logging.h"

#include <stdlib.h>
#include <string.h>

/* Index of the first topic whose name is >= name. */
static int topic_slot(const broker_t *b, const char *name)
{
    int lo = 0, hi = b->ntopics;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (strcmp(b->topics[mid]->name, name) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

topic_t *cluster_topic(broker_t *b, const char *name)
{
    int i = topic_slot(b, name);
    return i < b->ntopics && strcmp(b->topics[i]->name, name) == 0 ? b->topics[i] : NULL;
}

topic_t *cluster_topic_by_id(broker_t *b, const uint8_t id[16])
{
    for (int i = 0; i < b->ntopics; i++)
        if (b->topics[i]->have_doc && memcmp(b->topics[i]->doc.topic_id, id, 16) == 0)
            return b->topics[i];
    return NULL;
}

topic_t *cluster_topic_add(broker_t *b, const char *name)
{
    int i = topic_slot(b, name);
    if (i < b->ntopics && strcmp(b->topics[i]->name, name) == 0)
        return b->topics[i];
    topic_t *t = xcalloc(1, sizeof(*t));
    snprintf(t->name, sizeof(t->name), "%s", name);
    b->topics = xrealloc(b->topics, sizeof(*b->topics) * (size_t)(b->ntopics + 1));
    memmove(&b->topics[i + 1], &b->topics[i], sizeof(*b->topics) * (size_t)(b->ntopics - i));
    b->topics[i] = t;
    b->ntopics++;
    return t;
}

/* The caller has stopped the topic's replicas. */
void cluster_topic_remove(broker_t *b, topic_t *t)
{
    int i = topic_slot(b, t->name);
    if (i >= b->ntopics || b->topics[i] != t)
        return;
    memmove(&b->topics[i], &b->topics[i + 1], sizeof(*b->topics) * (size_t)(b->ntopics - i - 1));
    b->ntopics--;
    for (int k = 0; k < t->nparts; k++)
        free(t->parts[k]);
    free(t->parts);
    free(t->overrides);
    free(t);
}

partition_t *cluster_partition(broker_t *b, const char *topic, int32_t partition)
{
    topic_t *t = cluster_topic(b, topic);
    if (!t || partition < 0 || partition >= t->nparts)
        return NULL;
    return t->parts[partition];
}

partition_t *topic_partition_add(topic_t *t, int32_t id)
{
    if (id < 0 || id >= COORD_MAX_PARTITIONS)
        return NULL;
    if (id >= t->nparts) {
        t->parts = xrealloc(t->parts, sizeof(*t->parts) * (size_t)(id + 1));
        memset(&t->parts[t->nparts], 0, sizeof(*t->parts) * (size_t)(id + 1 - t->nparts));
        t->nparts = id + 1;
    }
    if (!t->parts[id]) {
        partition_t *p = xcalloc(1, sizeof(*p));
        p->topic = t;
        p->id = id;
        p->leader = -1;
        p->leader_epoch = -1;
        p->isr_epoch = -1;
        t->parts[id] = p;
    }
    return t->parts[id];
}

const broker_node_t *cluster_broker(const broker_t *b, int32_t id)
{
    int lo = 0, hi = b->nbrokers;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (b->brokers[mid].id == id)
            return &b->brokers[mid];
        if (b->brokers[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

int cluster_broker_live(const broker_t *b, int32_t id)
{
    return cluster_broker(b, id) != NULL;
}

/* The overrides of /config/topics/[topic] when it exists, else those an
 * older kipper kept in the topic document (read old, write new). */
const char *topic_config(const topic_t *t, const char *key)
{
    const coord_config_entry_t *e = t->config_state == TOPIC_CONFIG_PRESENT ? t->overrides : t->doc.configs;
    int n = t->config_state == TOPIC_CONFIG_PRESENT ? t->noverrides : t->doc.nconfigs;
    for (int i = 0; i < n; i++)
        if (strcmp(e[i].key, key) == 0)
            return e[i].value;
    return NULL;
}
