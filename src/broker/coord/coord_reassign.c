/* coord_reassign.c -- see coord_reassign.h. */
#define _GNU_SOURCE
#include "coord_reassign.h"

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"

void coord_plan_free(coord_plan_t *plan)
{
    free(plan->moves);
    plan->moves = NULL;
    plan->n = 0;
}

static coord_move_t *plan_add(coord_plan_t *plan)
{
    plan->moves = xrealloc(plan->moves, sizeof(*plan->moves) * (size_t)(plan->n + 1));
    coord_move_t *m = &plan->moves[plan->n++];
    memset(m, 0, sizeof(*m));
    return m;
}

/* ---- the file format ---- */

static int parse_replicas(json_t *entry, coord_move_t *m, char *err, size_t errlen)
{
    json_t *reps = json_object_get(entry, "replicas");
    size_t n = json_is_array(reps) ? json_array_size(reps) : 0;
    if (n == 0 || n > COORD_MAX_REPLICAS) {
        snprintf(err, errlen, "%s-%d: \"replicas\" must list 1 to %d broker ids", m->topic, (int)m->partition,
                 COORD_MAX_REPLICAS);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        json_t *v = json_array_get(reps, i);
        json_int_t id = json_is_integer(v) ? json_integer_value(v) : -1;
        if (id < 0 || id > INT32_MAX) {
            snprintf(err, errlen, "%s-%d: broker ids are integers 0..%d", m->topic, (int)m->partition, INT32_MAX);
            return -1;
        }
        for (size_t k = 0; k < i; k++)
            if (m->replicas[k] == (int32_t)id) {
                snprintf(err, errlen, "%s-%d: broker %d is listed twice", m->topic, (int)m->partition, (int)id);
                return -1;
            }
        m->replicas[m->nreplicas++] = (int32_t)id;
    }
    json_t *dirs = json_object_get(entry, "log_dirs");
    for (size_t i = 0; dirs && i < json_array_size(dirs); i++)
        if (!json_is_string(json_array_get(dirs, i)) || strcmp(json_string_value(json_array_get(dirs, i)), "any")) {
            snprintf(err, errlen, "%s-%d: \"log_dirs\" may only be \"any\" (a broker picks its log dir)", m->topic,
                     (int)m->partition);
            return -1;
        }
    if (dirs && (!json_is_array(dirs) || json_array_size(dirs) != n)) {
        snprintf(err, errlen, "%s-%d: \"log_dirs\" must have one entry per replica", m->topic, (int)m->partition);
        return -1;
    }
    return 0;
}

static int parse_entry(json_t *entry, size_t i, coord_plan_t *plan, char *err, size_t errlen)
{
    json_t *topic = json_object_get(entry, "topic"), *partition = json_object_get(entry, "partition");
    char why[256];
    if (!json_is_object(entry) || !json_is_string(topic) || !json_is_integer(partition) ||
        json_integer_value(partition) < 0 || json_integer_value(partition) >= COORD_MAX_PARTITIONS) {
        snprintf(err, errlen, "partitions[%zu] must have a \"topic\" string and a \"partition\" number", i);
        return -1;
    }
    if (coord_topic_name_valid(json_string_value(topic), why, sizeof(why)) < 0) {
        snprintf(err, errlen, "partitions[%zu]: %s", i, why);
        return -1;
    }
    coord_move_t *m = plan_add(plan);
    snprintf(m->topic, sizeof(m->topic), "%s", json_string_value(topic));
    m->partition = (int32_t)json_integer_value(partition);
    return parse_replicas(entry, m, err, errlen);
}

