/* console_producer.c -- `kipper console-producer` (console.h): each line of
 * stdin a record as kafka-console-producer.sh's LineMessageReader reads it
 * (console_line.c: headers, key and value, null.marker), on the partition
 * --partition names, or else the one Kafka's partitioner picks
 * (partitioner.h: murmur2 of the key, sticky without one). The lines already read are
 * sent together: when no more input is ready, at EOF, or every --batch-size
 * lines, as one uncompressed v2 batch per partition in one Produce to each
 * leader. With acks 1 or all each batch must be acknowledged: a leader that
 * moved (or is missing) has the metadata read again and the batch sent again
 * until the delivery time passes, as Kafka's producer retries; any other
 * error ends the tool. Exit codes: 0 every record acknowledged (with acks=0:
 * sent), 1 an error, 2 the command line. */
#define _GNU_SOURCE
#include "cli_args.h"
#include "console.h"
#include "partitioner.h"
#include "base/clock.h"
#include "broker/wire/kafka_errors.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CLIENT_ID "kipper-console-producer"
#define PRODUCE_VERSION 3        /* v2 batches; every broker since 0.11 */
#define DELIVERY_TIMEOUT_MS 30000   /* Kafka's delivery.timeout.ms is 120 s; a console wants less */
#define READ_CHUNK 65536

enum { EXIT_OK = 0, EXIT_FAILED = 1 };

static void usage(FILE *f)
{
    fprintf(f,
            "usage: kipper console-producer --bootstrap-server HOST:PORT[,...] --topic T [--partition N]\n"
            "           [--property NAME=VALUE ...] [--batch-size N]\n"
            "           [--producer-property acks=all|1|0 | --request-required-acks all|1|0]\n"
            "\n"
            "Sends each line of stdin as a record (kafka-console-producer.sh); acks all by default. A line is\n"
            "[HEADERS<headers.delimiter>][KEY<key.separator>]VALUE, HEADERS being K:V pairs. Without --partition\n"
            "a keyed record goes where Kafka's partitioner puts it (murmur2 of the key), keyless ones stick to\n"
            "one partition for 16 KiB. The --property names of LineMessageReader (default in brackets):\n"
            "  parse.key [false]            key.separator [tab]\n"
            "  parse.headers [false]        headers.delimiter [tab]  headers.separator [,]\n"
            "  headers.key.separator [:]    ignore.error [false]  a line missing a separator: that part absent\n"
            "  null.marker [none]           a key, value or header value equal to it is sent as null\n"
            "Exit status: 0 every record acknowledged, 1 failed, 2 a wrong command line.\n");
}

/* A line's record kept until acknowledged: its parts at offsets in text
 * (a length of -1: null). */
typedef struct {
    size_t key_off, value_off, headers_off, headers_len;
    int64_t key_len, value_len;
    int32_t header_count;
    int part;          /* index in parts */
} line_t;

typedef struct {
    const cp_opts_t *o;
    kafka_client_t boot;
    ga_cluster_t cluster;
    ga_partitions_t parts;
    console_conns_t conns;
    buf_t text;           /* the records not yet acknowledged */
    buf_t headers;        /* a line's headers as console_line.c encodes them */
    line_t *lines;
    int nlines, cap;
    partitioner_sticky_t sticky;   /* keyless records */
    int64_t line_number;  /* for LineMessageReader's messages */
} producer_t;

/* ---- lines ---- */

/* The index in parts of the partition record r goes to. */
static int choose_partition(producer_t *p, const cr_input_t *r)
{
    if (p->o->partition >= 0)
        return 0;
    int32_t n = p->parts.n, id;
    if (r->key)
        id = partitioner_keyed(r->key, r->key_len, n);
    else
        id = partitioner_sticky(&p->sticky, n, r->value_len + r->headers_len);
    const ga_partition_t *gp = ga_partitions_find(&p->parts, p->o->topic, id);
    return gp ? (int)(gp - p->parts.v) : 0;   /* parts holds every partition 0..n-1 */
}

/* Appends s[0..len) to text (s NULL: nothing, length -1); its offset. */
static size_t keep(producer_t *p, const void *s, size_t len, int64_t *kept_len)
{
    size_t off = p->text.len;
    if (kept_len)
        *kept_len = s ? (int64_t)len : -1;
    if (s)
        buf_append(&p->text, s, len);
    return off;
}

