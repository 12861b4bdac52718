/* coord_config_admin.c -- reading and changing configs in the coordinator
 * (coord_admin.h, "configs"), with the ZooKeeper client's synchronous calls:
 * shared by `kipper configs`, `kipper topics --alter --config` and the
 * broker's admin thread (AlterConfigs, IncrementalAlterConfigs).
 *
 * A change is one multi: the entity's node (set at the version read, or
 * created), the change notification Kafka's brokers watch, and for a topic
 * a fence on its document (so a topic deleted meanwhile is not given
 * configs); another writer in between fails the multi as a whole and the
 * change is made again from what is there now. */
#define _GNU_SOURCE
#include "coord_admin.h"
#include "coord_admin_impl.h"
#include "base/clock.h"
#include "base/logging.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PATH_LEN 512
#define ALTER_ATTEMPTS 10
#define CHANGE_EXPIRATION_MS (15 * 60 * 1000)   /* Kafka's changeExpirationMs */
#define PURGE_MAX 100                           /* notifications deleted after one write, at most */

int coord_admin_check_entity(coord_entity_t type, const char *name, coord_admin_result_t *res)
{
    char err[300];
    res->error = KERR_NONE;
    res->message[0] = 0;
    if (type == COORD_ENTITY_TOPIC) {
        if (coord_topic_name_valid(name, err, sizeof(err)) < 0)
            return coord_admin_fail(res, KERR_INVALID_TOPIC_EXCEPTION, "%s", err);
        return 0;
    }
    if (strcmp(name, COORD_CONFIG_DEFAULT) != 0 && coord_parse_broker_id_name(name) < 0)
        return coord_admin_fail(res, KERR_INVALID_REQUEST, "Broker id must be an integer, but it is: %.200s", name);
    return 0;
}

static int entity_node(coord_entity_t type, const char *name, char *path, size_t n)
{
    return type == COORD_ENTITY_TOPIC ? coord_path_topic_config(path, n, name)
                                      : coord_path_broker_config(path, n, name);
}

/* ---- reading ---- */

/* What an entity has now, and the versions a change is fenced by. */
typedef struct {
    coord_config_entry_t entries[COORD_MAX_TOPIC_CONFIGS];
    int n;
    int node_version;         /* of the config node; -1 when there is none */
    int legacy;               /* a topic's configs came from its document */
    int doc_version;          /* of the topic document */
    coord_topic_t doc;
    char buf[COORD_DOC_MAX + 1];
} current_t;

/* A topic's document (it must exist). */
static int read_topic(zhandle_t *zh, const char *topic, current_t *c, coord_admin_result_t *res)
{
    char path[PATH_LEN], why[256];
    int len;
    coord_path_topic(path, sizeof(path), topic);
    int found = coord_admin_read_doc(zh, path, c->buf, &len, &c->doc_version, res);
    if (found <= 0)
        return found < 0 ? -1
                         : coord_admin_fail(res, KERR_UNKNOWN_TOPIC_OR_PARTITION,
                                            "The topic '%.249s' does not exist.", topic);
    if (coord_topic_parse(c->buf, (size_t)len, &c->doc, why, sizeof(why)) < 0)
        return coord_admin_fail(res, KERR_UNKNOWN_SERVER_ERROR, "malformed %s in ZooKeeper: %s", path, why);
    return 0;
}

static int read_current(zhandle_t *zh, coord_entity_t type, const char *name, current_t *c, coord_admin_result_t *res)
{
    char path[PATH_LEN], why[256];
    int len;
    c->n = 0;
    c->legacy = 0;
    c->node_version = -1;
    if (type == COORD_ENTITY_TOPIC && read_topic(zh, name, c, res) < 0)
        return -1;
    entity_node(type, name, path, sizeof(path));
    int found = coord_admin_read_doc(zh, path, c->buf, &len, &c->node_version, res);
    if (found < 0)
        return -1;
    if (found && coord_entity_config_parse(c->buf, (size_t)len, c->entries, &c->n, why, sizeof(why)) < 0)
        return coord_admin_fail(res, KERR_UNKNOWN_SERVER_ERROR, "malformed %s in ZooKeeper: %s", path, why);
    if (!found && type == COORD_ENTITY_TOPIC) {
        /* Created by an older kipper: the configs are in the document. */
        c->legacy = 1;
        c->n = c->doc.nconfigs;
        memcpy(c->entries, c->doc.configs, sizeof(c->entries[0]) * (size_t)c->n);
    }
    return 0;
}

