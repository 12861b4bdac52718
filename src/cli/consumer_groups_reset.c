/* consumer_groups_reset.c -- `kipper consumer-groups --reset-offsets`
 * (see consumer_groups.h): the partitions to reset (--topic, --all-topics
 * or the plan of --from-file), each one's new offset by
 * kafka-consumer-groups.sh's rules, then the table (or --export's CSV) and,
 * with --execute, one OffsetCommit to the group's coordinator. The reset
 * is refused while the group has members, as Kafka refuses it. */
#define _GNU_SOURCE
#include "consumer_groups.h"
#include "consumer_groups_session.h"
#include "base/clock.h"
#include "base/fsutil.h"
#include "broker/wire/kafka_errors.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- a partition's new offset ---- */

int cg_new_offset(const cg_opts_t *o, const ga_partition_t *p, int64_t *out, char *note, size_t notelen)
{
    int64_t target = -1;
    note[0] = 0;
    if (p->earliest < 0 || p->latest < 0) {
        snprintf(note, notelen, "the offsets of %s-%d are not known (%s)", p->topic, (int)p->partition,
                 ga_error_text(p->error ? p->error : KERR_LEADER_NOT_AVAILABLE));
        return -1;
    }
    switch (o->reset) {
    case CG_TO_EARLIEST:
        *out = p->earliest;
        return 0;
    case CG_TO_LATEST:
        *out = p->latest;
        return 0;
    case CG_TO_CURRENT:
        *out = p->committed >= 0 ? p->committed : p->latest;
        return 0;
    case CG_TO_DATETIME:
    case CG_BY_DURATION:
        *out = p->by_time >= 0 ? p->by_time : p->latest;
        return 0;
    case CG_FROM_FILE:
        target = p->planned;
        break;
    case CG_TO_OFFSET:
        target = o->value;
        break;
    case CG_SHIFT_BY:
        if (p->committed < 0) {
            snprintf(note, notelen, "Cannot shift offset for partition %s-%d since there is no current committed "
                                    "offset",
                     p->topic, (int)p->partition);
            return -1;
        }
        target = o->value > INT64_MAX - p->committed ? INT64_MAX : p->committed + o->value;
        break;
    default:
        snprintf(note, notelen, "no reset scenario");
        return -1;
    }
    /* Held within the log, with kafka-consumer-groups.sh's words. */
    *out = target < p->earliest ? p->earliest : target > p->latest ? p->latest : target;
    if (*out != target)
        snprintf(note, notelen, "New offset (%lld) is %s than %s offset for topic partition %s-%d. Value will be set "
                                "to %lld",
                 (long long)target, target < p->earliest ? "lower" : "higher",
                 target < p->earliest ? "earliest" : "latest", p->topic, (int)p->partition, (long long)*out);
    return 0;
}

/* ---- --reset-offsets ---- */

/* The partitions --topic names (all of a topic's when none are listed),
 * or those the group has offsets for (--all-topics). */
static int reset_partitions(cg_session_t *s, kafka_client_t *k, const char *group, ga_partitions_t *ps)
{
    int16_t error = KERR_NONE;
    ga_partitions_t committed = {0};
    if (ga_offset_fetch(k, group, &committed, &error) < 0 || error) {
        cg_error("cannot read the offsets of group '%s': %s", group, error ? ga_error_text(error) : k->err);
        ga_partitions_free(&committed);
        return -1;
    }
    if (s->o->all_topics) {
        *ps = committed;
        return 0;
    }
    const char *names[CG_NAMES_MAX];
    char topics[CG_NAMES_MAX][256];
    int nparts[CG_NAMES_MAX];
    int32_t listed[CG_PARTITIONS_MAX];
    for (int i = 0; i < s->o->ntopics; i++) {
        cg_parse_topic(s->o->topics[i], topics[i], sizeof(topics[i]), listed, CG_PARTITIONS_MAX, &nparts[i]);
        names[i] = topics[i];
    }
    ga_cluster_t c;
    if (ga_metadata(&s->boot, names, s->o->ntopics, &c) < 0) {
        cg_error("%s%s", s->boot.err, "");
        ga_partitions_free(&committed);
        return -1;
    }
    int rc = 0;
    if (c.nmissing) {
        cg_error("Topic '%s' does not exist%s", c.missing[0], "");
        rc = -1;
    }
    for (int i = 0; rc == 0 && i < s->o->ntopics; i++) {
        cg_parse_topic(s->o->topics[i], topics[i], sizeof(topics[i]), listed, CG_PARTITIONS_MAX, &nparts[i]);
        for (int p = 0; p < c.parts.n; p++)
            if (strcmp(c.parts.v[p].topic, topics[i]) == 0 && nparts[i] == 0)
                ga_partitions_get(ps, topics[i], c.parts.v[p].partition);
        for (int p = 0; rc == 0 && p < nparts[i]; p++) {
            if (!ga_partitions_find(&c.parts, topics[i], listed[p])) {
                char tp[300];
                snprintf(tp, sizeof(tp), "%.255s-%d", topics[i], (int)listed[p]);
                cg_error("Partition %s does not exist%s", tp, "");
                rc = -1;
            }
            ga_partitions_get(ps, topics[i], listed[p]);
        }
    }
    for (int i = 0; i < ps->n; i++) {
        const ga_partition_t *was = ga_partitions_find(&committed, ps->v[i].topic, ps->v[i].partition);
        ps->v[i].committed = was ? was->committed : -1;
    }
    ga_cluster_free(&c);
    ga_partitions_free(&committed);
    return rc;
}

