/* coord_data.c -- the documents the brokers keep in the coordinator
 * (coord_data.h), read and written with jansson.
 *
 * Everything read here comes from a znode anyone with a ZooKeeper client can
 * write, so each parser checks sizes, types and ranges and says what is wrong;
 * each writer refuses what the matching parser would refuse, so we never
 * store a document we could not read back. */
#define _GNU_SOURCE
#include "coord_data.h"
#include "base/alloc.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

/* ---- paths and names ---- */

static int fitted(int written, size_t n)
{
    return written < 0 || (size_t)written >= n ? -1 : written;
}

int coord_path_topic(char *out, size_t n, const char *topic)
{
    return fitted(snprintf(out, n, "/brokers/topics/%s", topic), n);
}

int coord_path_partition(char *out, size_t n, const char *topic, int32_t partition)
{
    return fitted(snprintf(out, n, "/brokers/topics/%s/%d", topic, (int)partition), n);
}

int coord_path_partition_leaf(char *out, size_t n, const char *topic, int32_t partition, const char *leaf)
{
    return fitted(snprintf(out, n, "/brokers/topics/%s/%d/%s", topic, (int)partition, leaf), n);
}

int coord_path_reassignment(char *out, size_t n, const char *topic, int32_t partition)
{
    if (partition < 0)
        return fitted(snprintf(out, n, "%s/%s", COORD_REASSIGNMENTS, topic), n);
    return fitted(snprintf(out, n, "%s/%s/%d", COORD_REASSIGNMENTS, topic, (int)partition), n);
}

int coord_path_broker(char *out, size_t n, int32_t broker_id)
{
    return fitted(snprintf(out, n, "/brokers/ids/%d", (int)broker_id), n);
}

static int topic_char_legal(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
           c == '-';
}

/* The messages are Kafka's (org.apache.kafka.common.internals.Topic.validate). */
int coord_topic_name_valid(const char *name, char *err, size_t errlen)
{
    size_t len = strlen(name);
    if (len == 0) {
        snprintf(err, errlen, "Topic name is illegal, it can't be empty");
        return -1;
    }
    if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0) {
        snprintf(err, errlen, "Topic name cannot be \".\" or \"..\"");
        return -1;
    }
    if (len > COORD_TOPIC_NAME_MAX) {
        snprintf(err, errlen, "Topic name is illegal, it can't be longer than %d characters, topic name: %s",
                 COORD_TOPIC_NAME_MAX, name);
        return -1;
    }
    for (size_t i = 0; i < len; i++) {
        if (!topic_char_legal(name[i])) {
            snprintf(err, errlen,
                     "Topic name \"%s\" is illegal, it contains a character other than ASCII alphanumerics, "
                     "'.', '_' and '-'",
                     name);
            return -1;
        }
    }
    return 0;
}

/* Canonical decimal (no sign, no leading zero, no trailing bytes) up to max;
 * -1 otherwise. Canonical so that "01" and "1" can never name the same
 * partition or broker twice. */
static int64_t parse_canonical(const char *s, int64_t max)
{
    if (!s[0] || (s[0] == '0' && s[1]))
        return -1;
    int64_t v = 0;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9')
            return -1;
        v = v * 10 + (*p - '0');
        if (v > max)   /* checked every digit, so v * 10 never overflows */
            return -1;
    }
    return v;
}

int32_t coord_parse_partition_name(const char *name)
{
    return (int32_t)parse_canonical(name, COORD_MAX_PARTITIONS - 1);
}

int32_t coord_parse_broker_id_name(const char *name)
{
    return (int32_t)parse_canonical(name, INT32_MAX);
}

/* ---- reading documents ---- */

/* The whole of data as one JSON object: no trailing bytes (jansson's default),
 * no key twice (which value would win is not something to leave to chance). */
static json_t *load_object(const char *data, size_t len, char *err, size_t errlen)
{
    if (len > COORD_DOC_MAX) {
        snprintf(err, errlen, "document of %zu bytes is larger than the limit of %d", len, COORD_DOC_MAX);
        return NULL;
    }
    if (len == 0) {
        snprintf(err, errlen, "empty document, expected a JSON object");
        return NULL;
    }
    json_error_t je;
    json_t *root = json_loadb(data, len, JSON_REJECT_DUPLICATES, &je);
    if (!root) {
        snprintf(err, errlen, "not valid JSON: %s at byte %d", je.text, je.position);
        return NULL;
    }
    if (!json_is_object(root)) {
        snprintf(err, errlen, "not a JSON object");
        json_decref(root);
        return NULL;
    }
    return root;
}

static json_t *require(json_t *obj, const char *key, char *err, size_t errlen)
{
    json_t *v = json_object_get(obj, key);
    if (!v)
        snprintf(err, errlen, "missing \"%s\"", key);
    return v;
}

