/* elections.c -- see elections.h. Each node is read with a watch (exists
 * first while it is absent: getData leaves no watch on a missing node). */
#define _GNU_SOURCE
#include "elections.h"
#include "cluster.h"
#include "replica.h"
#include "base/alloc.h"
#include "base/logging.h"
#include "broker/coord/coord_elect.h"
#include "broker/repl/repl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    broker_t *b;
    char path[64];
} node_read_t;

static void read_node(broker_t *b, const char *path);

static int is_preferred(const char *path)
{
    return strcmp(path, COORD_PREFERRED_ELECTION) == 0;
}

static int tp_order(const void *x, const void *y)
{
    const coord_tp_t *a = x, *b = y;
    int c = strcmp(a->topic, b->topic);
    return c ? c : (a->partition > b->partition) - (a->partition < b->partition);
}

/* The unclean permission is exactly the node's list: set for those named,
 * cleared for every other partition. The list is sorted here, so a long
 * one against many partitions costs a search per partition. */
static void apply_unclean(broker_t *b, coord_tp_t *tps, int n)
{
    if (n > 1)
        qsort(tps, (size_t)n, sizeof(*tps), tp_order);   /* tps may be NULL when n is 0 */
    for (int i = 0; i < b->ntopics; i++)
        for (int k = 0; k < b->topics[i]->nparts; k++) {
            partition_t *p = b->topics[i]->parts[k];
            if (!p)
                continue;
            coord_tp_t key = {.partition = p->id};
            snprintf(key.topic, sizeof(key.topic), "%s", p->topic->name);
            int named = n > 0 && bsearch(&key, tps, (size_t)n, sizeof(*tps), tp_order) != NULL;
            if (named == p->unclean_asked)
                continue;
            p->unclean_asked = named;
            if (named)
                log_warn("%s-%d may elect a replica outside its ISR (kipper elect --unclean)", p->topic->name,
                         (int)p->id);
            replica_reconcile(b, p);
        }
}

static void apply_preferred(broker_t *b, const coord_tp_t *tps, int n)
{
    for (int j = 0; j < n; j++) {
        partition_t *p = cluster_partition(b, tps[j].topic, tps[j].partition);
        if (p)
            repl_preferred_asked(b, p);
    }
}

static void node_read(coord_t *co, const coord_result_t *res, void *arg)
{
    (void)co;
    node_read_t *nr = arg;
    broker_t *b = nr->b;
    const char *path = nr->path;
    coord_tp_t *tps = NULL;
    int n = 0;
    char err[256];
    if (res->rc == ZOK && coord_tp_list_parse(res->data, res->len < 0 ? 0 : (size_t)res->len, &tps, &n, err,
                                              sizeof(err)) < 0)
        log_warn("%s: %s; ignored", path, err);
    if (res->rc == ZOK || res->rc == ZNONODE) {
        if (is_preferred(path))
            apply_preferred(b, tps, n);
        else
            apply_unclean(b, tps, n);
    }
    if (res->rc == ZNONODE)
        coord_exists(b->coord, path, 1, NULL, NULL);   /* the watch tells us when it appears */
    free(tps);
    free(arg);
}

static void read_node(broker_t *b, const char *path)
{
    node_read_t *nr = xmalloc(sizeof(*nr));
    nr->b = b;
    snprintf(nr->path, sizeof(nr->path), "%s", path);
    if (coord_get(b->coord, path, 1, node_read, nr) < 0)
        free(nr);
}

void elections_read(broker_t *b)
{
    read_node(b, COORD_PREFERRED_ELECTION);
    read_node(b, COORD_UNCLEAN_ELECTION);
}

int elections_event(broker_t *b, int type, const char *path)
{
    (void)type;
    if (strcmp(path, COORD_PREFERRED_ELECTION) != 0 && strcmp(path, COORD_UNCLEAN_ELECTION) != 0)
        return 0;
    read_node(b, path);
    return 1;
}
