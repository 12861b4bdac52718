/* topics_kafka.c -- see topics_kafka.h. What Kafka 3.x's kafka-topics.sh
 * (TopicCommand) does with --bootstrap-server, and how it says it:
 * - --topic is a regular expression matched against the whole name (but
 *   for --create), after its commas become '|' and its blanks and quotes
 *   around go; a name given that matches nothing is "Topic 'T' does not
 *   exist as expected" unless --if-exists;
 * - --create prints "Created topic T.", after a warning when the name holds
 *   '.' or '_' (metric names collide); --delete and --alter print nothing;
 * - --describe prints a topic line (with the configs that are not Kafka's
 *   defaults) and a line per partition; a report option prints only the
 *   partitions it names and no topic line; a partition being moved
 *   (ListPartitionReassignments) shows every replica of the move, the ones
 *   being added and removed, and its topic the replication factor it had
 *   before the move;
 * - --list prints the names one a line, and an empty line for none.
 * Failures: "Error while executing topic command : <message>", exit 1. */
#define _GNU_SOURCE
#include "topics_kafka.h"
#include "broker/coord/coord_data.h"
#include "broker/wire/kafka_errors.h"

#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TK_TIMEOUT_MS 15000
#define TK_CLIENT_ID "kipper-topics"

enum { EXIT_OK = 0, EXIT_FAILED = 1 };

static int failed(const char *message)
{
    fprintf(stderr, "Error while executing topic command : %s\n", message);
    return EXIT_FAILED;
}

/* ---- which topics ---- */

/* kafka-topics.sh's cleaning of --topic before it compiles it. */
static void clean_pattern(const char *in, char *out, size_t n)
{
    size_t len = strlen(in), at = 0;
    while (len && (*in == '"' || *in == '\'' || *in == ' ' || *in == '\t'))
        in++, len--;
    while (len && (in[len - 1] == '"' || in[len - 1] == '\'' || in[len - 1] == ' ' || in[len - 1] == '\t'))
        len--;
    for (size_t i = 0; i < len && at + 1 < n; i++) {
        if (in[i] == ' ')
            continue;
        out[at++] = in[i] == ',' ? '|' : in[i];
    }
    out[at] = 0;
}

typedef struct {
    const ta_topic_t **v;
    int n;
} tk_selection_t;

/* Kafka's internal topics: those Metadata says are, and (as kafka-topics.sh
 * decides by name) the group and transaction logs. */
static int is_internal(const ta_topic_t *t)
{
    return t->internal || strcmp(t->name, "__consumer_offsets") == 0 || strcmp(t->name, "__transaction_state") == 0;
}

/* The topics of m that --topic (whole-name match) and --exclude-internal
 * select, by name. 0, or the exit code after a bad pattern. */
static int select_topics(const topics_kafka_t *t, const ta_metadata_t *m, tk_selection_t *out)
{
    regex_t re;
    char cleaned[1024], anchored[1100];
    out->v = calloc((size_t)m->ntopics + 1, sizeof(*out->v));
    out->n = 0;
    if (!out->v)
        return failed("out of memory");
    if (t->topic) {
        clean_pattern(t->topic, cleaned, sizeof(cleaned));
        snprintf(anchored, sizeof(anchored), "^(%s)$", cleaned);
        if (regcomp(&re, anchored, REG_EXTENDED | REG_NOSUB) != 0) {
            char message[1200];
            snprintf(message, sizeof(message), "%s is an invalid regex.", cleaned);
            return failed(message);   /* out->v: the caller frees it */
        }
    }
    for (int i = 0; i < m->ntopics; i++) {
        const ta_topic_t *topic = &m->topics[i];
        if (t->exclude_internal && is_internal(topic))
            continue;
        if (!t->topic || regexec(&re, topic->name, 0, NULL, 0) == 0)
            out->v[out->n++] = topic;
    }
    if (t->topic)
        regfree(&re);
    return EXIT_OK;
}

/* TopicCommand's ensureTopicExists. */
static int ensure_found(const topics_kafka_t *t, const tk_selection_t *s)
{
    if (!t->topic || t->if_exists || s->n > 0)
        return EXIT_OK;
    char message[600];
    snprintf(message, sizeof(message), "Topic '%.500s' does not exist as expected", t->topic);
    return failed(message);
}

/* ---- the actions ---- */