static int add_line(producer_t *p, const char *s, size_t len)
{
    p->line_number++;
    if (len && s[len - 1] == '\r')
        len--;   /* BufferedReader.readLine takes "\r\n" as the end of a line */
    cr_input_t r;
    char err[1024];
    if (cp_line_record(p->o, s, len, p->line_number, &r, &p->headers, err, sizeof(err)) < 0) {
        fprintf(stderr, "Error: %s\n", err);
        return -1;
    }
    if (p->nlines == p->cap) {
        int cap = p->cap ? p->cap * 2 : 128;
        line_t *v = realloc(p->lines, sizeof(*v) * (size_t)cap);
        if (!v)
            return -1;
        p->lines = v;
        p->cap = cap;
    }
    line_t *l = &p->lines[p->nlines++];
    *l = (line_t){.part = choose_partition(p, &r), .header_count = r.header_count, .headers_len = r.headers_len};
    l->key_off = keep(p, r.key, r.key_len, &l->key_len);
    l->value_off = keep(p, r.value, r.value_len, &l->value_len);
    l->headers_off = keep(p, r.headers_len ? r.headers : NULL, r.headers_len, NULL);
    return 0;
}

/* The bytes kept at off (len -1: null; empty ones never NULL). */
static const char *kept_at(const producer_t *p, size_t off, int64_t len)
{
    return len < 0 ? NULL : len == 0 ? "" : (const char *)p->text.data + off;
}

/* The records of the lines of partition part, into recs (nlines long). */
static int records_of(const producer_t *p, int part, cr_input_t *recs)
{
    int n = 0;
    for (int i = 0; i < p->nlines; i++) {
        const line_t *l = &p->lines[i];
        if (l->part != part)
            continue;
        recs[n++] = (cr_input_t){.key = kept_at(p, l->key_off, l->key_len),
                                 .key_len = l->key_len < 0 ? 0 : (size_t)l->key_len,
                                 .value = kept_at(p, l->value_off, l->value_len),
                                 .value_len = l->value_len < 0 ? 0 : (size_t)l->value_len,
                                 .headers = (const uint8_t *)kept_at(p, l->headers_off, (int64_t)l->headers_len),
                                 .headers_len = l->headers_len,
                                 .header_count = l->header_count};
    }
    return n;
}

/* The lines of the partitions whose done[part] is set are forgotten. */
static void forget(producer_t *p, const int *done)
{
    int kept = 0;
    for (int i = 0; i < p->nlines; i++)
        if (!done[p->lines[i].part])
            p->lines[kept++] = p->lines[i];
    p->nlines = kept;
    if (kept == 0)
        buf_clear(&p->text);
}

/* ---- sending ---- */

/* A Produce of batches[which[0..n)], one per partition. */
static kafka_value_t *produce_request(kafka_arena_t *a, const producer_t *p, const int *which, int n,
                                      const buf_t *batches)
{
    kafka_value_t *body = KV_NEW(a, ProduceRequest);
    kafka_value_t *topics = body ? KV_SET_ARRAY(a, body, ProduceRequest, TopicData, 1) : NULL;
    kafka_value_t *parts = topics ? KV_SET_ARRAY(a, kv_at(topics, 0), TopicProduceData, PartitionData,
                                                 (uint32_t)n)
                                  : NULL;
    if (!parts)
        return NULL;
    KV_SET_INT(body, ProduceRequest, Acks, p->o->acks);
    KV_SET_INT(body, ProduceRequest, TimeoutMs, CONSOLE_TIMEOUT_MS);
    KV_SET_STR(a, kv_at(topics, 0), TopicProduceData, Name, p->o->topic);
    for (int k = 0; k < n; k++) {
        kafka_value_t *pd = kv_at(parts, (uint32_t)k);
        KV_SET_INT(pd, PartitionProduceData, Index, p->parts.v[which[k]].partition);
        KV_SET_BYTES(pd, PartitionProduceData, Records, batches[which[k]].data, (uint32_t)batches[which[k]].len);
    }
    return body;
}

/* Errors after which the batch is sent again once the metadata is read
 * again (Kafka's retriable ones a console producer meets). */