int coord_admin_read_configs(zhandle_t *zh, coord_entity_t type, const char *name, coord_config_entry_t *entries,
                             int *n, int *legacy, coord_admin_result_t *res)
{
    if (coord_admin_check_entity(type, name, res) < 0)
        return -1;
    current_t *c = malloc(sizeof(*c));   /* about 140 KiB: not for a helper thread's stack */
    if (!c)
        return coord_admin_fail(res, KERR_UNKNOWN_SERVER_ERROR, "out of memory");
    int rc = read_current(zh, type, name, c, res);
    if (rc == 0) {
        memcpy(entries, c->entries, sizeof(entries[0]) * (size_t)c->n);
        *n = c->n;
        if (legacy)
            *legacy = c->legacy;
    }
    free(c);
    return rc;
}

/* ---- writing ---- */

/* /config and the folder the entity and the notification go in, for a
 * cluster an older kipper set up. */
static int ensure_parents(zhandle_t *zh, coord_entity_t type, coord_admin_result_t *res)
{
    const char *paths[] = {"/config", type == COORD_ENTITY_TOPIC ? COORD_CONFIG_TOPICS : COORD_CONFIG_BROKERS,
                           COORD_CONFIG_CHANGES};
    for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
        int rc = zoo_create(zh, paths[i], "", 0, &ZOO_OPEN_ACL_UNSAFE, ZOO_PERSISTENT, NULL, 0);
        if (rc != ZOK && rc != ZNODEEXISTS)
            return coord_admin_zk_fail(res, "create", paths[i], rc);
    }
    return 0;
}

/* The texts one change writes. */
typedef struct {
    char node_path[PATH_LEN], doc_path[PATH_LEN], change_path[PATH_LEN], created[PATH_LEN];
    char node[COORD_DOC_MAX + 1], doc[COORD_DOC_MAX + 1], change[512];
    int node_len, doc_len, change_len;
} change_texts_t;

static int build_texts(coord_entity_t type, const char *name, const current_t *c, const coord_config_entry_t *e,
                       int n, change_texts_t *t, coord_admin_result_t *res)
{
    char entity[COORD_ENTITY_PATH_MAX];
    snprintf(entity, sizeof(entity), "%s/%s", type == COORD_ENTITY_TOPIC ? "topics" : "brokers", name);
    entity_node(type, name, t->node_path, sizeof(t->node_path));
    coord_path_topic(t->doc_path, sizeof(t->doc_path), name);
    snprintf(t->change_path, sizeof(t->change_path), "%s/%s", COORD_CONFIG_CHANGES, COORD_CONFIG_CHANGE_PREFIX);
    t->node_len = coord_entity_config_write(t->node, sizeof(t->node), e, n);
    t->change_len = coord_config_change_write(t->change, sizeof(t->change), entity);
    t->doc_len = 0;
    if (type == COORD_ENTITY_TOPIC && c->legacy) {
        coord_topic_t *bare = calloc(1, sizeof(*bare));
        if (bare)
            memcpy(bare->topic_id, c->doc.topic_id, 16);
        t->doc_len = bare ? coord_topic_write(t->doc, sizeof(t->doc), bare) : -1;
        free(bare);
    }
    if (t->node_len < 0 || t->change_len < 0 || t->doc_len < 0)
        return coord_admin_fail(res, KERR_INVALID_CONFIG,
                                "The configs of %.260s do not fit in one %d-byte document.", entity,
                                COORD_DOC_MAX);
    return 0;
}

/* One attempt at the multi: 0 written, 1 someone else wrote first (read
 * again), -1 with res. */
static int write_change(zhandle_t *zh, coord_entity_t type, const current_t *c, change_texts_t *t,
                        coord_admin_result_t *res)
{
    zoo_op_t ops[3];
    zoo_op_result_t results[3];
    int nops = 0;
    if (type == COORD_ENTITY_TOPIC && c->legacy)   /* read old, write new: the document's copy goes */
        zoo_set_op_init(&ops[nops++], t->doc_path, t->doc, t->doc_len, c->doc_version, NULL);
    else if (type == COORD_ENTITY_TOPIC)
        zoo_check_op_init(&ops[nops++], t->doc_path, c->doc_version);
    if (c->node_version >= 0)
        zoo_set_op_init(&ops[nops++], t->node_path, t->node, t->node_len, c->node_version, NULL);
    else
        zoo_create_op_init(&ops[nops++], t->node_path, t->node, t->node_len, &ZOO_OPEN_ACL_UNSAFE, ZOO_PERSISTENT,
                           NULL, 0);
    zoo_create_op_init(&ops[nops++], t->change_path, t->change, t->change_len, &ZOO_OPEN_ACL_UNSAFE, ZOO_SEQUENCE,
                       t->created, sizeof(t->created));
    int rc = zoo_multi(zh, nops, ops, results);
    if (rc == ZOK)
        return 0;
    if (rc == ZBADVERSION || rc == ZNODEEXISTS || rc == ZNONODE)
        return 1;
    return coord_admin_zk_fail(res, "write", t->node_path, rc);
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Notifications older than Kafka's changeExpirationMs go, oldest first (the
 * sequence numbers are fixed-width, so name order is their order). Kipper's
 * brokers watch the config nodes themselves; these are kept for tools that
 * follow Kafka's notifications. Best effort. */