static int get_integer(json_t *obj, const char *key, int64_t min, int64_t max, int64_t *out, char *err,
                       size_t errlen)
{
    json_t *v = require(obj, key, err, errlen);
    if (!v)
        return -1;
    if (!json_is_integer(v)) {
        snprintf(err, errlen, "\"%s\" is not an integer", key);
        return -1;
    }
    json_int_t x = json_integer_value(v);
    if (x < min || x > max) {
        snprintf(err, errlen, "\"%s\" is %lld, outside %lld..%lld", key, (long long)x, (long long)min,
                 (long long)max);
        return -1;
    }
    *out = x;
    return 0;
}

static int get_int32(json_t *obj, const char *key, int32_t min, int32_t *out, char *err, size_t errlen)
{
    int64_t v;
    if (get_integer(obj, key, min, INT32_MAX, &v, err, errlen) < 0)
        return -1;
    *out = (int32_t)v;
    return 0;
}

/* A string value that fits in cap bytes with its NUL (jansson already refuses
 * NUL bytes inside strings). */
static int get_string(json_t *obj, const char *key, char *out, size_t cap, char *err, size_t errlen)
{
    json_t *v = require(obj, key, err, errlen);
    if (!v)
        return -1;
    if (!json_is_string(v)) {
        snprintf(err, errlen, "\"%s\" is not a string", key);
        return -1;
    }
    size_t len = json_string_length(v);
    if (len == 0 || len >= cap) {
        snprintf(err, errlen, "\"%s\" is %s", key, len == 0 ? "empty" : "too long");
        return -1;
    }
    memcpy(out, json_string_value(v), len + 1);
    return 0;
}

static int has_duplicate(const int32_t *ids, int n, int32_t *dup)
{
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (ids[i] == ids[j]) {
                *dup = ids[i];
                return 1;
            }
    return 0;
}

/* An array of distinct broker ids (0..INT32_MAX), at most COORD_MAX_REPLICAS. */
static int get_id_array(json_t *obj, const char *key, int allow_empty, int32_t *ids, int *n, char *err,
                        size_t errlen)
{
    json_t *arr = require(obj, key, err, errlen);
    if (!arr)
        return -1;
    if (!json_is_array(arr)) {
        snprintf(err, errlen, "\"%s\" is not an array", key);
        return -1;
    }
    size_t count = json_array_size(arr);
    if (count > COORD_MAX_REPLICAS || (count == 0 && !allow_empty)) {
        snprintf(err, errlen, "\"%s\" has %zu entries, expected %d..%d", key, count, allow_empty ? 0 : 1,
                 COORD_MAX_REPLICAS);
        return -1;
    }
    for (size_t i = 0; i < count; i++) {
        json_t *v = json_array_get(arr, i);
        json_int_t x = json_is_integer(v) ? json_integer_value(v) : -1;
        if (x < 0 || x > INT32_MAX) {
            snprintf(err, errlen, "\"%s\"[%zu] is not a broker id (an integer 0..%d)", key, i, INT32_MAX);
            return -1;
        }
        ids[i] = (int32_t)x;
    }
    int32_t dup;
    if (has_duplicate(ids, (int)count, &dup)) {
        snprintf(err, errlen, "\"%s\" lists broker %d twice", key, (int)dup);
        return -1;
    }
    *n = (int)count;
    return 0;
}

/* ---- writing documents ---- */

/* Serializes root compactly into out and releases it. Keys come out in the
 * order they were added (jansson keeps insertion order), so documents read
 * the same in zkCli every time. */
static int dump(json_t *root, char *out, size_t n)
{
    if (!root)
        return -1;
    size_t len = json_dumpb(root, out, n, JSON_COMPACT);
    json_decref(root);
    if (len == 0 || len >= n || len > COORD_DOC_MAX)
        return -1;
    out[len] = 0;
    return (int)len;
}

/* Adds key: value to obj, taking value; on failure releases obj. NULL values
 * (a failed json_string on bad UTF-8, say) fail here, so callers can chain. */
static json_t *with(json_t *obj, const char *key, json_t *value)
{
    if (!obj || !value || json_object_set_new(obj, key, value) < 0) {
        json_decref(obj);
        json_decref(value);
        return NULL;
    }
    return obj;
}

static json_t *id_array(const int32_t *ids, int n, int allow_empty)
{
    int32_t dup;
    if (n < 0 || n > COORD_MAX_REPLICAS || (n == 0 && !allow_empty) || has_duplicate(ids, n, &dup))
        return NULL;
    json_t *arr = json_array();
    for (int i = 0; arr && i < n; i++) {
        if (ids[i] < 0 || json_array_append_new(arr, json_integer(ids[i])) < 0) {
            json_decref(arr);
            arr = NULL;
        }
    }
    return arr;
}

static json_t *decimal_string(int64_t v)
{
    char text[24];
    snprintf(text, sizeof(text), "%lld", (long long)v);
    return json_string(text);
}

/* ---- /brokers/ids/[id] ---- */