static int create_topic(kafka_client_t *k, const topics_kafka_t *t)
{
    ta_new_topic_t nt = {.name = t->topic, .partitions = t->partitions, .rf = t->rf, .assignment = t->assignment,
                         .nassigned = t->nassigned, .assigned_rf = t->assigned_rf, .configs = t->configs,
                         .nconfigs = t->nconfigs};
    ta_result_t res;
    if (strpbrk(t->topic, "._"))
        printf("WARNING: Due to limitations in metric names, topics with a period ('.') or underscore ('_') could "
               "collide. To avoid issues it is best to use either, but not both.\n");
    if (ta_create_topic(k, &nt, &res) < 0)
        return failed(k->err);
    if (res.error == KERR_TOPIC_ALREADY_EXISTS && t->if_not_exists)
        return EXIT_OK;
    if (res.error != KERR_NONE)
        return failed(res.message);
    printf("Created topic %s.\n", t->topic);
    return EXIT_OK;
}

/* kafka-topics.sh prints the names joined by newlines, then a newline: an
 * empty listing is one empty line. */
static int list_topics(const tk_selection_t *s)
{
    for (int i = 0; i < s->n; i++)
        printf("%s%s", s->v[i]->name, i + 1 < s->n ? "\n" : "");
    printf("\n");
    return EXIT_OK;
}

static int delete_topics(kafka_client_t *k, const tk_selection_t *s)
{
    if (s->n == 0)
        return EXIT_OK;
    char **names = calloc((size_t)s->n, sizeof(char *));
    ta_result_t res;
    if (!names)
        return failed("out of memory");
    for (int i = 0; i < s->n; i++)
        names[i] = s->v[i]->name;
    int rc = ta_delete_topics(k, names, s->n, &res);
    free(names);
    if (rc < 0)
        return failed(k->err);
    return res.error == KERR_NONE ? EXIT_OK : failed(res.message);
}

/* As kafka-topics.sh: --replica-assignment lists every partition and the
 * ones each topic has already are dropped. */
static int alter_topics(kafka_client_t *k, const topics_kafka_t *t, const tk_selection_t *s)
{
    for (int i = 0; i < s->n; i++) {
        const ta_topic_t *topic = s->v[i];
        const int32_t *added = NULL;
        int nnew = 0;
        ta_result_t res;
        if (t->assignment) {
            int from = topic->nparts < t->nassigned ? topic->nparts : t->nassigned;
            added = t->assignment + (size_t)from * (size_t)t->assigned_rf;
            nnew = t->nassigned - from;
        }
        if (ta_create_partitions(k, topic->name, t->partitions, added, nnew, t->assigned_rf, &res) < 0)
            return failed(k->err);
        if (res.error != KERR_NONE)
            return failed(res.message);
    }
    return EXIT_OK;
}

/* ---- --describe ---- */

static void print_ids(const char *label, const int32_t *ids, int n)
{
    printf("\t%s: ", label);
    for (int i = 0; i < n; i++)
        printf("%s%d", i ? "," : "", (int)ids[i]);
}

/* The topic's min.insync.replicas, -1 when the broker did not say. */
static int min_isr(const ta_configs_t *c)
{
    const ta_config_t *e = ta_configs_find(c, "min.insync.replicas");
    return e && e->value ? atoi(e->value) : -1;
}

/* TopicCommand's DescribeOptions: every partition without a report, else
 * those the report names. */
static int partition_shown(unsigned reports, const ta_partition_t *p, const ta_metadata_t *m, int minisr)
{
    int leader = p->leader >= 0;
    if (!(reports & (TK_UNDER_REPLICATED | TK_UNAVAILABLE | TK_UNDER_MIN_ISR | TK_AT_MIN_ISR)))
        return 1;
    if ((reports & TK_UNDER_REPLICATED) && p->nisr < ta_replication_factor(p))
        return 1;
    if ((reports & TK_UNAVAILABLE) && (!leader || !ta_broker_live(m, p->leader)))
        return 1;
    if ((reports & TK_UNDER_MIN_ISR) && (!leader || (minisr >= 0 && p->nisr < minisr)))
        return 1;
    return (reports & TK_AT_MIN_ISR) && minisr >= 0 && p->nisr == minisr;
}

static int has_overrides(const ta_configs_t *c)
{
    for (int i = 0; i < c->n; i++)
        if (c->v[i].source != TA_SOURCE_DEFAULT)
            return 1;
    return 0;
}