static void purge_changes(zhandle_t *zh)
{
    struct String_vector kids = {0, NULL};
    if (zoo_get_children(zh, COORD_CONFIG_CHANGES, 0, &kids) != ZOK)
        return;
    qsort(kids.data, (size_t)kids.count, sizeof(char *), compare_names);
    int64_t now = (int64_t)clock_wall_ms();
    for (int i = 0, deleted = 0; i < kids.count && deleted < PURGE_MAX; i++) {
        char path[PATH_LEN];
        struct Stat st;
        if (strncmp(kids.data[i], COORD_CONFIG_CHANGE_PREFIX, strlen(COORD_CONFIG_CHANGE_PREFIX)) != 0)
            continue;
        snprintf(path, sizeof(path), "%s/%s", COORD_CONFIG_CHANGES, kids.data[i]);
        if (zoo_exists(zh, path, 0, &st) != ZOK)
            continue;
        if (now - st.ctime < CHANGE_EXPIRATION_MS)
            break;
        if (zoo_delete(zh, path, -1) == ZOK)
            deleted++;
    }
    deallocate_String_vector(&kids);
}

/* One round: read, change, write. 0 done, 1 to go again, -1 with res. */
static int alter_once(zhandle_t *zh, coord_entity_t type, const char *name, const coord_config_op_t *ops, int nops,
                      int replace, int validate_only, current_t *c, change_texts_t *t, coord_admin_result_t *res)
{
    char err[256];
    int16_t error;
    if (read_current(zh, type, name, c, res) < 0)
        return -1;
    int n = c->n;
    coord_config_entry_t *next = malloc(sizeof(c->entries));
    if (!next)
        return coord_admin_fail(res, KERR_UNKNOWN_SERVER_ERROR, "out of memory");
    memcpy(next, c->entries, sizeof(next[0]) * (size_t)n);
    int rc = 0;
    if (coord_config_apply(type, next, &n, ops, nops, replace, &error, err, sizeof(err)) < 0)
        rc = coord_admin_fail(res, error, "%s", err);
    else if (!validate_only)
        rc = build_texts(type, name, c, next, n, t, res) < 0 ? -1 : write_change(zh, type, c, t, res);
    free(next);
    return rc;
}

/* One line naming the configs a change set that kipper stores but does not
 * act on, so nobody takes them for applied. */
static void note_unacted(coord_entity_t type, const char *name, const coord_config_op_t *ops, int nops)
{
    char list[1024] = "";
    if (type != COORD_ENTITY_TOPIC)
        return;   /* kipper acts on every dynamic broker config it takes */
    for (int i = 0; i < nops; i++)
        if (ops[i].op != COORD_CFG_DELETE)
            coord_config_note_unacted(type, ops[i].key, list, sizeof(list));
    if (list[0])
        log_info("topic '%s': %s accepted and stored, not acted on by kipper", name, list);
}

int coord_admin_alter_configs(zhandle_t *zh, coord_entity_t type, const char *name, const coord_config_op_t *ops,
                              int nops, int replace, int validate_only, coord_admin_result_t *res)
{
    if (coord_admin_check_entity(type, name, res) < 0)
        return -1;
    if (!validate_only && ensure_parents(zh, type, res) < 0)
        return -1;
    current_t *c = malloc(sizeof(*c));
    change_texts_t *t = malloc(sizeof(*t));
    int rc = c && t ? 1 : coord_admin_fail(res, KERR_UNKNOWN_SERVER_ERROR, "out of memory");
    for (int attempt = 0; attempt < ALTER_ATTEMPTS && rc == 1; attempt++)
        rc = alter_once(zh, type, name, ops, nops, replace, validate_only, c, t, res);
    if (rc == 1)
        rc = coord_admin_fail(res, KERR_UNKNOWN_SERVER_ERROR,
                              "the configs of %.250s kept changing meanwhile; try again", name);
    free(c);
    free(t);
    if (rc == 0 && !validate_only) {
        purge_changes(zh);
        note_unacted(type, name, ops, nops);
    }
    return rc;
}