int coord_broker_write(char *out, size_t n, const char *host, int32_t port, const char *rack, int64_t timestamp_ms)
{
    size_t hostlen = strlen(host);
    if (hostlen == 0 || hostlen >= COORD_HOST_MAX || port < 1 || port > 65535)
        return -1;
    char endpoint[COORD_HOST_MAX + 32];
    /* An IPv6 address needs brackets in a listener URL, as in Kafka. */
    const char *fmt = strchr(host, ':') ? "PLAINTEXT://[%s]:%d" : "PLAINTEXT://%s:%d";
    snprintf(endpoint, sizeof(endpoint), fmt, host, (int)port);
    json_t *endpoints = json_array();
    if (endpoints && json_array_append_new(endpoints, json_string(endpoint)) < 0) {
        json_decref(endpoints);
        endpoints = NULL;
    }
    json_t *doc = with(json_object(), "version", json_integer(4));
    doc = with(doc, "host", json_string(host));
    doc = with(doc, "port", json_integer(port));
    doc = with(doc, "endpoints", endpoints);
    if (rack && rack[0])
        doc = with(doc, "rack", json_string(rack));
    doc = with(doc, "timestamp", decimal_string(timestamp_ms));
    return dump(doc, out, n);
}

int coord_broker_parse(const char *data, size_t len, coord_broker_t *out, char *err, size_t errlen)
{
    json_t *root = load_object(data, len, err, errlen);
    if (!root)
        return -1;
    int64_t port;
    int rc = get_string(root, "host", out->host, sizeof(out->host), err, errlen) < 0 ||
                     get_integer(root, "port", 1, 65535, &port, err, errlen) < 0
                 ? -1
                 : 0;
    if (rc == 0)
        out->port = (int32_t)port;
    out->rack[0] = 0;
    /* Optional: Kafka writes it only for a broker with broker.rack (null too). */
    json_t *rack = json_object_get(root, "rack");
    if (rc == 0 && rack && !json_is_null(rack))
        rc = get_string(root, "rack", out->rack, sizeof(out->rack), err, errlen);
    json_decref(root);
    return rc;
}

/* ---- topic ids ---- */

