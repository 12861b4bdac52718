/* reassign_throttle.c -- see reassign_throttle.h. */
#define _GNU_SOURCE
#include "reassign_throttle.h"
#include "base/alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int reassign_parse_rate(const char *s, int64_t *rate)
{
    int64_t v = 0;
    if (!s || !*s)
        return -1;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9' || v > (INT64_MAX - (*p - '0')) / 10)
            return -1;
        v = v * 10 + (*p - '0');
    }
    if (v <= 0)
        return -1;
    *rate = v;
    return 0;
}

/* ---- the brokers concerned: a sorted set of ids ---- */

typedef struct {
    int32_t *ids;   /* malloc'd */
    int n, cap;
} id_set_t;

static void set_add(id_set_t *s, int32_t id)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 16;
        s->ids = xrealloc(s->ids, sizeof(*s->ids) * (size_t)s->cap);
    }
    s->ids[s->n++] = id;
}

static void set_add_plan(id_set_t *s, const coord_plan_t *plan)
{
    for (int i = 0; plan && i < plan->n; i++)
        for (int k = 0; k < plan->moves[i].nreplicas; k++)
            set_add(s, plan->moves[i].replicas[k]);
}

static int compare_ids(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Sorted, each id once. */
static void set_finish(id_set_t *s)
{
    if (s->n == 0)
        return;
    qsort(s->ids, (size_t)s->n, sizeof(*s->ids), compare_ids);
    int kept = 1;
    for (int i = 1; i < s->n; i++)
        if (s->ids[i] != s->ids[kept - 1])
            s->ids[kept++] = s->ids[i];
    s->n = kept;
}

/* ---- writing ---- */

static void rate_op(coord_config_op_t *op, const char *key, int kind, int64_t rate)
{
    memset(op, 0, sizeof(*op));
    snprintf(op->key, sizeof(op->key), "%s", key);
    op->op = kind;
    if (kind == COORD_CFG_SET)
        snprintf(op->value, sizeof(op->value), "%lld", (long long)rate);
}

/* One incremental change of both rates on broker id. 0, or -1 with err. */
static int alter_rates(zhandle_t *zh, int32_t id, int kind, int64_t rate, char *err, size_t errlen)
{
    coord_config_op_t *ops = xcalloc(2, sizeof(*ops));
    coord_admin_result_t res;
    char name[16];
    snprintf(name, sizeof(name), "%d", (int)id);
    rate_op(&ops[0], REASSIGN_LEADER_RATE, kind, rate);
    rate_op(&ops[1], REASSIGN_FOLLOWER_RATE, kind, rate);
    int rc = coord_admin_alter_configs(zh, COORD_ENTITY_BROKER, name, ops, 2, 0, 0, &res);
    if (rc < 0)
        snprintf(err, errlen, "cannot %s the throttle of broker %d: %s", kind == COORD_CFG_SET ? "set" : "remove",
                 (int)id, res.message);
    free(ops);
    return rc;
}

int reassign_throttle_set(zhandle_t *zh, const coord_plan_t *plan, const coord_plan_t *current, int64_t rate,
                          char *err, size_t errlen)
{
    id_set_t brokers = {0};
    set_add_plan(&brokers, plan);
    set_add_plan(&brokers, current);
    set_finish(&brokers);
    int rc = 0;
    for (int i = 0; rc == 0 && i < brokers.n; i++)
        rc = alter_rates(zh, brokers.ids[i], COORD_CFG_SET, rate, err, errlen);
    free(brokers.ids);
    return rc;
}

/* ---- removing ---- */

/* 1 when broker id's dynamic configs hold either rate, 0 when not, -1 with
 * err. entries has room for COORD_MAX_TOPIC_CONFIGS. */
static int has_rates(zhandle_t *zh, int32_t id, coord_config_entry_t *entries, char *err, size_t errlen)
{
    coord_admin_result_t res;
    char name[16];
    int n = 0;
    snprintf(name, sizeof(name), "%d", (int)id);
    if (coord_admin_read_configs(zh, COORD_ENTITY_BROKER, name, entries, &n, NULL, &res) < 0) {
        snprintf(err, errlen, "cannot read the configs of broker %d: %s", (int)id, res.message);
        return -1;
    }
    for (int i = 0; i < n; i++)
        if (strcmp(entries[i].key, REASSIGN_LEADER_RATE) == 0 || strcmp(entries[i].key, REASSIGN_FOLLOWER_RATE) == 0)
            return 1;
    return 0;
}

/* The registered brokers and those the plan names. 0, or -1 with err. */
static int brokers_to_clear(zhandle_t *zh, const coord_plan_t *plan, id_set_t *s, char *err, size_t errlen)
{
    int32_t *live = xcalloc(COORD_ADMIN_MAX_BROKERS, sizeof(*live));
    int nlive = 0;
    int rc = coord_admin_live_brokers(zh, live, COORD_ADMIN_MAX_BROKERS, &nlive, err, errlen);
    for (int i = 0; rc == 0 && i < nlive; i++)
        set_add(s, live[i]);
    free(live);
    set_add_plan(s, plan);
    set_finish(s);
    return rc;
}

int reassign_throttle_remove(zhandle_t *zh, const coord_plan_t *plan, char *err, size_t errlen)
{
    id_set_t brokers = {0};
    int rc = brokers_to_clear(zh, plan, &brokers, err, errlen);
    coord_config_entry_t *entries = xcalloc(COORD_MAX_TOPIC_CONFIGS, sizeof(*entries));
    int removed = 0;
    for (int i = 0; rc == 0 && i < brokers.n; i++) {
        int has = has_rates(zh, brokers.ids[i], entries, err, errlen);
        if (has == 1)
            has = alter_rates(zh, brokers.ids[i], COORD_CFG_DELETE, 0, err, errlen) < 0 ? -1 : 1;
        rc = has < 0 ? -1 : 0;
        removed += has == 1;
    }
    free(entries);
    free(brokers.ids);
    return rc < 0 ? -1 : removed > 0;
}
