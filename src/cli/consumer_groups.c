/* consumer_groups.c -- `kipper consumer-groups` (see consumer_groups.h):
 * the command line, the session, --list, --describe, --delete and
 * --delete-offsets; --reset-offsets is consumer_groups_reset.c.
 *
 * It talks to the brokers as Kafka's admin client does for
 * kafka-consumer-groups.sh: the bootstrap broker for Metadata and
 * FindCoordinator, the group's coordinator for DescribeGroups, OffsetFetch,
 * OffsetCommit, DeleteGroups and OffsetDelete, each partition's leader for
 * ListOffsets, and every broker for ListGroups. Every call is bounded by --timeout, and
 * finding a coordinator that is not ready yet is retried until then.
 *
 * Output follows kafka-consumer-groups.sh of Kafka 3.x: its tables (each
 * line led by a newline, columns padded as it pads them, "-" where a value
 * is unknown), "Error: ..." lines on stderr. Exit codes: 0 done, 1 the
 * operation failed (an unknown group, a reset refused, a broker that cannot
 * be reached), 2 the command line is wrong. */
#define _GNU_SOURCE
#include "consumer_groups.h"
#include "consumer_groups_session.h"
#include "cli_args.h"
#include "base/clock.h"
#include "base/net.h"
#include "broker/wire/kafka_errors.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#define RETRY_PAUSE_MS 100

static void usage(FILE *f)
{
    fprintf(f,
            "usage: kipper consumer-groups --bootstrap-server HOST:PORT[,HOST:PORT...] ACTION [options]\n"
            "\n"
            "  --list [--state [STATE,...]]\n"
            "  --describe (--group G ... | --all-groups) [--members [--verbose] | --state | --offsets]\n"
            "  --reset-offsets --group G (--topic T[:P,...] ... | --all-topics)\n"
            "                  (--to-earliest | --to-latest | --to-current | --to-offset N | --shift-by N |\n"
            "                   --to-datetime YYYY-MM-DDTHH:mm:SS.sss | --by-duration PnDTnHnMnS)\n"
            "                  (--dry-run | --execute) [--export]\n"
            "  --reset-offsets --group G --from-file FILE (--dry-run | --execute) [--export]\n"
            "  --delete (--group G ... | --all-groups)\n"
            "  --delete-offsets --group G --topic T[:P,...] ...\n"
            "\n"
            "  --bootstrap-server  brokers to ask first (the others are found through them)\n"
            "  --state             with --list: show each group's state, or only the groups in the states\n"
            "                      listed (PreparingRebalance, CompletingRebalance, Stable, Dead, Empty);\n"
            "                      with --describe: the group's coordinator, strategy, state and members\n"
            "  --reset-offsets     only while the group has no active members; without --execute it only\n"
            "                      shows the new offsets (--dry-run)\n"
            "  --by-duration       reset to the first offset at or after this long ago (ISO-8601: P1D, PT30M)\n"
            "  --from-file FILE    reset to the offsets of a CSV file, one topic,partition,offset a line\n"
            "  --export            print the plan as that CSV instead of the table\n"
            "  --delete-offsets    delete the group's committed offsets of the partitions given (all of a\n"
            "                      topic's without :P); refused for topics an active group subscribes to\n"
            "  --timeout MS        how long to wait for each answer and for a coordinator (default %d)\n"
            "\n"
            "Exit status: 0 done, 1 the operation failed, 2 a wrong command line.\n",
            CG_DEFAULT_TIMEOUT_MS);
}

void cg_error(const char *fmt, const char *a, const char *b)
{
    fprintf(stderr, "Error: ");
    fprintf(stderr, fmt, a, b);
    fprintf(stderr, "\n");
}

/* ---- the command line ---- */

static int bad(char *err, size_t errlen, const char *fmt, const char *arg)
{
    snprintf(err, errlen, fmt, arg);
    return -1;
}

/* Kafka's group states, as --state names them (case-insensitive). */
static const char *const STATES[] = {"PreparingRebalance", "CompletingRebalance", "Stable", "Dead", "Empty"};

static int parse_states(cg_opts_t *o, const char *list, char *err, size_t errlen)
{
    const char *p = list;
    while (*p) {
        size_t n = strcspn(p, ",");
        size_t k = 0;
        while (k < sizeof(STATES) / sizeof(STATES[0]) &&
               !(strlen(STATES[k]) == n && strncasecmp(STATES[k], p, n) == 0))
            k++;
        if (k == sizeof(STATES) / sizeof(STATES[0]) || o->nstates == (int)(sizeof(o->states) / sizeof(o->states[0])))
            return bad(err, errlen,
                       "--state: '%s' is not a list of PreparingRebalance, CompletingRebalance, Stable, Dead, Empty",
                       list);
        o->states[o->nstates++] = STATES[k];
        p += n + (p[n] ? 1 : 0);
    }
    return 0;
}

static int add_name(const char **names, int *n, const char *v, const char *opt, char *err, size_t errlen)
{
    if (!*v)
        return bad(err, errlen, "%s needs a non-empty value", opt);
    if (*n == CG_NAMES_MAX)
        return bad(err, errlen, "too many %s options (at most 64)", opt);
    names[(*n)++] = v;
    return 0;
}

static int set_action(cg_opts_t *o, cg_action_t a, const char *arg, char *err, size_t errlen)
{
    if (o->action != CG_NO_ACTION && o->action != a)
        return bad(err, errlen, "give only one of --list, --describe, --reset-offsets, --delete, --delete-offsets "
                                "(also got %s)",
                   arg);
    o->action = a;
    return 0;
}