static const char BASE64URL[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

void coord_topic_id_format(const uint8_t id[16], char out[23])
{
    int o = 0;
    for (int i = 0; i < 16; i += 3) {
        /* The last group has one byte: 8 bits make two characters. */
        uint32_t v = (uint32_t)id[i] << 16;
        if (i + 1 < 16)
            v |= (uint32_t)id[i + 1] << 8 | id[i + 2];
        for (int k = 0; k < 4 && o < 22; k++)
            out[o++] = BASE64URL[(v >> (18 - 6 * k)) & 63];
    }
    out[22] = 0;
}

static int base64url_value(char c)
{
    const char *p = c ? strchr(BASE64URL, c) : NULL;
    return p ? (int)(p - BASE64URL) : -1;
}

int coord_topic_id_parse(const char *s, uint8_t id[16])
{
    if (strnlen(s, 23) != 22)
        return -1;
    uint8_t bytes[18] = {0};
    for (int i = 0, o = 0; i < 22; i += 4) {
        uint32_t v = 0;
        for (int k = 0; k < 4; k++) {
            int d = i + k < 22 ? base64url_value(s[i + k]) : 0;
            if (d < 0)
                return -1;
            v = v << 6 | (uint32_t)d;
        }
        bytes[o++] = (uint8_t)(v >> 16);
        bytes[o++] = (uint8_t)(v >> 8);
        bytes[o++] = (uint8_t)v;
    }
    /* 22 characters carry 132 bits; the 4 beyond the 16 bytes must be zero, or
     * two spellings would name the same id. */
    if (bytes[16] != 0)
        return -1;
    memcpy(id, bytes, 16);
    return 0;
}

static int all_zero(const uint8_t id[16])
{
    for (int i = 0; i < 16; i++)
        if (id[i])
            return 0;
    return 1;
}

static void random_bytes(uint8_t *buf, size_t len)
{
    size_t got = 0;
    while (got < len) {
        ssize_t r = getrandom(buf + got, len - got, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            /* Like running out of memory: nothing sensible to go on with. */
            fprintf(stderr, "kipper: getrandom failed: %s\n", strerror(errno));
            abort();
        }
        got += (size_t)r;
    }
}

/* As Kafka's Uuid.randomUuid(): a version-4 UUID (whose fixed bits already
 * rule out the zero id, "no id", and 1, the metadata topic's), never one
 * whose text starts with '-', which a command line would take for an option. */
void coord_topic_id_generate(uint8_t id[16])
{
    for (;;) {
        random_bytes(id, 16);
        id[6] = (uint8_t)((id[6] & 0x0f) | 0x40);
        id[8] = (uint8_t)((id[8] & 0x3f) | 0x80);
        char text[23];
        coord_topic_id_format(id, text);
        if (text[0] != '-')
            return;
    }
}

/* ---- /brokers/topics/[topic] ---- */

/* The "config" object of a topic or config document into entries. */
static int parse_config_object(json_t *config, coord_config_entry_t *entries, int *n, char *err, size_t errlen)
{
    if (!json_is_object(config) || json_object_size(config) > COORD_MAX_TOPIC_CONFIGS) {
        snprintf(err, errlen, "\"config\" is not an object of at most %d entries", COORD_MAX_TOPIC_CONFIGS);
        return -1;
    }
    *n = 0;
    const char *key;
    json_t *value;
    json_object_foreach(config, key, value) {
        coord_config_entry_t *e = &entries[*n];
        size_t klen = strlen(key);
        if (klen == 0 || klen >= sizeof(e->key)) {
            snprintf(err, errlen, "config name '%.64s' is empty or too long", key);
            return -1;
        }
        if (!json_is_string(value) || json_string_length(value) >= sizeof(e->value)) {
            snprintf(err, errlen, "config \"%s\" is not a string of less than %zu bytes", key, sizeof(e->value));
            return -1;
        }
        memcpy(e->key, key, klen + 1);
        memcpy(e->value, json_string_value(value), json_string_length(value) + 1);
        (*n)++;
    }
    return 0;
}

/* Optional in a topic document since the configs moved to /config/topics. */
static int parse_configs(json_t *root, coord_topic_t *out, char *err, size_t errlen)
{
    json_t *config = json_object_get(root, "config");
    out->nconfigs = 0;
    return config ? parse_config_object(config, out->configs, &out->nconfigs, err, errlen) : 0;
}

static int parse_topic(json_t *root, coord_topic_t *out, char *err, size_t errlen)
{
    int64_t version;
    char idtext[32];
    if (get_integer(root, "version", 1, INT32_MAX, &version, err, errlen) < 0 ||
        get_string(root, "topic_id", idtext, sizeof(idtext), err, errlen) < 0)
        return -1;
    if (coord_topic_id_parse(idtext, out->topic_id) < 0 || all_zero(out->topic_id)) {
        snprintf(err, errlen, "\"topic_id\" '%s' is not a topic id", idtext);
        return -1;
    }
    return parse_configs(root, out, err, errlen);
}

int coord_topic_parse(const char *data, size_t len, coord_topic_t *out, char *err, size_t errlen)
{
    json_t *root = load_object(data, len, err, errlen);
    if (!root)
        return -1;
    int rc = parse_topic(root, out, err, errlen);
    json_decref(root);
    return rc;
}

static json_t *config_object(const coord_config_entry_t *entries, int n)
{
    if (n < 0 || n > COORD_MAX_TOPIC_CONFIGS)
        return NULL;
    json_t *config = json_object();
    for (int i = 0; config && i < n; i++) {
        const coord_config_entry_t *e = &entries[i];
        size_t klen = strnlen(e->key, sizeof(e->key));
        int bad = klen == 0 || klen == sizeof(e->key) || strnlen(e->value, sizeof(e->value)) == sizeof(e->value) ||
                  json_object_get(config, e->key) != NULL;   /* a name twice: which one would count? */
        config = with(config, e->key, bad ? NULL : json_string(e->value));
    }
    return config;
}

int coord_topic_write(char *out, size_t n, const coord_topic_t *t)
{
    if (all_zero(t->topic_id))
        return -1;
    char idtext[23];
    coord_topic_id_format(t->topic_id, idtext);
    json_t *doc = with(json_object(), "version", json_integer(1));
    doc = with(doc, "topic_id", json_string(idtext));
    doc = with(doc, "config", config_object(t->configs, t->nconfigs));
    return dump(doc, out, n);
}

/* ---- /config ---- */

int coord_path_topic_config(char *out, size_t n, const char *topic)
{
    return fitted(snprintf(out, n, "%s/%s", COORD_CONFIG_TOPICS, topic), n);
}

int coord_path_broker_config(char *out, size_t n, const char *name)
{
    return fitted(snprintf(out, n, "%s/%s", COORD_CONFIG_BROKERS, name), n);
}

int coord_entity_config_write(char *out, size_t n, const coord_config_entry_t *entries, int nentries)
{
    json_t *doc = with(json_object(), "version", json_integer(1));
    doc = with(doc, "config", config_object(entries, nentries));
    return dump(doc, out, n);
}

int coord_entity_config_parse(const char *data, size_t len, coord_config_entry_t *entries, int *nentries, char *err,
                              size_t errlen)
{
    json_t *root = load_object(data, len, err, errlen);
    if (!root)
        return -1;
    int64_t version;
    json_t *config = NULL;
    int rc = get_integer(root, "version", 1, INT32_MAX, &version, err, errlen);
    if (rc == 0 && !(config = require(root, "config", err, errlen)))
        rc = -1;
    if (rc == 0)
        rc = parse_config_object(config, entries, nentries, err, errlen);
    json_decref(root);
    return rc;
}

int coord_config_change_write(char *out, size_t n, const char *entity_path)
{
    if (!entity_path[0] || strlen(entity_path) >= COORD_ENTITY_PATH_MAX)
        return -1;
    json_t *doc = with(json_object(), "version", json_integer(2));
    doc = with(doc, "entity_path", json_string(entity_path));
    return dump(doc, out, n);
}

int coord_config_change_parse(const char *data, size_t len, char *entity_path, size_t cap, char *err, size_t errlen)
{
    json_t *root = load_object(data, len, err, errlen);
    if (!root)
        return -1;
    int64_t version;
    int rc = get_integer(root, "version", 2, 2, &version, err, errlen);
    if (rc == 0)
        rc = get_string(root, "entity_path", entity_path, cap, err, errlen);
    json_decref(root);
    return rc;
}

/* ---- replicas, partitions_reassigned, leader, ISR ---- */

int coord_replicas_write(char *out, size_t n, const int32_t *replicas, int nreplicas)
{
    return dump(with(json_object(), "replicas", id_array(replicas, nreplicas, 0)), out, n);
}

int coord_replicas_parse(const char *data, size_t len, int32_t *replicas, int *nreplicas, char *err,
                         size_t errlen)
{
    json_t *root = load_object(data, len, err, errlen);
    if (!root)
        return -1;
    int rc = get_id_array(root, "replicas", 0, replicas, nreplicas, err, errlen);
    json_decref(root);
    return rc;
}

int coord_leader_write(char *out, size_t n, int32_t leader, int32_t leader_epoch)
{
    if (leader < 0 || leader_epoch < 0)
        return -1;
    json_t *doc = with(json_object(), "leader", json_integer(leader));
    doc = with(doc, "leader_epoch", json_integer(leader_epoch));
    return dump(doc, out, n);
}

int coord_leader_parse(const char *data, size_t len, int32_t *leader, int32_t *leader_epoch, char *err,
                       size_t errlen)
{
    json_t *root = load_object(data, len, err, errlen);
    if (!root)
        return -1;
    int rc = get_int32(root, "leader", 0, leader, err, errlen) < 0 ||
                     get_int32(root, "leader_epoch", 0, leader_epoch, err, errlen) < 0
                 ? -1
                 : 0;
    json_decref(root);
    return rc;
}

int coord_isr_write(char *out, size_t n, const int32_t *isr, int nisr, int32_t leader_epoch)
{
    if (leader_epoch < 0)
        return -1;
    json_t *doc = with(json_object(), "isr", id_array(isr, nisr, 1));
    doc = with(doc, "leader_epoch", json_integer(leader_epoch));
    return dump(doc, out, n);
}

int coord_isr_parse(const char *data, size_t len, int32_t *isr, int *nisr, int32_t *leader_epoch, char *err,
                    size_t errlen)
{
    json_t *root = load_object(data, len, err, errlen);
    if (!root)
        return -1;
    int rc = get_id_array(root, "isr", 1, isr, nisr, err, errlen) < 0 ||
                     get_int32(root, "leader_epoch", 0, leader_epoch, err, errlen) < 0
                 ? -1
                 : 0;
    json_decref(root);
    return rc;
}

/* ---- /cluster/id ---- */

int coord_cluster_id_write(char *out, size_t n, const char *cluster_id)
{
    if (!cluster_id[0])
        return -1;
    /* "version" is a string here, as Kafka writes it. */
    json_t *doc = with(json_object(), "version", json_string("1"));
    doc = with(doc, "id", json_string(cluster_id));
    return dump(doc, out, n);
}

int coord_cluster_id_parse(const char *data, size_t len, char *cluster_id, size_t idlen, char *err,
                           size_t errlen)
{
    json_t *root = load_object(data, len, err, errlen);
    if (!root)
        return -1;
    json_t *version = require(root, "version", err, errlen);
    int rc = -1;
    if (version && !json_is_string(version))
        snprintf(err, errlen, "\"version\" is not a string");
    else if (version)
        rc = get_string(root, "id", cluster_id, idlen, err, errlen);
    json_decref(root);
    return rc;
}

/* ---- /latest_producer_id_block ---- */

/* A non-negative int64 written as a decimal string (Kafka keeps these as
 * strings so JSON readers with doubles do not round them). */
static int get_decimal_string(json_t *obj, const char *key, int64_t *out, char *err, size_t errlen)
{
    char text[24];
    if (get_string(obj, key, text, sizeof(text), err, errlen) < 0)
        return -1;
    int64_t v = 0;
    for (const char *p = text; *p; p++) {
        int d = *p - '0';
        if (d < 0 || d > 9 || v > (INT64_MAX - d) / 10) {
            snprintf(err, errlen, "\"%s\" '%s' is not a decimal 0..%lld", key, text, (long long)INT64_MAX);
            return -1;
        }
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

int coord_producer_block_write(char *out, size_t n, int32_t broker, int64_t block_start, int64_t block_end)
{
    if (broker < 0 || block_start < 0 || block_end < block_start)
        return -1;
    json_t *doc = with(json_object(), "version", json_integer(1));
    doc = with(doc, "broker", json_integer(broker));
    doc = with(doc, "block_start", decimal_string(block_start));
    doc = with(doc, "block_end", decimal_string(block_end));
    return dump(doc, out, n);
}

static int parse_producer_block(json_t *root, int64_t *block_start, int64_t *block_end, char *err, size_t errlen)
{
    int64_t version, start, end;
    int32_t broker;
    if (get_integer(root, "version", 1, INT32_MAX, &version, err, errlen) < 0 ||
        get_int32(root, "broker", 0, &broker, err, errlen) < 0 ||
        get_decimal_string(root, "block_start", &start, err, errlen) < 0 ||
        get_decimal_string(root, "block_end", &end, err, errlen) < 0)
        return -1;
    if (end < start) {
        snprintf(err, errlen, "\"block_end\" %lld is before \"block_start\" %lld", (long long)end,
                 (long long)start);
        return -1;
    }
    *block_start = start;
    *block_end = end;
    return 0;
}

int coord_producer_block_parse(const char *data, size_t len, int64_t *block_start, int64_t *block_end,
                               char *err, size_t errlen)
{
    json_t *root = load_object(data, len, err, errlen);
    if (!root)
        return -1;
    int rc = parse_producer_block(root, block_start, block_end, err, errlen);
    json_decref(root);
    return rc;
}

/* ---- consumer group offsets ---- */

static int group_char_plain(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
           c == '-';
}

int coord_group_name_encode(const char *group, size_t len, char *out, size_t n)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t k = 0;
    if (len == 0)
        return fitted(snprintf(out, n, "%%"), n);
    /* "." and ".." are not znode names: their dots are escaped too. */
    int dots_only = (len == 1 && group[0] == '.') || (len == 2 && group[0] == '.' && group[1] == '.');
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)group[i];
        if (k + 4 > n)
            return -1;
        if (group_char_plain(c) && !dots_only) {
            out[k++] = (char)c;
        } else {
            out[k++] = '%';
            out[k++] = hex[c >> 4];
            out[k++] = hex[c & 15];
        }
    }
    out[k] = 0;
    return (int)k;
}