int coord_plan_parse(const char *json, size_t len, coord_plan_t *plan, char *err, size_t errlen)
{
    json_error_t je;
    memset(plan, 0, sizeof(*plan));
    json_t *root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &je);
    if (!root) {
        snprintf(err, errlen, "not valid JSON: %s (line %d)", je.text, je.line);
        return -1;
    }
    json_t *parts = json_object_get(root, "partitions"), *version = json_object_get(root, "version");
    int rc = 0;
    if (!json_is_object(root) || !json_is_array(parts) || (version && json_integer_value(version) != 1)) {
        snprintf(err, errlen, "expected {\"version\":1,\"partitions\":[...]}");
        rc = -1;
    } else if (json_array_size(parts) == 0 || json_array_size(parts) > COORD_PLAN_MAX_MOVES) {
        snprintf(err, errlen, "\"partitions\" must list 1 to %d moves", COORD_PLAN_MAX_MOVES);
        rc = -1;
    }
    for (size_t i = 0; rc == 0 && i < json_array_size(parts); i++)
        rc = parse_entry(json_array_get(parts, i), i, plan, err, errlen);
    int twice = rc == 0 ? coord_partition_repeated(plan->moves, plan->n, sizeof(*plan->moves),
                                                   offsetof(coord_move_t, partition))
                        : -1;
    if (twice >= 0) {
        snprintf(err, errlen, "%s-%d is named twice", plan->moves[twice].topic, (int)plan->moves[twice].partition);
        rc = -1;
    }
    json_decref(root);
    if (rc < 0)
        coord_plan_free(plan);
    return rc;
}

int coord_topics_to_move_parse(const char *json, size_t len, char ***names, int *n, char *err, size_t errlen)
{
    json_error_t je;
    char why[256];
    *names = NULL;
    *n = 0;
    json_t *root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &je);
    json_t *topics = root ? json_object_get(root, "topics") : NULL;
    if (!root || !json_is_array(topics) || json_array_size(topics) == 0 || json_array_size(topics) > 100000) {
        snprintf(err, errlen, root ? "expected {\"version\":1,\"topics\":[{\"topic\":\"name\"},...]}"
                                   : "not valid JSON: %s (line %d)", je.text, je.line);
        json_decref(root);
        return -1;
    }
    *names = xcalloc(json_array_size(topics), sizeof(**names));
    for (size_t i = 0; i < json_array_size(topics); i++) {
        json_t *t = json_object_get(json_array_get(topics, i), "topic");
        if (!json_is_string(t) || coord_topic_name_valid(json_string_value(t), why, sizeof(why)) < 0) {
            snprintf(err, errlen, "topics[%zu]: %s", i, json_is_string(t) ? why : "needs a \"topic\" name");
            coord_admin_names_free(*names, *n);
            *names = NULL;
            *n = 0;
            json_decref(root);
            return -1;
        }
        (*names)[(*n)++] = xstrdup(json_string_value(t));
    }
    json_decref(root);
    return 0;
}

char *coord_plan_format(const coord_plan_t *plan)
{
    json_t *parts = json_array();
    for (int i = 0; parts && i < plan->n; i++) {
        const coord_move_t *m = &plan->moves[i];
        json_t *reps = json_array(), *dirs = json_array();
        for (int k = 0; reps && dirs && k < m->nreplicas; k++) {
            json_array_append_new(reps, json_integer(m->replicas[k]));
            json_array_append_new(dirs, json_string("any"));
        }
        json_array_append_new(parts, json_pack("{s:s, s:i, s:o, s:o}", "topic", m->topic, "partition", (int)m->partition,
                                               "replicas", reps, "log_dirs", dirs));
    }
    json_t *root = json_pack("{s:i, s:o}", "version", 1, "partitions", parts);
    char *out = root ? json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(root);
    return out;
}

/* ---- against the coordinator ---- */

/* The partition's current replicas: 0, or -1 with err (unknown topic or
 * partition). d caches the last topic described. */