static int retriable(int16_t error)
{
    return error == KERR_NOT_LEADER_OR_FOLLOWER || error == KERR_LEADER_NOT_AVAILABLE ||
           error == KERR_NOT_ENOUGH_REPLICAS || error == KERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND ||
           error == KERR_REQUEST_TIMED_OUT || error == KERR_UNKNOWN_TOPIC_OR_PARTITION ||
           error == KERR_KAFKA_STORAGE_ERROR;
}

/* The Produce answer: done[] set for each partition that took its batch. 0,
 * 2 when one must be sent again, -1 on an error (said on stderr). */
static int take_answer(producer_t *p, const kafka_value_t *ans, const buf_t *batches, int *done)
{
    int rc = 0;
    const kafka_value_t *topics = KV_GET(ans, ProduceResponse, Responses);
    for (uint32_t t = 0; t < topics->n; t++) {
        const kafka_value_t *parts = KV_GET(kv_at(topics, t), TopicProduceResponse, PartitionResponses);
        for (uint32_t i = 0; i < parts->n; i++) {
            const kafka_value_t *pr = kv_at(parts, i);
            ga_partition_t *gp = ga_partitions_find(&p->parts, p->o->topic,
                                                    (int32_t)KV_INT(pr, PartitionProduceResponse, Index));
            int16_t error = (int16_t)KV_INT(pr, PartitionProduceResponse, ErrorCode);
            int j = gp ? (int)(gp - p->parts.v) : -1;
            if (j < 0 || batches[j].len == 0)
                continue;
            if (!error)
                done[j] = 1;
            else if (retriable(error))
                rc = rc < 0 ? rc : 2;
            else {
                fprintf(stderr, "Error when sending message to topic %s partition %d (%zu bytes) with error: %s\n",
                        p->o->topic, (int)gp->partition, batches[j].len, ga_error_text(error));
                rc = -1;
            }
        }
    }
    return rc;
}

/* One Produce to cluster broker bi of batches[which[0..n)]. As take_answer. */
static int produce_to(producer_t *p, int bi, const int *which, int n, const buf_t *batches, int *done)
{
    kafka_client_t *k = console_conn(&p->conns, &p->cluster, bi, CLIENT_ID);
    if (!k)
        return 2;
    const kafka_value_t *body = produce_request(&k->request, p, which, n, batches);
    const kafka_value_t *ans = NULL;
    int rc = p->o->acks == 0 ? kafka_client_send(k, KAFKA_API_PRODUCE, PRODUCE_VERSION, body)
                             : kafka_client_call(k, KAFKA_API_PRODUCE, PRODUCE_VERSION, body, &ans);
    if (rc < 0) {
        fprintf(stderr, "Warning: cannot produce to broker %d: %s\n", (int)p->cluster.brokers[bi].id, k->err);
        kafka_client_close(k);
        return 2;
    }
    for (int i = 0; !ans && i < n; i++)
        done[which[i]] = 1;
    return ans ? take_answer(p, ans, batches, done) : 0;
}

/* Every partition's lines as one batch each, sent to the leaders. As
 * take_answer; done[] for the partitions acknowledged. */
static int send_batches(producer_t *p, buf_t *batches, int *which, int *done)
{
    cr_input_t *recs = malloc(sizeof(*recs) * (size_t)p->nlines);
    int stale = 0, rc = recs ? 0 : -1;
    for (int j = 0; recs && j < p->parts.n; j++) {
        int n = records_of(p, j, recs);
        if (n)
            cr_batch_build(&batches[j], recs, n, (int64_t)clock_wall_ms());
        stale |= n && console_leader_index(&p->cluster, p->parts.v[j].leader) < 0;
    }
    free(recs);
    for (int b = 0; rc >= 0 && b < p->cluster.nbrokers; b++) {
        int n = 0;
        for (int j = 0; j < p->parts.n; j++)
            if (batches[j].len && p->parts.v[j].leader == p->cluster.brokers[b].id)
                which[n++] = j;
        int one = n ? produce_to(p, b, which, n, batches, done) : 0;
        rc = one < 0 ? -1 : rc;
        stale |= one == 2;
    }
    return rc < 0 ? -1 : stale ? 2 : 0;
}