static int hex_value(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : (c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1);
}

int coord_group_name_decode(const char *name, char *out, size_t n)
{
    if (strcmp(name, "%") == 0) {
        if (n < 1)
            return -1;
        out[0] = 0;
        return 0;
    }
    size_t k = 0;
    for (const char *p = name; *p; k++) {
        if (k + 1 >= n)
            return -1;
        if (*p != '%') {
            out[k] = *p++;
            continue;
        }
        int hi = hex_value(p[1]), lo = hi < 0 ? -1 : hex_value(p[2]);
        if (lo < 0)
            return -1;
        out[k] = (char)(hi << 4 | lo);
        p += 3;
    }
    out[k] = 0;
    /* Only names our encoder makes, so two names never mean one group. */
    char again[COORD_GROUP_NAME_MAX + 1];
    if (k == 0 || coord_group_name_encode(out, k, again, sizeof(again)) < 0 || strcmp(again, name) != 0)
        return -1;
    return (int)k;
}

int coord_path_group(char *out, size_t n, const char *group, size_t len)
{
    char name[COORD_GROUP_NAME_MAX + 1];
    if (coord_group_name_encode(group, len, name, sizeof(name)) < 0)
        return -1;
    return fitted(snprintf(out, n, "/consumers/%s", name), n);
}