/* --from-file's plan (at most PLAN_FILE_MAX bytes) into ps; nothing of it
 * is used when a line is bad. */
#define PLAN_FILE_MAX (64u << 20)

static int read_plan(const char *path, ga_partitions_t *ps)
{
    char *text, err[600];
    size_t n;
    if (fs_read_file(path, PLAN_FILE_MAX, &text, &n) < 0) {
        if (errno == EFBIG)
            cg_error("the reset plan '%s' is larger than 64 MiB%s", path, "");
        else
            cg_error("cannot read the reset plan '%s': %s", path, strerror(errno));
        return -1;
    }
    int rc = cg_parse_reset_plan(text, n, ps, err, sizeof(err));
    if (rc < 0)
        cg_error("the reset plan '%s' is not valid: %s; no offset was reset", path, err);
    free(text);
    return rc < 0 ? -1 : 0;
}

static void print_reset(const char *group, const ga_partitions_t *ps, const int64_t *offsets)
{
    int w[4] = {30, 30, 10, 15};
    const char *head[4] = {"GROUP", "TOPIC", "PARTITION", "NEW-OFFSET"};
    if (ps->n)
        cg_print_row(w, head, 4);
    for (int i = 0; i < ps->n; i++) {
        char part[16], off[24];
        const char *cells[4] = {group, ps->v[i].topic, cg_num(part, sizeof(part), ps->v[i].partition),
                                cg_num(off, sizeof(off), offsets[i])};
        cg_print_row(w, cells, 4);
    }
    putchar('\n');
}

static int reset_compute(const cg_opts_t *o, const ga_partitions_t *ps, int64_t *offsets)
{
    for (int i = 0; i < ps->n; i++) {
        char note[400];
        if (cg_new_offset(o, &ps->v[i], &offsets[i], note, sizeof(note)) < 0) {
            cg_error("%s%s", note, "");
            return -1;
        }
        if (note[0])
            printf("%s\n", note);
    }
    return 0;
}

static int reset_execute(kafka_client_t *k, const char *group, const ga_partitions_t *ps, const int64_t *offsets)
{
    int16_t error = KERR_NONE;
    char where[300] = "";
    if (ga_offset_commit(k, group, ps, offsets, &error, where, sizeof(where)) < 0) {
        cg_error("%s%s", k->err, "");
        return -1;
    }
    if (error) {
        char what[600];
        snprintf(what, sizeof(what), "%s (partition %s)", ga_error_text(error), where);
        cg_error("cannot commit the new offsets of group '%s': %s", group, what);
        return -1;
    }
    return 0;
}

int cg_do_reset(cg_session_t *s)
{
    const cg_opts_t *o = s->o;
    const char *group = o->groups[0];
    kafka_client_t k;
    ga_broker_t node = {0};
    ga_group_t g = {0};
    ga_partitions_t ps = {0};
    int64_t *offsets = NULL;
    if (cg_open_coordinator(s, group, &k, &node) < 0) {
        free(node.host);
        return EXIT_FAILED;
    }
    int rc = EXIT_FAILED;
    if (ga_describe_group(&k, group, &g) < 0) {
        cg_error("%s%s", k.err, "");
    } else if (g.error) {
        cg_error("cannot describe group '%s': %s", group, ga_error_text(g.error));
    } else if (strcmp(g.state, "Empty") != 0 && strcmp(g.state, "Dead") != 0) {
        fprintf(stderr, "Error: Assignments can only be reset if the group '%s' is inactive, but the current state "
                        "is %s.\n",
                group, g.state);
    } else if ((o->reset == CG_FROM_FILE ? read_plan(o->from_file, &ps) : reset_partitions(s, &k, group, &ps)) == 0) {
        /* --by-duration: the time that long before now, as --to-datetime. */
        int64_t ago = (int64_t)clock_wall_ms() - o->value;
        int64_t stamps[3] = {GA_EARLIEST, GA_LATEST, o->reset == CG_BY_DURATION ? (ago < 0 ? 0 : ago) : o->value};
        int by_time = o->reset == CG_TO_DATETIME || o->reset == CG_BY_DURATION;
        offsets = malloc(sizeof(*offsets) * (size_t)(ps.n ? ps.n : 1));
        if (offsets && cg_fill_offsets(s, &ps, stamps, by_time ? 3 : 2) == 0 &&
            reset_compute(o, &ps, offsets) == 0 && (!o->execute || reset_execute(&k, group, &ps, offsets) == 0)) {
            /* On stderr, as Kafka's tool: stdout may be --export's CSV. */
            if (!o->execute && !o->dry_run)
                fprintf(stderr, "WARN: No action will be performed as the --execute option is missing. Add "
                                "--execute to reset the offsets, or --dry-run to say this is only a look.\n");
            if (o->export_csv)
                cg_export_plan(stdout, &ps, offsets);
            else
                print_reset(group, &ps, offsets);
            rc = EXIT_OK;
        }
    }
    free(offsets);
    ga_partitions_free(&ps);
    ga_group_free(&g);
    free(node.host);
    kafka_client_close(&k);
    return rc;
}