static int set_reset(cg_opts_t *o, cg_reset_t r, const char *arg, char *err, size_t errlen)
{
    if (o->reset != CG_TO_NONE)
        return bad(err, errlen, "give only one reset scenario (--to-earliest, --to-latest, --to-current, "
                                "--to-offset, --shift-by, --to-datetime, --by-duration, --from-file); also got %s",
                   arg);
    o->reset = r;
    return 0;
}

static int apply_flag(cg_opts_t *o, const char *arg, char *err, size_t errlen)
{
    static const struct {
        const char *name;
        cg_action_t action;
    } actions[] = {{"--list", CG_LIST}, {"--describe", CG_DESCRIBE}, {"--reset-offsets", CG_RESET},
                   {"--delete", CG_DELETE}, {"--delete-offsets", CG_DELETE_OFFSETS}};
    static const struct {
        const char *name;
        cg_reset_t reset;
    } resets[] = {{"--to-earliest", CG_TO_EARLIEST}, {"--to-latest", CG_TO_LATEST}, {"--to-current", CG_TO_CURRENT}};
    for (size_t k = 0; k < sizeof(actions) / sizeof(actions[0]); k++)
        if (strcmp(arg, actions[k].name) == 0)
            return set_action(o, actions[k].action, arg, err, errlen);
    for (size_t k = 0; k < sizeof(resets) / sizeof(resets[0]); k++)
        if (strcmp(arg, resets[k].name) == 0)
            return set_reset(o, resets[k].reset, arg, err, errlen);
    int *flags[] = {&o->all_groups, &o->all_topics, &o->dry_run, &o->execute, &o->verbose, &o->export_csv};
    static const char *const names[] = {"--all-groups", "--all-topics", "--dry-run",
                                        "--execute",    "--verbose",    "--export"};
    for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++)
        if (strcmp(arg, names[k]) == 0) {
            *flags[k] = 1;
            return 0;
        }
    if (strcmp(arg, "--members") == 0 || strcmp(arg, "--offsets") == 0) {
        o->show = arg[2] == 'm' ? CG_SHOW_MEMBERS : CG_SHOW_OFFSETS;
        return 0;
    }
    return 1;   /* not a flag */
}

static int apply_valued(cg_opts_t *o, const char *name, const char *v, char *err, size_t errlen)
{
    int64_t n;
    if (strcmp(name, "--bootstrap-server") == 0) {
        o->bootstrap = v;
    } else if (strcmp(name, "--group") == 0) {
        return add_name(o->groups, &o->ngroups, v, name, err, errlen);
    } else if (strcmp(name, "--topic") == 0) {
        return add_name(o->topics, &o->ntopics, v, name, err, errlen);
    } else if (strcmp(name, "--timeout") == 0) {
        if (cli_parse_i64(v, &n) < 0 || n <= 0 || n > 3600000)
            return bad(err, errlen, "--timeout must be milliseconds between 1 and 3600000, got '%s'", v);
        o->timeout_ms = (int)n;
    } else if (strcmp(name, "--to-datetime") == 0) {
        if (cg_parse_datetime(v, &o->value) < 0)
            return bad(err, errlen, "--to-datetime must be YYYY-MM-DDTHH:mm:SS.sss (with an optional zone: Z, "
                                    "+01:00), got '%s'",
                       v);
        return set_reset(o, CG_TO_DATETIME, name, err, errlen);
    } else if (strcmp(name, "--by-duration") == 0) {
        if (cg_parse_duration(v, &o->value) < 0)
            return bad(err, errlen, "--by-duration must be an ISO-8601 duration PnDTnHnMnS (P1D, PT1H30M, "
                                    "PT0.5S), got '%s'",
                       v);
        return set_reset(o, CG_BY_DURATION, name, err, errlen);
    } else if (strcmp(name, "--from-file") == 0) {
        if (!*v)
            return bad(err, errlen, "%s needs a file name", name);
        o->from_file = v;
        return set_reset(o, CG_FROM_FILE, name, err, errlen);
    } else {
        if (cli_parse_i64(v, &o->value) < 0 || (name[2] == 't' && o->value < 0))
            return bad(err, errlen, strcmp(name, "--to-offset") == 0 ? "--to-offset must be an offset, got '%s'"
                                                                      : "--shift-by must be a number, got '%s'",
                       v);
        return set_reset(o, name[2] == 't' ? CG_TO_OFFSET : CG_SHIFT_BY, name, err, errlen);
    }
    return 0;
}

static int parse_arg(cg_opts_t *o, int argc, char **argv, int *i, char *err, size_t errlen)
{
    static const char *const names[] = {"--bootstrap-server", "--group",     "--topic",      "--timeout",
                                        "--to-datetime",      "--to-offset", "--shift-by",
                                        "--by-duration",      "--from-file"};
    const char *arg = argv[*i];
    int rc = apply_flag(o, arg, err, errlen);
    if (rc <= 0)
        return rc;
    if (strcmp(arg, "--state") == 0 || strncmp(arg, "--state=", 8) == 0) {
        /* Its list is optional: the next word is it unless it is an option. */
        o->state_given = 1;
        const char *list = arg[7] == '=' ? arg + 8 : (*i + 1 < argc && strncmp(argv[*i + 1], "--", 2) != 0)
                                                         ? argv[++*i]
                                                         : "";
        return parse_states(o, list, err, errlen);
    }
    for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
        const char *v;
        rc = cli_option_value(argc, argv, i, names[k], &v, err, errlen);
        if (rc != 0)
            return rc < 0 ? -1 : apply_valued(o, names[k], v, err, errlen);
    }
    return bad(err, errlen, "unknown option '%s'", arg);
}