int coord_path_group_offsets(char *out, size_t n, const char *group, size_t len)
{
    char name[COORD_GROUP_NAME_MAX + 1];
    if (coord_group_name_encode(group, len, name, sizeof(name)) < 0)
        return -1;
    return fitted(snprintf(out, n, "/consumers/%s/offsets", name), n);
}

int coord_path_group_topic(char *out, size_t n, const char *group, size_t len, const char *topic)
{
    char name[COORD_GROUP_NAME_MAX + 1];
    if (coord_group_name_encode(group, len, name, sizeof(name)) < 0)
        return -1;
    return fitted(snprintf(out, n, "/consumers/%s/offsets/%s", name, topic), n);
}

int coord_path_group_offset(char *out, size_t n, const char *group, size_t len, const char *topic,
                            int32_t partition)
{
    char name[COORD_GROUP_NAME_MAX + 1];
    if (coord_group_name_encode(group, len, name, sizeof(name)) < 0)
        return -1;
    return fitted(snprintf(out, n, "/consumers/%s/offsets/%s/%d", name, topic, (int)partition), n);
}

int coord_offset_write(char *out, size_t n, int64_t offset, int32_t leader_epoch, const char *metadata)
{
    json_t *doc = with(json_object(), "offset", json_integer(offset));
    doc = with(doc, "leader_epoch", json_integer(leader_epoch));
    doc = with(doc, "metadata", json_string(metadata ? metadata : ""));
    return dump(doc, out, n);
}