static int current_replicas(zhandle_t *zh, const char *topic, int32_t partition, coord_topic_desc_t *d,
                            const coord_partition_desc_t **out, char *err, size_t errlen)
{
    coord_admin_result_t res;
    if (strcmp(d->name, topic) != 0) {
        coord_admin_topic_desc_free(d);
        if (coord_admin_describe_topic(zh, topic, d, &res) < 0) {
            d->name[0] = 0;
            if (res.error == KERR_UNKNOWN_TOPIC_OR_PARTITION)
                snprintf(err, errlen, "topic %s does not exist", topic);
            else
                snprintf(err, errlen, "%s: %s", topic, res.message);
            return -1;
        }
    }
    for (int i = 0; i < d->npartitions; i++)
        if (d->partitions[i].partition == partition) {
            *out = &d->partitions[i];
            return 0;
        }
    snprintf(err, errlen, "topic %s has no partition %d", topic, (int)partition);
    return -1;
}

static int in_list(const int32_t *v, int n, int32_t id)
{
    for (int i = 0; i < n; i++)
        if (v[i] == id)
            return 1;
    return 0;
}

/* every: each broker a move names must be registered; else only those it
 * adds to the partition (not among its replicas now). */
static int plan_check(zhandle_t *zh, const coord_plan_t *plan, int every, char *err, size_t errlen)
{
    int32_t *live = xcalloc(COORD_ADMIN_MAX_BROKERS, sizeof(*live));
    int nlive = 0, rc = coord_admin_live_brokers(zh, live, COORD_ADMIN_MAX_BROKERS, &nlive, err, errlen);
    coord_topic_desc_t d = {.name = ""};
    for (int i = 0; rc == 0 && i < plan->n; i++) {
        const coord_move_t *m = &plan->moves[i];
        const coord_partition_desc_t *p;
        rc = current_replicas(zh, m->topic, m->partition, &d, &p, err, errlen);
        for (int k = 0; rc == 0 && k < m->nreplicas; k++)
            if (!in_list(live, nlive, m->replicas[k]) &&
                (every || !in_list(p->replicas, p->nreplicas, m->replicas[k]))) {
                snprintf(err, errlen, "%s-%d: broker %d is not registered (no such live broker)", m->topic,
                         (int)m->partition, (int)m->replicas[k]);
                rc = -1;
            }
    }
    coord_admin_topic_desc_free(&d);
    free(live);
    return rc;
}

int coord_plan_check(zhandle_t *zh, const coord_plan_t *plan, char *err, size_t errlen)
{
    return plan_check(zh, plan, 1, err, errlen);
}

int coord_plan_check_added(zhandle_t *zh, const coord_plan_t *plan, char *err, size_t errlen)
{
    return plan_check(zh, plan, 0, err, errlen);
}

int coord_plan_current(zhandle_t *zh, const coord_plan_t *plan, coord_plan_t *current, char *err, size_t errlen)
{
    coord_topic_desc_t d = {.name = ""};
    memset(current, 0, sizeof(*current));
    int rc = 0;
    for (int i = 0; rc == 0 && i < plan->n; i++) {
        const coord_partition_desc_t *p;
        rc = current_replicas(zh, plan->moves[i].topic, plan->moves[i].partition, &d, &p, err, errlen);
        if (rc == 0) {
            coord_move_t *m = plan_add(current);
            *m = plan->moves[i];
            memcpy(m->replicas, p->replicas, sizeof(*p->replicas) * (size_t)p->nreplicas);
            m->nreplicas = p->nreplicas;
        }
    }
    coord_admin_topic_desc_free(&d);
    if (rc < 0)
        coord_plan_free(current);
    return rc;
}

static int move_path(const coord_move_t *m, char *path, size_t n, char *err, size_t errlen)
{
    if (coord_path_reassignment(path, n, m->topic, m->partition) < 0) {
        snprintf(err, errlen, "%s-%d: path too long", m->topic, (int)m->partition);
        return -1;
    }
    return 0;
}