/* Which options go with which action, as kafka-consumer-groups.sh checks. */
static int check_options(cg_opts_t *o, char *err, size_t errlen)
{
    if (o->action == CG_NO_ACTION)
        return bad(err, errlen, "%s", "give one of --list, --describe, --reset-offsets, --delete, --delete-offsets");
    if (!o->bootstrap)
        return bad(err, errlen, "%s", "--bootstrap-server is required");
    int groups = o->ngroups > 0 || o->all_groups;
    if (o->action == CG_LIST && (groups || o->ntopics || o->reset))
        return bad(err, errlen, "%s", "--list takes no --group, --topic or reset option");
    if ((o->action == CG_DESCRIBE || o->action == CG_DELETE) && !groups)
        return bad(err, errlen, "%s", "--describe and --delete need --group G or --all-groups");
    if (o->ngroups && o->all_groups)
        return bad(err, errlen, "%s", "give either --group or --all-groups");
    if (o->action == CG_DELETE_OFFSETS && (o->ngroups != 1 || !o->ntopics))
        return bad(err, errlen, "%s", "--delete-offsets needs exactly one --group and at least one --topic");
    if (o->action != CG_RESET && o->action != CG_DELETE_OFFSETS && o->ntopics)
        return bad(err, errlen, "%s", "--topic goes with --reset-offsets or --delete-offsets");
    if (o->action != CG_RESET && (o->all_topics || o->reset || o->dry_run || o->execute || o->export_csv))
        return bad(err, errlen, "%s", "--all-topics, the reset scenarios, --dry-run, --execute and --export go "
                                      "with --reset-offsets");
    if (o->action == CG_DESCRIBE && o->state_given && o->show == CG_SHOW_MEMBERS)
        return bad(err, errlen, "%s", "--describe takes one of --members, --state, --offsets");
    if (o->action == CG_DESCRIBE && o->state_given)
        o->show = CG_SHOW_STATE;
    if (o->action == CG_DESCRIBE && o->nstates)
        return bad(err, errlen, "%s", "--describe --state takes no list of states");
    if (o->action != CG_DESCRIBE && o->action != CG_LIST && o->state_given)
        return bad(err, errlen, "%s", "--state goes with --list or --describe");
    if (o->action != CG_RESET && o->action != CG_DELETE_OFFSETS)
        return 0;
    for (int i = 0; i < o->ntopics; i++) {
        char topic[256];
        int32_t parts[CG_PARTITIONS_MAX];
        int nparts;
        if (cg_parse_topic(o->topics[i], topic, sizeof(topic), parts, CG_PARTITIONS_MAX, &nparts) < 0)
            return bad(err, errlen, "--topic must be TOPIC or TOPIC:PARTITION,PARTITION,..., got '%s'",
                       o->topics[i]);
    }
    if (o->action == CG_DELETE_OFFSETS)
        return 0;
    if (o->ngroups != 1)
        return bad(err, errlen, "%s", "--reset-offsets needs exactly one --group");
    /* With --from-file the file names the partitions: a scope given too is
     * not used, as kafka-consumer-groups.sh does. */
    if (o->reset != CG_FROM_FILE && !o->ntopics == !o->all_topics)
        return bad(err, errlen, "%s", "--reset-offsets needs --topic T[:P,...] or --all-topics (one of them)");
    if (o->reset == CG_TO_NONE)
        return bad(err, errlen, "%s", "--reset-offsets needs a scenario: --to-earliest, --to-latest, --to-current, "
                                      "--to-offset N, --shift-by N, --to-datetime T, --by-duration D or "
                                      "--from-file F");
    if (o->dry_run && o->execute)
        return bad(err, errlen, "%s", "give --dry-run or --execute, not both");
    return 0;
}

int cg_parse_args(int argc, char **argv, cg_opts_t *o, char *err, size_t errlen)
{
    *o = (cg_opts_t){.timeout_ms = CG_DEFAULT_TIMEOUT_MS};
    err[0] = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return 1;
        if (parse_arg(o, argc, argv, &i, err, errlen) < 0)
            return -1;
    }
    return check_options(o, err, errlen);
}

int cg_parse_topic(const char *arg, char *topic, size_t n, int32_t *parts, int maxparts, int *nparts)
{
    const char *colon = strchr(arg, ':');
    size_t len = colon ? (size_t)(colon - arg) : strlen(arg);
    *nparts = 0;
    if (len == 0 || len >= n)
        return -1;
    memcpy(topic, arg, len);
    topic[len] = 0;
    if (!colon)
        return 0;
    const char *p = colon + 1;
    do {
        char *end;
        if (!isdigit((unsigned char)*p) || *nparts == maxparts)
            return -1;
        errno = 0;
        long v = strtol(p, &end, 10);
        if (errno || v > INT32_MAX || (*end && *end != ','))
            return -1;
        parts[(*nparts)++] = (int32_t)v;
        p = *end ? end + 1 : end;
        if (*end && !*p)
            return -1;   /* a trailing comma */
    } while (*p);
    return 0;
}

/* ---- --to-datetime ---- */