/* The bare number Kafka's ZooKeeper consumers wrote: optional '-', digits. */
static int parse_bare_offset(const char *data, size_t len, int64_t *offset)
{
    char text[24];
    if (len == 0 || len >= sizeof(text))
        return -1;
    memcpy(text, data, len);
    text[len] = 0;
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || *end || !(text[0] == '-' || (text[0] >= '0' && text[0] <= '9')))
        return -1;
    *offset = v;
    return 0;
}

static int parse_offset_doc(json_t *root, int64_t *offset, int32_t *leader_epoch, char *metadata, size_t cap,
                            char *err, size_t errlen)
{
    if (get_integer(root, "offset", INT64_MIN, INT64_MAX, offset, err, errlen) < 0)
        return -1;
    *leader_epoch = -1;
    metadata[0] = 0;
    int64_t epoch;
    if (json_object_get(root, "leader_epoch")) {
        if (get_integer(root, "leader_epoch", INT32_MIN, INT32_MAX, &epoch, err, errlen) < 0)
            return -1;
        *leader_epoch = (int32_t)epoch;
    }
    json_t *md = json_object_get(root, "metadata");
    if (md && (!json_is_string(md) || json_string_length(md) >= cap)) {
        snprintf(err, errlen, "\"metadata\" is not a string of less than %zu bytes", cap);
        return -1;
    }
    if (md)
        memcpy(metadata, json_string_value(md), json_string_length(md) + 1);
    return 0;
}

int coord_offset_parse(const char *data, size_t len, int64_t *offset, int32_t *leader_epoch, char *metadata,
                       size_t cap, char *err, size_t errlen)
{
    if (cap == 0)
        return -1;
    if (parse_bare_offset(data, len, offset) == 0) {
        *leader_epoch = -1;
        metadata[0] = 0;
        return 0;
    }
    json_t *root = load_object(data, len, err, errlen);
    if (!root)
        return -1;
    int rc = parse_offset_doc(root, offset, leader_epoch, metadata, cap, err, errlen);
    json_decref(root);
    return rc;
}

/* ---- replica assignment ---- */

static int check_assign_args(const int32_t *brokers, int nbrokers, int32_t first_partition, int count, int rf,
                             int start, int shift, char *err, size_t errlen)
{
    /* Kafka's messages (AdminUtils.assignReplicasToBrokers). */
    if (count < 1) {
        snprintf(err, errlen, "Number of partitions must be larger than 0.");
        return -1;
    }
    if (rf < 1) {
        snprintf(err, errlen, "Replication factor must be larger than 0.");
        return -1;
    }
    if (rf > nbrokers) {
        snprintf(err, errlen, "Replication factor: %d larger than available brokers: %d.", rf, nbrokers);
        return -1;
    }
    if (first_partition < 0 || count > COORD_MAX_PARTITIONS - first_partition || rf > COORD_MAX_REPLICAS ||
        start < 0 || shift < 0) {
        snprintf(err, errlen,
                 "cannot assign %d partitions from %d with replication factor %d (limits: %d partitions, "
                 "%d replicas)",
                 count, (int)first_partition, rf, COORD_MAX_PARTITIONS, COORD_MAX_REPLICAS);
        return -1;
    }
    for (int i = 0; i < nbrokers; i++) {
        if (brokers[i] < 0 || (i > 0 && brokers[i] <= brokers[i - 1])) {
            snprintf(err, errlen, "broker ids must be distinct, non-negative and sorted");
            return -1;
        }
    }
    return 0;
}

/* Kafka's replicaIndex(): the (j+2)-th replica sits 1 + (shift + j) % (n - 1)
 * places after the first, so it is never the first one's broker. */
static int follower_index(int first, int64_t shift, int j, int n)
{
    return (int)((first + 1 + (shift + j) % (n - 1)) % n);
}

int coord_assign_replicas(const int32_t *brokers, int nbrokers, int32_t first_partition, int count, int rf,
                          int start, int shift, int32_t *out, char *err, size_t errlen)
{
    if (check_assign_args(brokers, nbrokers, first_partition, count, rf, start, shift, err, errlen) < 0)
        return -1;
    /* Exactly AdminUtils.assignReplicasToBrokersRackUnaware: the shift grows at
     * every multiple of n among the partitions being assigned (counted from
     * the caller's shift, not from partition 0, as Kafka does). */
    int64_t replica_shift = shift;
    for (int i = 0; i < count; i++) {
        int32_t p = first_partition + i;
        if (p > 0 && p % nbrokers == 0)
            replica_shift++;
        int first = (int)(((int64_t)p + start) % nbrokers);
        int32_t *replicas = out + (size_t)p * (size_t)rf;
        replicas[0] = brokers[first];
        for (int j = 0; j < rf - 1; j++)
            replicas[1 + j] = brokers[follower_index(first, replica_shift, j, nbrokers)];
    }
    return 0;
}

/* The brokers arranged alternating racks: racks in name order, each rack's
 * brokers in id order, one from each rack in turn (Kafka's
 * getRackAlternatedBrokerList). arranged[i] are indexes into brokers. */