static void print_topic_line(const ta_topic_t *topic, const ta_configs_t *c)
{
    static const uint8_t zero[16];
    char id[23];
    printf("Topic: %s", topic->name);
    if (memcmp(topic->id, zero, sizeof(zero)) != 0) {
        coord_topic_id_format(topic->id, id);
        printf("\tTopicId: %s", id);
    }
    printf("\tPartitionCount: %d\tReplicationFactor: %d\tConfigs: ", topic->nparts,
           topic->nparts ? ta_replication_factor(&topic->parts[0]) : 0);
    int first = 1;
    for (int i = 0; i < c->n; i++) {
        if (c->v[i].source == TA_SOURCE_DEFAULT)
            continue;
        printf("%s%s=%s", first ? "" : ",", c->v[i].name, c->v[i].value ? c->v[i].value : "null");
        first = 0;
    }
    printf("\n");
}

static void print_partition(const char *topic, const ta_partition_t *p)
{
    printf("\tTopic: %s\tPartition: %d\t", topic, (int)p->partition);
    if (p->leader >= 0)
        printf("Leader: %d", (int)p->leader);
    else
        printf("Leader: none");
    int nshown;
    const int32_t *shown = ta_shown_replicas(p, &nshown);
    print_ids("Replicas", shown, nshown);
    print_ids("Isr", p->isr, p->nisr);
    if (p->moving) {
        print_ids("Adding Replicas", p->adding, p->nadding);
        print_ids("Removing Replicas", p->removing, p->nremoving);
    }
    printf("\n");
}

static int describe_one(kafka_client_t *k, const topics_kafka_t *t, const ta_metadata_t *m, const ta_topic_t *topic)
{
    ta_configs_t c;
    ta_result_t res;
    if (ta_describe_configs(k, TA_RESOURCE_TOPIC, topic->name, &c, &res) < 0)
        return failed(k->err);
    if (res.error != KERR_NONE)
        return failed(res.message);
    unsigned partition_reports = t->reports & ~(unsigned)TK_WITH_OVERRIDES;
    if (!partition_reports && (!(t->reports & TK_WITH_OVERRIDES) || has_overrides(&c)))
        print_topic_line(topic, &c);
    int minisr = min_isr(&c);
    for (int i = 0; !(t->reports & TK_WITH_OVERRIDES) && i < topic->nparts; i++)
        if (partition_shown(t->reports, &topic->parts[i], m, minisr))
            print_partition(topic->name, &topic->parts[i]);
    ta_configs_free(&c);
    return EXIT_OK;
}

/* Moves in progress show on their partitions; as kafka-topics.sh, a broker
 * that answers it does not serve ListPartitionReassignments shows none. */
static int describe_topics(kafka_client_t *k, const topics_kafka_t *t, ta_metadata_t *m, const tk_selection_t *s)
{
    ta_result_t res;
    if (s->n > 0 && ta_list_reassignments(k, m, &res) < 0)
        return failed(k->err);
    if (s->n > 0 && res.error != KERR_NONE && res.error != KERR_UNSUPPORTED_VERSION)
        return failed(res.message);
    int rc = EXIT_OK;
    for (int i = 0; i < s->n && rc == EXIT_OK; i++)
        rc = describe_one(k, t, m, s->v[i]);
    return rc;
}

/* Every action but --create works on the topics the cluster has now. */
static int run_on_selection(kafka_client_t *k, const topics_kafka_t *t)
{
    ta_metadata_t m;
    tk_selection_t s = {0};
    if (ta_metadata(k, &m) < 0)
        return failed(k->err);
    int rc = select_topics(t, &m, &s);
    if (rc == EXIT_OK && t->action != TK_LIST)   /* --list of nothing is an empty list */
        rc = ensure_found(t, &s);
    if (rc == EXIT_OK) {
        switch (t->action) {
        case TK_LIST: rc = list_topics(&s); break;
        case TK_DESCRIBE: rc = describe_topics(k, t, &m, &s); break;
        case TK_DELETE: rc = delete_topics(k, &s); break;
        case TK_ALTER: rc = alter_topics(k, t, &s); break;
        case TK_CREATE: break;
        }
    }
    free(s.v);
    ta_metadata_free(&m);
    return rc;
}

int topics_kafka_run(const topics_kafka_t *t)
{
    kafka_client_t k;
    char err[1024];
    int timeout_ms = t->timeout_ms > 0 ? t->timeout_ms : TK_TIMEOUT_MS;
    if (kafka_client_open_any(&k, t->servers, timeout_ms, TK_CLIENT_ID, err, sizeof(err)) < 0)
        return failed(err);
    int rc = t->action == TK_CREATE ? create_topic(&k, t) : run_on_selection(&k, t);
    fflush(stdout);
    kafka_client_close(&k);
    return rc;
}