/* Exactly n digits at s into *v. */
static int digits(const char *s, int n, int *v)
{
    *v = 0;
    for (int i = 0; i < n; i++) {
        if (!isdigit((unsigned char)s[i]))
            return -1;
        *v = *v * 10 + (s[i] - '0');
    }
    return 0;
}

/* "Z", "+HH", "+HHMM", "+HH:MM" (or '-') into seconds east of UTC. */
static int parse_zone(const char *z, long *east)
{
    int hh, mm = 0;
    if (strcmp(z, "Z") == 0) {
        *east = 0;
        return 0;
    }
    if ((z[0] != '+' && z[0] != '-') || digits(z + 1, 2, &hh) < 0)
        return -1;
    const char *rest = z + 3;
    if (*rest == ':')
        rest++;
    if (*rest && (digits(rest, 2, &mm) < 0 || rest[2]))
        return -1;
    if (hh > 18 || mm > 59)
        return -1;
    *east = (z[0] == '-' ? -1 : 1) * (hh * 3600L + mm * 60L);
    return 0;
}

int cg_parse_datetime(const char *s, int64_t *ms)
{
    int year, mon, day, hh, mi, ss, frac;
    if (strlen(s) < 23 || digits(s, 4, &year) < 0 || s[4] != '-' || digits(s + 5, 2, &mon) < 0 || s[7] != '-' ||
        digits(s + 8, 2, &day) < 0 || s[10] != 'T' || digits(s + 11, 2, &hh) < 0 || s[13] != ':' ||
        digits(s + 14, 2, &mi) < 0 || s[16] != ':' || digits(s + 17, 2, &ss) < 0 || s[19] != '.' ||
        digits(s + 20, 3, &frac) < 0)
        return -1;
    if (mon < 1 || mon > 12 || day < 1 || day > 31 || hh > 23 || mi > 59 || ss > 59)
        return -1;
    struct tm tm = {.tm_year = year - 1900, .tm_mon = mon - 1, .tm_mday = day, .tm_hour = hh, .tm_min = mi,
                    .tm_sec = ss, .tm_isdst = -1};
    time_t t;
    if (s[23]) {
        long east;
        if (parse_zone(s + 23, &east) < 0)
            return -1;
        t = timegm(&tm) - east;
    } else {
        t = mktime(&tm);   /* no zone: the local one, as Kafka */
    }
    if (tm.tm_mday != day)
        return -1;   /* a day the month does not have (normalised away) */
    *ms = (int64_t)t * 1000 + frac;
    return 0;
}

/* ---- talking to the cluster ---- */

/* The first bootstrap broker that answers the connection. */
static int session_open(cg_session_t *s, const cg_opts_t *o)
{
    *s = (cg_session_t){.o = o};
    char err[700];
    if (kafka_client_open_any(&s->boot, o->bootstrap, o->timeout_ms, CG_CLIENT_ID, err, sizeof(err)) < 0) {
        cg_error("%s%s", err, "");
        return -1;
    }
    s->boot_open = 1;
    return 0;
}