static int send_round(producer_t *p)
{
    int n = p->parts.n;
    buf_t *batches = calloc((size_t)n, sizeof(*batches));
    int *which = calloc((size_t)n, sizeof(int)), *done = calloc((size_t)n, sizeof(int));
    int rc = batches && which && done ? send_batches(p, batches, which, done) : -1;
    if (rc >= 0)
        forget(p, done);
    for (int j = 0; batches && j < n; j++)
        buf_free(&batches[j]);
    free(batches);
    free(which);
    free(done);
    return rc;
}

/* Until every line read is acknowledged, or the delivery time passes. */
static int flush(producer_t *p)
{
    uint64_t deadline = clock_mono_ms() + DELIVERY_TIMEOUT_MS;
    while (p->nlines) {
        int rc = send_round(p);
        if (rc < 0)
            return -1;
        if (rc == 0)
            continue;
        if (clock_mono_ms() >= deadline) {
            fprintf(stderr, "Error: %d records to topic %s not acknowledged in %d ms\n", p->nlines, p->o->topic,
                    DELIVERY_TIMEOUT_MS);
            return -1;
        }
        console_conns_close(&p->conns);
        console_sleep_ms(100);
        if (console_metadata(&p->boot, p->o->topic, p->o->partition, &p->cluster) < 0)
            return -1;
        console_update_leaders(&p->parts, &p->cluster);
    }
    return 0;
}

/* ---- reading stdin ---- */

/* The whole lines at the start of in become records (sent every
 * batch_lines); what follows the last newline stays in in. */
static int take_lines(producer_t *p, buf_t *in)
{
    for (;;) {
        const char *s = (const char *)buf_read_ptr(in);
        const char *nl = memchr(s, '\n', buf_unread(in));
        if (!nl)
            return 0;
        if (add_line(p, s, (size_t)(nl - s)) < 0)
            return -1;
        buf_consume(in, (size_t)(nl - s) + 1);
        if (p->nlines >= p->o->batch_lines && flush(p) < 0)
            return -1;
    }
}

static int input_ready(void)
{
    struct pollfd pfd = {.fd = STDIN_FILENO, .events = POLLIN};
    return poll(&pfd, 1, 0) > 0;
}

static int produce_stdin(producer_t *p)
{
    buf_t in;
    buf_init(&in);
    int rc = 0;
    for (;;) {
        buf_reserve(&in, READ_CHUNK);
        ssize_t n = read(STDIN_FILENO, in.data + in.len, READ_CHUNK);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            fprintf(stderr, "Error: cannot read stdin: %s\n", strerror(errno));
            rc = -1;
            break;
        }
        in.len += (size_t)n;
        if ((rc = take_lines(p, &in)) < 0)
            break;
        if (n == 0 && buf_unread(&in) && (rc = add_line(p, (const char *)buf_read_ptr(&in), buf_unread(&in))) < 0)
            break;
        if ((n == 0 || !input_ready()) && (rc = flush(p)) < 0)
            break;
        if (n == 0)
            break;
    }
    buf_free(&in);
    return rc;
}

int console_producer_main(int argc, char **argv)
{
    cp_opts_t o;
    char err[700];
    int rc = cli_usage_exit(cp_parse_args(argc, argv, &o, err, sizeof(err)), "console-producer", err, usage);
    if (rc >= 0)
        return rc;
    producer_t p = {.o = &o};
    buf_init(&p.text);
    buf_init(&p.headers);
    partitioner_sticky_init(&p.sticky, clock_wall_ms() ^ (uint64_t)getpid() << 32);
    if (kafka_client_open_any(&p.boot, o.bootstrap, CONSOLE_TIMEOUT_MS, CLIENT_ID, err, sizeof(err)) < 0) {
        fprintf(stderr, "Error: %s\n", err);
        return EXIT_FAILED;
    }
    rc = console_metadata(&p.boot, o.topic, o.partition, &p.cluster) < 0 ||
                 console_partitions(&p.cluster, o.topic, o.partition, &p.parts) < 0
             ? -1
             : produce_stdin(&p);
    console_conns_close(&p.conns);
    kafka_client_close(&p.boot);
    ga_cluster_free(&p.cluster);
    ga_partitions_free(&p.parts);
    buf_free(&p.text);
    buf_free(&p.headers);
    free(p.lines);
    return rc < 0 ? EXIT_FAILED : EXIT_OK;
}