static void alternate_racks(const char *const *racks, int n, int *arranged)
{
    int *taken = xcalloc((size_t)n, sizeof(*taken));
    const char *last = NULL;
    int placed = 0;
    while (placed < n) {
        /* The next rack name after last, in order; wrap around. */
        const char *rack = NULL;
        for (int i = 0; i < n; i++)
            if (!taken[i] && (!last || strcmp(racks[i], last) > 0) && (!rack || strcmp(racks[i], rack) < 0))
                rack = racks[i];
        if (!rack) {
            last = NULL;
            continue;
        }
        for (int i = 0; i < n; i++)   /* brokers are sorted: the first untaken is the lowest id */
            if (!taken[i] && strcmp(racks[i], rack) == 0) {
                taken[i] = 1;
                arranged[placed++] = i;
                break;
            }
        last = rack;
    }
    free(taken);
}

static int count_racks(const char *const *racks, int n)
{
    int distinct = 0;
    for (int i = 0; i < n; i++) {
        int seen = 0;
        for (int k = 0; k < i && !seen; k++)
            seen = strcmp(racks[k], racks[i]) == 0;
        distinct += !seen;
    }
    return distinct;
}

static int rack_taken(const char *const *racks, const int *chosen, int nchosen, const char *rack)
{
    for (int i = 0; i < nchosen; i++)
        if (strcmp(racks[chosen[i]], rack) == 0)
            return 1;
    return 0;
}

static int broker_taken(const int *chosen, int nchosen, int index)
{
    for (int i = 0; i < nchosen; i++)
        if (chosen[i] == index)
            return 1;
    return 0;
}

/* One partition's replicas over the rack-alternated list. */
static void assign_partition_racks(const char *const *racks, const int *arranged, int n, int nracks, int first,
                                   int64_t shift, int rf, int *chosen)
{
    int nchosen = 0, nracks_used = 1;
    chosen[nchosen++] = arranged[first];
    for (int k = 0; nchosen < rf; k++) {
        int idx = arranged[follower_index(first, shift * nracks, k, n)];
        const char *rack = racks[idx];
        int rack_ok = !rack_taken(racks, chosen, nchosen, rack) || nracks_used == nracks;
        int broker_ok = !broker_taken(chosen, nchosen, idx) || nchosen == n;
        if (rack_ok && broker_ok) {
            nracks_used += !rack_taken(racks, chosen, nchosen, rack);
            chosen[nchosen++] = idx;
        }
    }
}

int coord_assign_replicas_racks(const int32_t *brokers, const char *const *racks, int nbrokers, int32_t first_partition,
                                int count, int rf, int start, int shift, int32_t *out, char *err, size_t errlen)
{
    if (check_assign_args(brokers, nbrokers, first_partition, count, rf, start, shift, err, errlen) < 0)
        return -1;
    int *arranged = xcalloc((size_t)nbrokers, sizeof(*arranged));
    int *chosen = xcalloc((size_t)rf, sizeof(*chosen));
    alternate_racks(racks, nbrokers, arranged);
    int nracks = count_racks(racks, nbrokers);
    int64_t replica_shift = shift;
    for (int i = 0; i < count; i++) {
        int32_t p = first_partition + i;
        if (p > 0 && p % nbrokers == 0)
            replica_shift++;
        int first = (int)(((int64_t)p + start) % nbrokers);
        assign_partition_racks(racks, arranged, nbrokers, nracks, first, replica_shift, rf, chosen);
        for (int r = 0; r < rf; r++)
            out[(size_t)p * (size_t)rf + (size_t)r] = brokers[chosen[r]];
    }
    free(chosen);
    free(arranged);
    return 0;
}

/* ---- lists of partitions ---- */

typedef struct {
    const char *item;
    int index;
    size_t partition_at;
} named_partition_t;

static int32_t partition_of(const named_partition_t *p)
{
    int32_t v;
    memcpy(&v, p->item + p->partition_at, sizeof(v));
    return v;
}

static int named_partition_order(const void *x, const void *y)
{
    const named_partition_t *a = x, *b = y;
    int c = strcmp(a->item, b->item);
    int32_t pa = partition_of(a), pb = partition_of(b);
    if (c == 0)
        c = (pa > pb) - (pa < pb);
    return c ? c : (a->index > b->index) - (a->index < b->index);
}

int coord_partition_repeated(const void *items, int n, size_t stride, size_t partition_at)
{
    if (n < 2)
        return -1;
    named_partition_t *v = xcalloc((size_t)n, sizeof(*v));
    for (int i = 0; i < n; i++)
        v[i] = (named_partition_t){(const char *)items + (size_t)i * stride, i, partition_at};
    qsort(v, (size_t)n, sizeof(*v), named_partition_order);
    int repeated = -1;
    for (int i = 1; i < n; i++)
        if (strcmp(v[i].item, v[i - 1].item) == 0 && partition_of(&v[i]) == partition_of(&v[i - 1]) &&
            (repeated < 0 || v[i].index < repeated))
            repeated = v[i].index;
    free(v);
    return repeated;
}