static void session_close(cg_session_t *s)
{
    if (s->boot_open)
        kafka_client_close(&s->boot);
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* A connection to the group's coordinator, found through the bootstrap
 * broker; one that is not ready yet is asked again until --timeout. */
int cg_open_coordinator(cg_session_t *s, const char *group, kafka_client_t *k, ga_broker_t *node)
{
    uint64_t deadline = clock_mono_ms() + (uint64_t)s->o->timeout_ms;
    for (;;) {
        int16_t error = KERR_NONE;
        if (ga_find_coordinator(&s->boot, group, node, &error) < 0) {
            cg_error("%s%s", s->boot.err, "");
            return -1;
        }
        if (!error)
            break;
        int retriable = error == KERR_COORDINATOR_NOT_AVAILABLE || error == KERR_NOT_COORDINATOR ||
                        error == KERR_COORDINATOR_LOAD_IN_PROGRESS;
        if (!retriable || clock_mono_ms() >= deadline) {
            cg_error("cannot find the coordinator of group '%s': %s", group, ga_error_text(error));
            return -1;
        }
        sleep_ms(RETRY_PAUSE_MS);
    }
    int rc = kafka_client_open(k, node->host, node->port, s->o->timeout_ms, CG_CLIENT_ID);
    if (rc < 0) {
        cg_error("cannot reach the coordinator of group '%s': %s", group, k->err);
        kafka_client_close(k);
    }
    return rc;
}

/* The distinct topics of ps (pointers into it). */
static const char **topics_of(const ga_partitions_t *ps, int *n)
{
    const char **t = malloc(sizeof(*t) * (size_t)(ps->n ? ps->n : 1));
    *n = 0;
    for (int i = 0; t && i < ps->n; i++)
        if (*n == 0 || strcmp(t[*n - 1], ps->v[i].topic) != 0)
            t[(*n)++] = ps->v[i].topic;
    return t;
}

/* Leaders of every partition of ps from the cluster's metadata, then the
 * offsets at each timestamp asked (stamps[0..nstamps)). Partitions of
 * topics the cluster lacks keep leader -1. */
int cg_fill_offsets(cg_session_t *s, ga_partitions_t *ps, const int64_t *stamps, int nstamps)
{
    int ntopics = 0;
    const char **topics = topics_of(ps, &ntopics);
    ga_cluster_t c;
    int rc = topics && ntopics ? ga_metadata(&s->boot, topics, ntopics, &c) : 0;
    free((void *)topics);
    if (!ntopics)
        return 0;
    if (rc < 0) {
        cg_error("%s%s", s->boot.err, "");
        return -1;
    }
    int *which = malloc(sizeof(int) * (size_t)ps->n);
    for (int i = 0; which && i < ps->n; i++) {
        const ga_partition_t *known = ga_partitions_find(&c.parts, ps->v[i].topic, ps->v[i].partition);
        ps->v[i].leader = known ? known->leader : -1;
        which[i] = i;
    }
    for (int k = 0; which && k < nstamps; k++)
        ga_list_offsets_leaders(&c, ps, which, ps->n, stamps[k], s->o->timeout_ms, CG_CLIENT_ID);
    free(which);
    ga_cluster_free(&c);
    return 0;
}

/* ---- output ---- */

/* One line of a table as kafka-consumer-groups.sh prints it: a newline
 * first, then each cell left-aligned in its width, one space between. */
void cg_print_row(const int *widths, const char *const *cells, int n)
{
    putchar('\n');
    for (int i = 0; i < n; i++)
        printf(i ? " %-*s" : "%-*s", widths[i], cells[i]);
}

const char *cg_num(char *buf, size_t n, int64_t v)
{
    if (v < 0)
        return "-";
    snprintf(buf, n, "%lld", (long long)v);
    return buf;
}

static int widest(int at_least, const char *s)
{
    int n = (int)strlen(s);
    return n > at_least ? n : at_least;
}

/* ---- --list ---- */

static int do_list(cg_session_t *s)
{
    ga_cluster_t c;
    if (ga_metadata(&s->boot, NULL, 0, &c) < 0) {
        cg_error("%s%s", s->boot.err, "");
        return EXIT_FAILED;
    }
    ga_listing_t all = {0};
    int rc = EXIT_OK;
    for (int i = 0; i < c.nbrokers; i++) {
        kafka_client_t k;
        int16_t error = KERR_NONE;
        if (kafka_client_open(&k, c.brokers[i].host, c.brokers[i].port, s->o->timeout_ms, CG_CLIENT_ID) < 0 ||
            ga_list_groups(&k, s->o->states, s->o->nstates, &all, &error) < 0) {
            cg_error("cannot list the groups of a broker: %s%s", k.err, "");
            rc = EXIT_FAILED;
        } else if (error) {
            cg_error("cannot list the groups of a broker: %s%s", ga_error_text(error), "");
            rc = EXIT_FAILED;
        }
        kafka_client_close(&k);
    }
    int width = 15;
    for (int i = 0; i < all.n; i++)
        width = widest(width, all.v[i].id);
    if (s->o->state_given)
        printf("%-*s %s\n", width, "GROUP", "STATE");
    for (int i = 0; i < all.n; i++) {
        if (s->o->state_given)
            printf("%-*s %s\n", width, all.v[i].id, all.v[i].state);
        else
            printf("%s\n", all.v[i].id);
    }
    ga_listing_free(&all);
    ga_cluster_free(&c);
    return rc;
}

/* The groups --all-groups stands for: ListGroups of every broker. */
static int all_group_ids(cg_session_t *s, ga_listing_t *out)
{
    ga_cluster_t c;
    *out = (ga_listing_t){0};
    if (ga_metadata(&s->boot, NULL, 0, &c) < 0) {
        cg_error("%s%s", s->boot.err, "");
        return -1;
    }
    int rc = 0;
    for (int i = 0; i < c.nbrokers && rc == 0; i++) {
        kafka_client_t k;
        int16_t error = KERR_NONE;
        rc = kafka_client_open(&k, c.brokers[i].host, c.brokers[i].port, s->o->timeout_ms, CG_CLIENT_ID) < 0 ||
                     ga_list_groups(&k, NULL, 0, out, &error) < 0 || error
                 ? -1
                 : 0;
        if (rc < 0)
            cg_error("cannot list the groups of a broker: %s%s", error ? ga_error_text(error) : k.err, "");
        kafka_client_close(&k);
    }
    ga_cluster_free(&c);
    return rc;
}

/* ---- --describe ---- */

/* kafka-consumer-groups.sh's word on the group's state before its table;
 * 0 when the group exists (and rows follow), -1 when it does not. */
static int state_notice(const char *group, const ga_group_t *g, int rows)
{
    if (strcmp(g->state, "Dead") == 0 || (rows == 0 && strcmp(g->state, "Empty") == 0)) {
        cg_error("Consumer group '%s' does not exist.%s", group, "");
        return -1;
    }
    if (strcmp(g->state, "Empty") == 0)
        fprintf(stderr, "\nConsumer group '%s' has no active members.\n", group);
    else if (strcmp(g->state, "Stable") != 0)
        fprintf(stderr, "\nWarning: Consumer group '%s' is rebalancing.\n", group);
    return 0;
}

typedef struct {
    const ga_partition_t *p;   /* NULL: a member without partitions */
    const ga_member_t *m;      /* NULL: committed, not assigned */
} offset_row_t;

static int by_assigned_count(const void *a, const void *b)
{
    const ga_member_t *x = a, *y = b;
    return (y->assigned.n > x->assigned.n) - (y->assigned.n < x->assigned.n);
}

/* Kafka's order: members with partitions (most first), each partition;
 * members without; then partitions committed but not assigned. */
static int offset_rows(ga_group_t *g, const ga_partitions_t *all, offset_row_t *rows)
{
    int n = 0;
    qsort(g->members, (size_t)g->nmembers, sizeof(*g->members), by_assigned_count);
    for (int i = 0; i < g->nmembers; i++) {
        const ga_member_t *m = &g->members[i];
        for (int k = 0; k < m->assigned.n; k++)
            rows[n++] = (offset_row_t){ga_partitions_find(all, m->assigned.v[k].topic, m->assigned.v[k].partition),
                                       m};
        if (m->assigned.n == 0)
            rows[n++] = (offset_row_t){NULL, m};
    }
    for (int i = 0; i < all->n; i++) {
        int assigned = 0;
        for (int k = 0; k < g->nmembers && !assigned; k++)
            assigned = ga_partitions_find(&g->members[k].assigned, all->v[i].topic, all->v[i].partition) != NULL;
        if (!assigned)
            rows[n++] = (offset_row_t){&all->v[i], NULL};
    }
    return n;
}

static void print_offsets(const char *group, const offset_row_t *rows, int n)
{
    int w[9] = {widest(15, group), 15, 10, 15, 15, 15, 15, 15, 0};
    for (int i = 0; i < n; i++) {
        w[1] = widest(w[1], rows[i].p ? rows[i].p->topic : "-");
        w[6] = widest(w[6], rows[i].m ? rows[i].m->member_id : "-");
        w[7] = widest(w[7], rows[i].m ? rows[i].m->host : "-");
    }
    const char *head[9] = {"GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID",
                           "HOST", "CLIENT-ID"};
    cg_print_row(w, head, 9);
    for (int i = 0; i < n; i++) {
        const ga_partition_t *p = rows[i].p;
        char part[16], cur[24], end[24], lag[24];
        int known = p && p->committed >= 0 && p->latest >= 0;
        const char *cells[9] = {group,
                                p ? p->topic : "-",
                                p ? cg_num(part, sizeof(part), p->partition) : "-",
                                p ? cg_num(cur, sizeof(cur), p->committed) : "-",
                                p ? cg_num(end, sizeof(end), p->latest) : "-",
                                known ? cg_num(lag, sizeof(lag), p->latest > p->committed ? p->latest - p->committed : 0)
                                      : "-",
                                rows[i].m ? rows[i].m->member_id : "-",
                                rows[i].m ? rows[i].m->host : "-",
                                rows[i].m ? rows[i].m->client_id : "-"};
        cg_print_row(w, cells, 9);
    }
    putchar('\n');
}

static void print_members(const char *group, const ga_group_t *g, int verbose)
{
    int w[7] = {widest(15, group), 15, 17, 15, 15, 11, 0};
    for (int i = 0; i < g->nmembers; i++) {
        w[1] = widest(w[1], g->members[i].member_id);
        w[2] = widest(w[2], g->members[i].instance_id ? g->members[i].instance_id : "-");
        w[3] = widest(w[3], g->members[i].host);
        w[4] = widest(w[4], g->members[i].client_id);
    }
    const char *head[7] = {"GROUP", "CONSUMER-ID", "GROUP-INSTANCE-ID", "HOST", "CLIENT-ID", "#PARTITIONS",
                           "ASSIGNMENT"};
    cg_print_row(w, head, verbose ? 7 : 6);
    for (int i = 0; i < g->nmembers; i++) {
        const ga_member_t *m = &g->members[i];
        char count[16], assignment[1024] = "-";
        size_t used = 0;
        for (int k = 0; k < m->assigned.n && used < sizeof(assignment) - 1; k++)
            used += (size_t)snprintf(assignment + used, sizeof(assignment) - used, "%s%s(%d)", k ? "," : "",
                                     m->assigned.v[k].topic, (int)m->assigned.v[k].partition);
        const char *cells[7] = {group, m->member_id, m->instance_id ? m->instance_id : "-", m->host, m->client_id,
                                cg_num(count, sizeof(count), m->assigned.n), assignment};
        cg_print_row(w, cells, verbose ? 7 : 6);
    }
    putchar('\n');
}

static void print_state(const char *group, const ga_group_t *g, const ga_broker_t *node)
{
    char coordinator[320];
    snprintf(coordinator, sizeof(coordinator), "%s:%d (%d)", node->host, node->port, (int)node->id);
    int w[5] = {widest(15, group), widest(25, coordinator), 20, 15, 0};
    const char *head[5] = {"GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS"};
    char members[16];
    const char *cells[5] = {group, coordinator, g->protocol, g->state, cg_num(members, sizeof(members), g->nmembers)};
    cg_print_row(w, head, 5);
    cg_print_row(w, cells, 5);
    putchar('\n');
}

/* The group's committed offsets, and every assigned partition, in *all. */
static int describe_offsets(cg_session_t *s, kafka_client_t *k, const char *group, ga_group_t *g)
{
    ga_partitions_t all = {0};
    int16_t error = KERR_NONE;
    if (ga_offset_fetch(k, group, &all, &error) < 0 || error) {
        cg_error("cannot read the offsets of group '%s': %s", group, error ? ga_error_text(error) : k->err);
        ga_partitions_free(&all);
        return EXIT_FAILED;
    }
    int nrows = all.n;
    for (int i = 0; i < g->nmembers; i++) {
        nrows += g->members[i].assigned.n + 1;
        for (int j = 0; j < g->members[i].assigned.n; j++)
            ga_partitions_get(&all, g->members[i].assigned.v[j].topic, g->members[i].assigned.v[j].partition);
    }
    const int64_t latest = GA_LATEST;
    offset_row_t *rows = malloc(sizeof(*rows) * (size_t)(nrows ? nrows : 1));
    int rc = rows && cg_fill_offsets(s, &all, &latest, 1) == 0 ? EXIT_OK : EXIT_FAILED;
    int n = rc == EXIT_OK ? offset_rows(g, &all, rows) : 0;
    if (rc == EXIT_OK && state_notice(group, g, n) < 0)
        rc = EXIT_FAILED;
    else if (rc == EXIT_OK && n > 0)
        print_offsets(group, rows, n);
    free(rows);
    ga_partitions_free(&all);
    return rc;
}

static int describe_one(cg_session_t *s, const char *group)
{
    kafka_client_t k;
    ga_broker_t node = {0};
    ga_group_t g = {0};
    if (cg_open_coordinator(s, group, &k, &node) < 0) {
        free(node.host);
        return EXIT_FAILED;
    }
    int rc = EXIT_FAILED;
    if (ga_describe_group(&k, group, &g) < 0)
        cg_error("%s%s", k.err, "");
    else if (g.error)
        cg_error("cannot describe group '%s': %s", group, ga_error_text(g.error));
    else if (s->o->show == CG_SHOW_OFFSETS)
        rc = describe_offsets(s, &k, group, &g);
    else if (state_notice(group, &g, s->o->show == CG_SHOW_STATE ? 1 : g.nmembers) < 0)
        rc = strcmp(g.state, "Dead") == 0 ? EXIT_FAILED : EXIT_OK;   /* Empty: no members to show */
    else if (s->o->show == CG_SHOW_MEMBERS)
        rc = (print_members(group, &g, s->o->verbose), EXIT_OK);
    else
        rc = (print_state(group, &g, &node), EXIT_OK);
    ga_group_free(&g);
    free(node.host);
    kafka_client_close(&k);
    return rc;
}

/* ---- --delete ---- */

static int do_delete(cg_session_t *s, const char *const *groups, int n)
{
    int16_t *errors = calloc((size_t)(n ? n : 1), sizeof(*errors));
    int failed = 0;
    for (int i = 0; errors && i < n; i++) {
        kafka_client_t k;
        ga_broker_t node = {0};
        int opened = cg_open_coordinator(s, groups[i], &k, &node) == 0;
        if (!opened) {
            errors[i] = KERR_COORDINATOR_NOT_AVAILABLE;
        } else if (ga_delete_group(&k, groups[i], &errors[i]) < 0) {
            cg_error("%s%s", k.err, "");
            errors[i] = KERR_COORDINATOR_NOT_AVAILABLE;
        }
        if (opened)
            kafka_client_close(&k);
        free(node.host);
        failed += errors[i] != KERR_NONE;
    }
    if (!errors)
        return EXIT_FAILED;
    if (!failed) {
        printf("Deletion of requested consumer groups (");
        for (int i = 0; i < n; i++)
            printf("%s'%s'", i ? ", " : "", groups[i]);
        printf(") was successful.\n");
    } else {
        fprintf(stderr, "Error: Deletion of some consumer groups failed:\n");
        for (int i = 0; i < n; i++)
            if (errors[i])
                printf("* Group '%s' could not be deleted due to: %s\n", groups[i], ga_error_text(errors[i]));
        if (failed < n) {
            printf("\nThese consumer groups were deleted successfully: ");
            for (int i = 0, k = 0; i < n; i++)
                if (!errors[i])
                    printf("%s'%s'", k++ ? ", " : "", groups[i]);
            printf("\n");
        }
    }
    free(errors);
    return failed ? EXIT_FAILED : EXIT_OK;
}

/* ---- --delete-offsets ---- */

/* The partitions the --topic options name into ps: those listed, or every
 * partition of the topic; a topic the cluster lacks goes into rows as
 * partition -1 with UNKNOWN_TOPIC_OR_PARTITION, as Kafka's tool reports it. */
static int delete_offsets_partitions(cg_session_t *s, ga_partitions_t *ps, ga_partitions_t *rows)
{
    const char *whole[CG_NAMES_MAX];
    char topics[CG_NAMES_MAX][256];
    int32_t listed[CG_PARTITIONS_MAX];
    int nwhole = 0, nparts;
    for (int i = 0; i < s->o->ntopics; i++) {
        cg_parse_topic(s->o->topics[i], topics[i], sizeof(topics[i]), listed, CG_PARTITIONS_MAX, &nparts);
        for (int p = 0; p < nparts; p++)
            ga_partitions_get(ps, topics[i], listed[p]);
        if (nparts == 0)
            whole[nwhole++] = topics[i];
    }
    ga_cluster_t c;
    if (nwhole == 0)
        return 0;
    if (ga_metadata(&s->boot, whole, nwhole, &c) < 0) {
        cg_error("%s%s", s->boot.err, "");
        return -1;
    }
    for (int i = 0; i < c.parts.n; i++)
        ga_partitions_get(ps, c.parts.v[i].topic, c.parts.v[i].partition);
    for (int i = 0; i < c.nmissing; i++) {
        ga_partition_t *p = ga_partitions_get(rows, c.missing[i], -1);
        if (p)
            p->error = KERR_UNKNOWN_TOPIC_OR_PARTITION;
    }
    ga_cluster_free(&c);
    return 0;
}

/* kafka-consumer-groups.sh's line on the request as a whole. */
static void delete_offsets_verdict(const cg_opts_t *o, int16_t top)
{
    const char *group = o->groups[0];
    if (top == KERR_NONE) {
        printf("Request succeed for deleting offsets with topic ");
        for (int i = 0; i < o->ntopics; i++)
            printf("%s%s", i ? ", " : "", o->topics[i]);
        printf(" group %s\n", group);
    } else if (top == KERR_INVALID_GROUP_ID) {
        cg_error("'%s' is not valid.%s", group, "");
    } else if (top == KERR_GROUP_ID_NOT_FOUND) {
        cg_error("'%s' does not exist.%s", group, "");
    } else if (top == KERR_NON_EMPTY_GROUP) {
        cg_error("Deleting offsets of a consumer group '%s' is forbidden if the group is not empty.%s", group, "");
    } else if (top == KERR_GROUP_SUBSCRIBED_TO_TOPIC || top == KERR_UNKNOWN_TOPIC_OR_PARTITION) {
        cg_error("Encounter some partition level error, see the follow-up details:%s%s", "", "");
    } else {
        cg_error("Encounter some unknown error: %s%s", ga_error_text(top), "");
    }
}

/* Kafka's tool orders the rows by topic and partition joined as one string
 * ("t10" before "t2"). */
static int by_joined_name(const void *a, const void *b)
{
    const ga_partition_t *x = *(const ga_partition_t *const *)a, *y = *(const ga_partition_t *const *)b;
    char nx[300], ny[300];
    snprintf(nx, sizeof(nx), "%s%d", x->topic, (int)x->partition);
    snprintf(ny, sizeof(ny), "%s%d", y->topic, (int)y->partition);
    return strcmp(nx, ny);
}

static void print_delete_offsets(const ga_partitions_t *rows)
{
    int w[3] = {30, 15, 15};
    const char *head[3] = {"TOPIC", "PARTITION", "STATUS"};
    const ga_partition_t **order = malloc(sizeof(*order) * (size_t)(rows->n ? rows->n : 1));
    for (int i = 0; order && i < rows->n; i++)
        order[i] = &rows->v[i];
    if (order)
        qsort(order, (size_t)rows->n, sizeof(*order), by_joined_name);
    cg_print_row(w, head, 3);
    for (int i = 0; i < rows->n; i++) {
        const ga_partition_t *p = order ? order[i] : &rows->v[i];
        char part[16], status[300];
        snprintf(status, sizeof(status), "Error: %s", ga_error_text(p->error));
        const char *cells[3] = {p->topic, p->partition >= 0 ? cg_num(part, sizeof(part), p->partition) : "Not Provided",
                                p->error ? status : "Successful"};
        cg_print_row(w, cells, 3);
    }
    putchar('\n');
    free(order);
}

static int do_delete_offsets(cg_session_t *s)
{
    const char *group = s->o->groups[0];
    ga_partitions_t ps = {0}, rows = {0};
    kafka_client_t k;
    ga_broker_t node = {0};
    int16_t top = KERR_NONE;
    int rc = EXIT_FAILED;
    if (delete_offsets_partitions(s, &ps, &rows) < 0 || cg_open_coordinator(s, group, &k, &node) < 0)
        goto out;
    if (ga_offset_delete(&k, group, &ps, &top) < 0) {
        cg_error("%s%s", k.err, "");
    } else {
        rc = EXIT_OK;
        for (int i = 0; i < ps.n; i++) {
            ga_partition_t *p = ga_partitions_get(&rows, ps.v[i].topic, ps.v[i].partition);
            if (p)
                p->error = ps.v[i].error;
            if (!top && ps.v[i].error)
                top = ps.v[i].error;   /* the admin client fails the whole call with it */
        }
        for (int i = 0; i < rows.n; i++)
            rc = rows.v[i].error ? EXIT_FAILED : rc;
        delete_offsets_verdict(s->o, top);
        print_delete_offsets(&rows);
    }
    kafka_client_close(&k);
out:
    free(node.host);
    ga_partitions_free(&ps);
    ga_partitions_free(&rows);
    return rc;
}

/* --describe and --delete of the groups named, or of every group. */
static int for_groups(cg_session_t *s)
{
    ga_listing_t all = {0};
    const char **names = (const char **)s->o->groups;
    int n = s->o->ngroups;
    if (s->o->all_groups) {
        if (all_group_ids(s, &all) < 0)
            return EXIT_FAILED;
        names = malloc(sizeof(*names) * (size_t)(all.n ? all.n : 1));
        for (int i = 0; names && i < all.n; i++)
            names[i] = all.v[i].id;
        n = names ? all.n : 0;
    }
    int rc = EXIT_OK;
    if (s->o->action == CG_DELETE && n > 0)
        rc = do_delete(s, names, n);
    for (int i = 0; s->o->action == CG_DESCRIBE && i < n; i++)
        if (describe_one(s, names[i]) != EXIT_OK)
            rc = EXIT_FAILED;
    if (s->o->all_groups)
        free((void *)names);
    ga_listing_free(&all);
    return rc;
}

int consumer_groups_main(int argc, char **argv)
{
    cg_opts_t o;
    char err[400];
    int rc = cli_usage_exit(cg_parse_args(argc, argv, &o, err, sizeof(err)), "consumer-groups", err, usage);
    if (rc >= 0)
        return rc;
    cg_session_t s;
    if (session_open(&s, &o) < 0)
        return EXIT_FAILED;
    switch (o.action) {
    case CG_LIST:
        rc = do_list(&s);
        break;
    case CG_RESET:
        rc = cg_do_reset(&s);
        break;
    case CG_DELETE_OFFSETS:
        rc = do_delete_offsets(&s);
        break;
    default:
        rc = for_groups(&s);
        break;
    }
    session_close(&s);
    fflush(stdout);
    return rc;
}