/* One move's node: created, or set when a move is in progress. */
static int start_move(zhandle_t *zh, const coord_move_t *m, char *err, size_t errlen)
{
    char path[COORD_TOPIC_NAME_MAX + 64], doc[1024], parent[COORD_TOPIC_NAME_MAX + 64];
    int len = coord_replicas_write(doc, sizeof(doc), m->replicas, m->nreplicas);
    if (len < 0 || move_path(m, path, sizeof(path), err, errlen) < 0 ||
        coord_path_reassignment(parent, sizeof(parent), m->topic, -1) < 0)
        return -1;
    int rc = zoo_create(zh, parent, NULL, -1, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
    if (rc == ZOK || rc == ZNODEEXISTS)
        rc = zoo_create(zh, path, doc, len, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
    if (rc == ZNODEEXISTS)
        rc = zoo_set(zh, path, doc, len, -1);
    if (rc != ZOK) {
        snprintf(err, errlen, "cannot write %s: %s", path, zerror(rc));
        return -1;
    }
    return 0;
}

static int same_list(const int32_t *a, int na, const int32_t *b, int nb)
{
    return na == nb && memcmp(a, b, sizeof(*a) * (size_t)na) == 0;
}

int coord_plan_execute(zhandle_t *zh, const coord_plan_t *plan, char *err, size_t errlen)
{
    coord_topic_desc_t d = {.name = ""};
    int rc = 0;
    for (int i = 0; rc == 0 && i < plan->n; i++) {
        const coord_move_t *m = &plan->moves[i];
        const coord_partition_desc_t *p;
        rc = current_replicas(zh, m->topic, m->partition, &d, &p, err, errlen);
        if (rc < 0)
            break;
        if (!same_list(p->replicas, p->nreplicas, m->replicas, m->nreplicas))
            rc = start_move(zh, m, err, errlen);
        else   /* the target is where the partition is: a move elsewhere stops */
            rc = coord_plan_cancel(zh, &(coord_plan_t){.moves = &plan->moves[i], .n = 1}, err, errlen);
    }
    coord_admin_topic_desc_free(&d);
    return rc;
}

int coord_plan_cancel(zhandle_t *zh, const coord_plan_t *plan, char *err, size_t errlen)
{
    for (int i = 0; i < plan->n; i++) {
        char path[COORD_TOPIC_NAME_MAX + 64];
        if (move_path(&plan->moves[i], path, sizeof(path), err, errlen) < 0)
            return -1;
        int rc = zoo_delete(zh, path, -1);
        if (rc != ZOK && rc != ZNONODE) {
            snprintf(err, errlen, "cannot delete %s: %s", path, zerror(rc));
            return -1;
        }
    }
    return 0;
}

void coord_move_sets(const int32_t *current, int ncurrent, const int32_t *target, int ntarget,
                     coord_move_sets_t *out)
{
    memset(out, 0, sizeof(*out));
    for (int i = 0; i < ntarget && i < COORD_MAX_REPLICAS; i++) {
        out->replicas[out->nreplicas++] = target[i];
        if (!in_list(current, ncurrent, target[i]))
            out->adding[out->nadding++] = target[i];
    }
    for (int i = 0; i < ncurrent && i < COORD_MAX_REPLICAS; i++)
        if (!in_list(target, ntarget, current[i]))
            out->replicas[out->nreplicas++] = out->removing[out->nremoving++] = current[i];
}

int coord_move_read(zhandle_t *zh, const char *topic, int32_t partition, int32_t *target, int *ntarget, char *err,
                    size_t errlen)
{
    char path[COORD_TOPIC_NAME_MAX + 64], data[1024];
    int len = sizeof(data);
    *ntarget = 0;
    if (coord_path_reassignment(path, sizeof(path), topic, partition) < 0) {
        snprintf(err, errlen, "%s-%d: path too long", topic, (int)partition);
        return -1;
    }
    int rc = zoo_get(zh, path, 0, data, &len, NULL);
    if (rc == ZNONODE)
        return 0;
    if (rc != ZOK) {
        snprintf(err, errlen, "cannot read %s: %s", path, zerror(rc));
        return -1;
    }
    char why[256];
    if (coord_replicas_parse(data, len < 0 ? 0 : (size_t)len, target, ntarget, why, sizeof(why)) < 0) {
        snprintf(err, errlen, "%s: %s", path, why);
        return -1;
    }
    return 1;
}

int coord_move_status(zhandle_t *zh, const coord_move_t *m, char *err, size_t errlen)
{
    char path[COORD_TOPIC_NAME_MAX + 64];
    if (move_path(m, path, sizeof(path), err, errlen) < 0)
        return -1;
    int rc = zoo_exists(zh, path, 0, NULL);
    if (rc == ZOK)
        return COORD_MOVE_IN_PROGRESS;
    if (rc != ZNONODE) {
        snprintf(err, errlen, "cannot read %s: %s", path, zerror(rc));
        return -1;
    }
    coord_topic_desc_t d = {.name = ""};
    const coord_partition_desc_t *p;
    rc = current_replicas(zh, m->topic, m->partition, &d, &p, err, errlen);
    int status = rc < 0 ? -1 : same_list(p->replicas, p->nreplicas, m->replicas, m->nreplicas) ? COORD_MOVE_DONE
                                                                                             : COORD_MOVE_NOT_DONE;
    coord_admin_topic_desc_free(&d);
    return status;
}

/* ---- making plans ---- */

int coord_plan_generate(zhandle_t *zh, char *const *topics, int ntopics, const int32_t *brokers, int nbrokers,
                        coord_plan_t *proposed, char *err, size_t errlen)
{
    memset(proposed, 0, sizeof(*proposed));
    for (int t = 0; t < ntopics; t++) {
        coord_topic_desc_t d;
        coord_admin_result_t res;
        if (coord_admin_describe_topic(zh, topics[t], &d, &res) < 0) {
            snprintf(err, errlen, "%s: %s", topics[t], res.message);
            coord_plan_free(proposed);
            return -1;
        }
        int n = d.npartitions, rf = n ? d.partitions[0].nreplicas : 0;
        int32_t *out = xcalloc((size_t)(n * rf) + 1, sizeof(*out));
        /* A fresh placement, as for a new topic: the start spreads topics. */
        int start = nbrokers ? (int)(((unsigned)t * 7u + (unsigned)n) % (unsigned)nbrokers) : 0;
        int rc = n ? coord_admin_assign(zh, brokers, nbrokers, 0, n, rf, start, start, out, &res) : 0;
        for (int i = 0; rc == 0 && i < n; i++) {
            coord_move_t *m = plan_add(proposed);
            snprintf(m->topic, sizeof(m->topic), "%s", topics[t]);
            m->partition = d.partitions[i].partition;
            m->nreplicas = rf;
            memcpy(m->replicas, out + (size_t)i * (size_t)rf, sizeof(*out) * (size_t)rf);
        }
        free(out);
        coord_admin_topic_desc_free(&d);
        if (rc < 0) {
            snprintf(err, errlen, "%s: %s", topics[t], res.message);
            coord_plan_free(proposed);
            return -1;
        }
    }
    return 0;
}

typedef struct {
    int32_t *ids;
    char (*racks)[COORD_RACK_MAX];
    int *load;                /* replicas on each so far */
    int n;
} brokers_t;

/* The registered broker to take over a replica of m from the drained one:
 * not in m already, a rack m lacks if there is one, then the least loaded. */
static int replacement(const brokers_t *bs, const coord_move_t *m, int32_t drained)
{
    int best = -1, best_new_rack = 0;
    for (int i = 0; i < bs->n; i++) {
        if (bs->ids[i] == drained || in_list(m->replicas, m->nreplicas, bs->ids[i]))
            continue;
        int new_rack = 1;
        for (int k = 0; k < m->nreplicas; k++)
            for (int j = 0; j < bs->n; j++)
                if (bs->ids[j] == m->replicas[k] && m->replicas[k] != drained && strcmp(bs->racks[j], bs->racks[i]) == 0)
                    new_rack = 0;
        if (best < 0 || new_rack > best_new_rack || (new_rack == best_new_rack && bs->load[i] < bs->load[best])) {
            best = i;
            best_new_rack = new_rack;
        }
    }
    return best;
}

static int load_brokers(zhandle_t *zh, brokers_t *bs, char *err, size_t errlen)
{
    bs->ids = xcalloc(COORD_ADMIN_MAX_BROKERS, sizeof(*bs->ids));
    if (coord_admin_live_brokers(zh, bs->ids, COORD_ADMIN_MAX_BROKERS, &bs->n, err, errlen) < 0)
        return -1;
    bs->racks = xcalloc((size_t)(bs->n ? bs->n : 1), sizeof(*bs->racks));
    bs->load = xcalloc((size_t)(bs->n ? bs->n : 1), sizeof(*bs->load));
    return coord_admin_broker_racks(zh, bs->ids, bs->n, bs->racks, err, errlen);
}

static void count_load(brokers_t *bs, const int32_t *replicas, int n, int delta)
{
    for (int k = 0; k < n; k++)
        for (int i = 0; i < bs->n; i++)
            if (bs->ids[i] == replicas[k])
                bs->load[i] += delta;
}

/* Adds the moves draining broker from one topic's partitions. */
static int drain_topic(zhandle_t *zh, const char *topic, int32_t broker, brokers_t *bs, coord_plan_t *proposed,
                       char *err, size_t errlen)
{
    coord_topic_desc_t d;
    coord_admin_result_t res;
    if (coord_admin_describe_topic(zh, topic, &d, &res) < 0) {
        snprintf(err, errlen, "%s: %s", topic, res.message);
        return -1;
    }
    for (int i = 0; i < d.npartitions; i++) {
        const coord_partition_desc_t *p = &d.partitions[i];
        if (!in_list(p->replicas, p->nreplicas, broker))
            continue;
        coord_move_t *m = plan_add(proposed);
        snprintf(m->topic, sizeof(m->topic), "%s", topic);
        m->partition = p->partition;
        m->nreplicas = p->nreplicas;
        memcpy(m->replicas, p->replicas, sizeof(*p->replicas) * (size_t)p->nreplicas);
        int with = 0;
        while (m->replicas[with] != broker)
            with++;
        int r = replacement(bs, m, broker);
        if (r < 0) {
            snprintf(err, errlen, "%s-%d: no other broker can take its replica on broker %d", topic,
                     (int)p->partition, (int)broker);
            coord_admin_topic_desc_free(&d);
            return -1;
        }
        m->replicas[with] = bs->ids[r];
        bs->load[r]++;
    }
    coord_admin_topic_desc_free(&d);
    return 0;
}

int coord_plan_drain(zhandle_t *zh, int32_t broker, coord_plan_t *proposed, char *err, size_t errlen)
{
    brokers_t bs = {0};
    char **topics = NULL;
    int ntopics = 0;
    memset(proposed, 0, sizeof(*proposed));
    int rc = load_brokers(zh, &bs, err, errlen) < 0 ? -1 : coord_admin_list_topics(zh, &topics, &ntopics, err, errlen);
    /* What each broker holds now, so the replicas spread evenly. */
    for (int t = 0; rc == 0 && t < ntopics; t++) {
        coord_topic_desc_t d;
        coord_admin_result_t res;
        if (coord_admin_describe_topic(zh, topics[t], &d, &res) < 0)
            continue;   /* deleted meanwhile */
        for (int i = 0; i < d.npartitions; i++)
            count_load(&bs, d.partitions[i].replicas, d.partitions[i].nreplicas, 1);
        coord_admin_topic_desc_free(&d);
    }
    for (int t = 0; rc == 0 && t < ntopics; t++)
        rc = drain_topic(zh, topics[t], broker, &bs, proposed, err, errlen);
    coord_admin_names_free(topics, ntopics);
    free(bs.ids);
    free(bs.racks);
    free(bs.load);
    if (rc < 0)
        coord_plan_free(proposed);
    return rc;
}
