/* coord_elect.c -- see coord_elect.h. */
#define _GNU_SOURCE
#include "coord_elect.h"

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"

int coord_tp_list_parse(const char *data, size_t len, coord_tp_t **out, int *n, char *err, size_t errlen)
{
    json_error_t je;
    char why[256];
    *out = NULL;
    *n = 0;
    json_t *root = json_loadb(data, len, JSON_REJECT_DUPLICATES, &je);
    json_t *parts = root ? json_object_get(root, "partitions") : NULL;
    size_t count = json_is_array(parts) ? json_array_size(parts) : 0;
    if (!root || !json_is_array(parts) || count > COORD_ELECT_MAX_PARTITIONS) {
        if (root)
            snprintf(err, errlen, "expected {\"version\":1,\"partitions\":[{\"topic\":\"t\",\"partition\":0},...]}");
        else
            snprintf(err, errlen, "not valid JSON: %s (line %d)", je.text, je.line);
        json_decref(root);
        return -1;
    }
    *out = xcalloc(count ? count : 1, sizeof(**out));
    for (size_t i = 0; i < count; i++) {
        json_t *e = json_array_get(parts, i), *t = json_object_get(e, "topic"), *p = json_object_get(e, "partition");
        if (!json_is_string(t) || !json_is_integer(p) || json_integer_value(p) < 0 ||
            json_integer_value(p) >= COORD_MAX_PARTITIONS ||
            coord_topic_name_valid(json_string_value(t), why, sizeof(why)) < 0) {
            snprintf(err, errlen, "partitions[%zu] must have a valid \"topic\" and a \"partition\" number", i);
            goto bad;
        }
        coord_tp_t *tp = &(*out)[*n];
        snprintf(tp->topic, sizeof(tp->topic), "%s", json_string_value(t));
        tp->partition = (int32_t)json_integer_value(p);
        (*n)++;
    }
    int twice = coord_partition_repeated(*out, *n, sizeof(**out), offsetof(coord_tp_t, partition));
    if (twice >= 0) {
        snprintf(err, errlen, "%s-%d is named twice", (*out)[twice].topic, (int)(*out)[twice].partition);
        goto bad;
    }
    json_decref(root);
    return 0;
bad:
    json_decref(root);
    free(*out);
    *out = NULL;
    *n = 0;
    return -1;
}

char *coord_tp_list_format(const coord_tp_t *tps, int n)
{
    json_t *parts = json_array();
    for (int i = 0; parts && i < n; i++)
        json_array_append_new(parts, json_pack("{s:s, s:i}", "topic", tps[i].topic, "partition", (int)tps[i].partition));
    json_t *root = json_pack("{s:i, s:o}", "version", 1, "partitions", parts);
    char *out = root ? json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(root);
    return out;
}

int coord_elect_request(zhandle_t *zh, const char *path, const coord_tp_t *tps, int n, char *err, size_t errlen)
{
    char *doc = coord_tp_list_format(tps, n);
    if (!doc) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    /* An unclean election's node lives only as long as the session of whoever
     * asked (the CLI, or the broker answering ElectLeaders): should the asker
     * die before deleting it, a partition that fails later must not elect
     * outside its ISR on a request nobody is waiting for any more. The
     * preferred election's node stays persistent, as Kafka's tools write it;
     * left behind, it only moves leadership to an in-sync preferred replica. */
    int flags = strcmp(path, COORD_UNCLEAN_ELECTION) == 0 ? ZOO_EPHEMERAL : 0;
    int rc = zoo_create(zh, "/admin", NULL, -1, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
    if (rc == ZOK || rc == ZNODEEXISTS)
        rc = zoo_create(zh, path, doc, (int)strlen(doc), &ZOO_OPEN_ACL_UNSAFE, flags, NULL, 0);
    free(doc);
    if (rc == ZNODEEXISTS)
        snprintf(err, errlen, "an election of this kind is already in progress (%s exists)", path);
    else if (rc != ZOK)
        snprintf(err, errlen, "cannot create %s: %s", path, zerror(rc));
    return rc == ZOK ? 0 : rc == ZNODEEXISTS ? 1 : -1;
}

int coord_elect_done(zhandle_t *zh, const char *path, char *err, size_t errlen)
{
    int rc = zoo_delete(zh, path, -1);
    if (rc != ZOK && rc != ZNONODE) {
        snprintf(err, errlen, "cannot delete %s: %s", path, zerror(rc));
        return -1;
    }
    return 0;
}
