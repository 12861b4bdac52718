/* ensemble_config.c -- parse and write an ensemble's membership as ZooKeeper 3.8 does.
 *
 * The answers to bad input follow ZooKeeper 3.8's PrepRequestProcessor for a
 * reconfig request: what its QuorumServer rejects with a ConfigException
 * (a malformed line, an unknown role, equal quorum and election ports, a
 * non-numeric port) is ZBADARGUMENTS; what throws a plain Java runtime
 * exception there (a port outside 0..65535, a non-numeric server id or
 * leaving id, observers without a quorum of participants) reaches its
 * catch-all and is ZMARSHALLINGERROR. Both go back to the client unchanged, so
 * a tool that tells them apart sees the same code from kipper as from
 * ZooKeeper (tests/unit/test_ensemble_config.c lists every case). */
#include "keeper/zab/ensemble_config.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "keeper/data/proto.h"

/* Longest single server string handled (a 255-byte host twice plus ports). */
#define TOKEN_MAX 1024

static int fail(int code, char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return code;
}

/* [begin, end) with surrounding blanks removed. */
static void trim(const char **b, const char **e)
{
    while (*b < *e && isspace((unsigned char)**b))
        (*b)++;
    while (*e > *b && isspace((unsigned char)(*e)[-1]))
        (*e)--;
}

/* Java's Integer.parseInt / Long.parseLong over [b, e): optional sign, decimal
 * digits, no blanks. 0 and *out, or -1 (a NumberFormatException). */
static int parse_long(const char *b, const char *e, int base, int64_t *out)
{
    int neg = 0;
    if (b < e && (*b == '+' || *b == '-'))
        neg = *b++ == '-';
    if (b == e)
        return -1;
    uint64_t v = 0;
    for (; b < e; b++) {
        int d;
        if (*b >= '0' && *b <= '9')
            d = *b - '0';
        else if (base == 16 && *b >= 'a' && *b <= 'f')
            d = *b - 'a' + 10;
        else if (base == 16 && *b >= 'A' && *b <= 'F')
            d = *b - 'A' + 10;
        else
            return -1;
        if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
            return -1;
        v = v * (uint64_t)base + (uint64_t)d;
    }
    if (v > (uint64_t)INT64_MAX + (neg ? 1u : 0u))
        return -1;
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return 0;
}

/* Up to max fields of [b, e) split at ':' as Java's String.split(":") does
 * (trailing empty fields dropped), with ZooKeeper's ConfigUtils.getHostAndPort
 * reading of a leading "[v6 address]". Returns the count (max + 1: more), or
 * -1 for an unmatched '['. */
typedef struct { const char *b, *e; } span_t;
static int split_host_port(const char *b, const char *e, span_t *f, int max)
{
    int n = 0;
    if (b < e && *b == '[') {
        const char *close = memchr(b, ']', (size_t)(e - b));
        if (!close || close + 2 == e)
            return -1;
        f[n++] = (span_t){b + 1, close};
        if (close + 1 >= e)
            return n;
        b = close + 2;   /* ZooKeeper skips the character after ']' unread */
    }
    const char *s = b;
    for (const char *p = b;; p++) {
        if (p == e || *p == ':') {
            if (n >= max)
                return max + 1;
            f[n++] = (span_t){s, p};
            if (p == e)
                break;
            s = p + 1;
        }
    }
    while (n > 0 && f[n - 1].b == f[n - 1].e)
        n--;
    return n;
}

/* A port as ZooKeeper reads one: a ConfigException when not a number
 * (ZBADARGUMENTS), InetSocketAddress's IllegalArgumentException when outside
 * 0..65535 (ZMARSHALLINGERROR). */
static int parse_port(span_t s, int *port, const char *what, char *err, size_t errlen)
{
    int64_t v;
    if (parse_long(s.b, s.e, 10, &v) != 0)
        return fail(ZBADARGUMENTS, err, errlen, "%s port '%.*s' is not a number", what,
                    (int)(s.e - s.b > 40 ? 40 : s.e - s.b), s.b);
    if (v < 0 || v > 65535)
        return fail(ZMARSHALLINGERROR, err, errlen, "%s port %" PRId64 " is out of range", what, v);
    *port = (int)v;
    return 0;
}

static int copy_host(char *dst, size_t cap, span_t s, char *err, size_t errlen)
{
    size_t len = (size_t)(s.e - s.b);
    if (len == 0)
        return fail(ZBADARGUMENTS, err, errlen, "an empty host name");
    if (len >= cap)
        return fail(ZBADARGUMENTS, err, errlen, "a host name longer than %zu bytes", cap - 1);
    /* Blanks, control bytes and the separators of the lines a host is written
     * into would read back as another line or field: no host name has them. */
    for (const char *p = s.b; p < s.e; p++)
        if ((unsigned char)*p <= ' ' || *p == 0x7f || strchr(",;=|[]", *p))
            return fail(ZBADARGUMENTS, err, errlen, "a host name with the character 0x%02x",
                        (unsigned)(unsigned char)*p);
    memcpy(dst, s.b, len);
    dst[len] = '\0';
    return 0;
}

static int member_parse_span(ensemble_member_t *m, int id, const char *b, const char *e, char *err, size_t errlen)
{
    static const char wrong[] = "does not have the form host:port:port[:type][;[host:]port]";
    memset(m, 0, sizeof(*m));
    m->id = id;
    trim(&b, &e);
    /* ';' splits the server part from the client part; Java's split drops a
     * trailing empty part, so "h:1:2;" is a line without a client part. */
    const char *semi = memchr(b, ';', (size_t)(e - b));
    const char *srv_e = semi ? semi : e;
    if (semi) {
        const char *cb = semi + 1, *ce = e;
        if (memchr(cb, ';', (size_t)(ce - cb)))
            return fail(ZBADARGUMENTS, err, errlen, "server.%d %s", id, wrong);
        if (cb < ce) {
            span_t cf[3];
            int n = split_host_port(cb, ce, cf, 2);
            if (n < 1 || n > 2)
                return fail(ZBADARGUMENTS, err, errlen, "server.%d %s", id, wrong);
            int rc = parse_port(cf[n - 1], &m->client_port, "client", err, errlen);
            if (rc)
                return rc;
            if (n == 2) {
                if ((rc = copy_host(m->client_addr, sizeof(m->client_addr), cf[0], err, errlen)) != 0)
                    return rc;
            } else {
                strcpy(m->client_addr, "0.0.0.0");
            }
        }
    }
    if (memchr(b, '|', (size_t)(srv_e - b)))
        return fail(ZBADARGUMENTS, err, errlen,
                    "server.%d: multiple addresses are not supported (ZooKeeper's multiAddress.enabled)", id);
    span_t f[5];
    int n = split_host_port(b, srv_e, f, 4);
    if (n < 3 || n > 4)
        return fail(ZBADARGUMENTS, err, errlen, "server.%d %s", id, wrong);
    int rc = copy_host(m->host, sizeof(m->host), f[0], err, errlen);
    if (!rc)
        rc = parse_port(f[1], &m->quorum_port, "quorum", err, errlen);
    if (!rc)
        rc = parse_port(f[2], &m->election_port, "election", err, errlen);
    if (rc)
        return rc;
    if (m->quorum_port == m->election_port)
        return fail(ZBADARGUMENTS, err, errlen, "server.%d: quorum and election port must be different", id);
    if (n == 4) {
        const char *rb = f[3].b, *re = f[3].e;
        trim(&rb, &re);
        size_t len = (size_t)(re - rb);
        if (len == 8 && strncasecmp(rb, "observer", 8) == 0)
            m->observer = 1;
        else if (!(len == 11 && strncasecmp(rb, "participant", 11) == 0))
            return fail(ZBADARGUMENTS, err, errlen, "server.%d: unrecognised peer type '%.*s'", id,
                        (int)(len > 40 ? 40 : len), rb);
    }
    return 0;
}

int ensemble_member_parse(ensemble_member_t *m, int id, const char *value, char *err, size_t errlen)
{
    return member_parse_span(m, id, value, value + strlen(value), err, errlen);
}

/* The id of "server.<id>" (or, as ZooKeeper's incremental reconfig reads a
 * joiner, whatever follows the key's last '.'). */
static int parse_id(const char *b, const char *e, int *id, char *err, size_t errlen)
{
    int64_t v;
    if (parse_long(b, e, 10, &v) != 0)
        return fail(ZMARSHALLINGERROR, err, errlen, "server id '%.*s' is not a number",
                    (int)(e - b > 40 ? 40 : e - b), b);
    if (v < 0 || v > INT32_MAX)
        return fail(ZBADARGUMENTS, err, errlen, "server id %" PRId64 " is out of range", v);
    *id = (int)v;
    return 0;
}

int ensemble_member_parse_line(ensemble_member_t *m, const char *line, char *err, size_t errlen)
{
    const char *b = line, *e = line + strlen(line);
    const char *eq = memchr(b, '=', (size_t)(e - b));
    /* ZooKeeper splits a joiner at '=' and wants exactly two non-empty parts. */
    if (!eq || memchr(eq + 1, '=', (size_t)(e - eq - 1)))
        return fail(ZBADARGUMENTS, err, errlen, "Wrong format of server string");
    const char *kb = b, *ke = eq, *vb = eq + 1, *ve = e;
    trim(&kb, &ke);
    trim(&vb, &ve);
    if (kb == ke || vb == ve)
        return fail(ZBADARGUMENTS, err, errlen, "Wrong format of server string");
    const char *dot = ke;
    while (dot > kb && dot[-1] != '.')
        dot--;
    int id;
    int rc = parse_id(dot, ke, &id, err, errlen);
    return rc ? rc : member_parse_span(m, id, vb, ve, err, errlen);
}

static size_t host_out(char *out, size_t cap, size_t at, const char *host)
{
    int w = snprintf(at < cap ? out + at : NULL, at < cap ? cap - at : 0, strchr(host, ':') ? "[%s]" : "%s", host);
    return w > 0 ? (size_t)w : 0;
}

size_t ensemble_member_format(const ensemble_member_t *m, char *out, size_t cap)
{
    if (cap)
        out[0] = '\0';
    size_t at = host_out(out, cap, 0, m->host);
    int w = snprintf(at < cap ? out + at : NULL, at < cap ? cap - at : 0, ":%d:%d:%s", m->quorum_port,
                     m->election_port, m->observer ? "observer" : "participant");
    at += w > 0 ? (size_t)w : 0;
    if (m->client_addr[0]) {
        if (at < cap)
            snprintf(out + at, cap - at, ";");
        at++;
        at += host_out(out, cap, at, m->client_addr);
        w = snprintf(at < cap ? out + at : NULL, at < cap ? cap - at : 0, ":%d", m->client_port);
        at += w > 0 ? (size_t)w : 0;
    }
    return at;
}

void ensemble_version_hex(int64_t version, char *out, size_t cap)
{
    /* Java's Long.toHexString: two's complement for a negative value. */
    snprintf(out, cap, "%" PRIx64, (uint64_t)version);
}

/* Appends text at *at, keeping out NUL-terminated; the length counts on past cap. */
static void put(char *out, size_t cap, size_t *at, const char *s)
{
    size_t len = strlen(s);
    if (*at < cap) {
        size_t room = cap - *at - 1;
        size_t n = len < room ? len : room;
        memcpy(out + *at, s, n);
        out[*at + n] = '\0';
    }
    *at += len;
}

static void member_line(const ensemble_member_t *m, char *line, size_t cap)
{
    int w = snprintf(line, cap, "server.%d=", m->id);
    if (w > 0 && (size_t)w < cap)
        ensemble_member_format(m, line + w, cap - (size_t)w);
}

/* java.util.HashMap's table size when filled one put at a time from empty:
 * 16, doubled whenever the count passes three quarters of it. */
static int default_table_size(int n)
{
    int cap = 16;
    while (n > cap / 4 * 3)
        cap *= 2;
    return cap;
}

/* HashMap.hash of a Long key below 2^32: its int value with the high half folded in. */
static unsigned bucket_of(int id, int table)
{
    uint32_t h = (uint32_t)id;
    return (h ^ (h >> 16)) & (uint32_t)(table - 1);
}

typedef struct { unsigned bucket; int rank; int index; } slot_t;

static int cmp_slot(const void *a, const void *b)
{
    const slot_t *x = a, *y = b;
    if (x->bucket != y->bucket)
        return x->bucket < y->bucket ? -1 : 1;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* idx := member indexes in the order ZooKeeper's HashMap iterates them. */
static void map_order(const ensemble_config_t *c, int *idx)
{
    slot_t s[ENSEMBLE_MAX_MEMBERS];
    int table = c->hash_cap > 0 ? c->hash_cap : default_table_size(c->n);
    for (int i = 0; i < c->n; i++)
        s[i] = (slot_t){bucket_of(c->members[i].id, table), c->members[i].rank, i};
    qsort(s, (size_t)c->n, sizeof(s[0]), cmp_slot);
    for (int i = 0; i < c->n; i++)
        idx[i] = s[i].index;
}

/* QuorumMaj.toString: every member's line with '\n' in its map's order, then version=<hex>. */
size_t ensemble_config_format(const ensemble_config_t *c, char *out, size_t cap)
{
    size_t at = 0;
    char line[700];
    int idx[ENSEMBLE_MAX_MEMBERS];
    map_order(c, idx);
    if (cap)
        out[0] = '\0';
    for (int i = 0; i < c->n; i++) {
        member_line(&c->members[idx[i]], line, sizeof(line));
        put(out, cap, &at, line);
        put(out, cap, &at, "\n");
    }
    char hex[24];
    ensemble_version_hex(c->version, hex, sizeof(hex));
    put(out, cap, &at, "version=");
    put(out, cap, &at, hex);
    return at;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* QuorumPeerConfig.writeDynamicConfig: the lines sorted as strings (so
 * server.10 before server.2), joined by '\n' with none after the last; the
 * version line only in zoo.cfg.dynamic.next. */
size_t ensemble_config_format_file(const ensemble_config_t *c, int with_version, char *out, size_t cap)
{
    char buf[ENSEMBLE_MAX_MEMBERS + 1][700];
    char *sorted[ENSEMBLE_MAX_MEMBERS + 1];
    int n = 0;
    for (int i = 0; i < c->n && i < ENSEMBLE_MAX_MEMBERS; i++) {
        member_line(&c->members[i], buf[n], sizeof(buf[n]));
        sorted[n] = buf[n];
        n++;
    }
    if (with_version) {
        char hex[24];
        ensemble_version_hex(c->version, hex, sizeof(hex));
        snprintf(buf[n], sizeof(buf[n]), "version=%s", hex);
        sorted[n] = buf[n];
        n++;
    }
    qsort(sorted, (size_t)n, sizeof(sorted[0]), cmp_str);
    size_t at = 0;
    if (cap)
        out[0] = '\0';
    for (int i = 0; i < n; i++) {
        if (i)
            put(out, cap, &at, "\n");
        put(out, cap, &at, sorted[i]);
    }
    return at;
}

int ensemble_config_put(ensemble_config_t *c, const ensemble_member_t *m)
{
    int rank = 0;
    for (int j = 0; j < c->n; j++)
        if (c->members[j].rank >= rank)
            rank = c->members[j].rank + 1;
    int i = 0;
    while (i < c->n && c->members[i].id < m->id)
        i++;
    if (i < c->n && c->members[i].id == m->id) {
        c->members[i] = *m;
        c->members[i].rank = rank;
        return 0;
    }
    if (c->n >= ENSEMBLE_MAX_MEMBERS)
        return -1;
    memmove(&c->members[i + 1], &c->members[i], (size_t)(c->n - i) * sizeof(c->members[0]));
    c->members[i] = *m;
    c->members[i].rank = rank;
    c->n++;
    return 0;
}

int ensemble_config_remove(ensemble_config_t *c, int id)
{
    for (int i = 0; i < c->n; i++)
        if (c->members[i].id == id) {
            memmove(&c->members[i], &c->members[i + 1], (size_t)(c->n - i - 1) * sizeof(c->members[0]));
            c->n--;
            return 0;
        }
    return -1;
}

const ensemble_member_t *ensemble_config_find(const ensemble_config_t *c, int id)
{
    for (int i = 0; i < c->n; i++)
        if (c->members[i].id == id)
            return &c->members[i];
    return NULL;
}

int ensemble_config_voters(const ensemble_config_t *c)
{
    int v = 0;
    for (int i = 0; i < c->n; i++)
        v += !c->members[i].observer;
    return v;
}

static int same_member(const ensemble_member_t *a, const ensemble_member_t *b)
{
    return a->id == b->id && a->observer == b->observer && a->quorum_port == b->quorum_port &&
           a->election_port == b->election_port && a->client_port == b->client_port &&
           strcmp(a->host, b->host) == 0 && strcmp(a->client_addr, b->client_addr) == 0;
}

int ensemble_config_same_members(const ensemble_config_t *a, const ensemble_config_t *b)
{
    if (a->n != b->n)
        return 0;
    for (int i = 0; i < a->n; i++)
        if (!same_member(&a->members[i], &b->members[i]))
            return 0;
    return 1;
}

/* One "key=value" line read as java.util.Properties reads it (the key ends at
 * the first '=', ':' or blank), then as QuorumMaj takes its keys. strict: the
 * reconfig request's new members and a dynamic file, where ZooKeeper refuses
 * any key but server.N and version. */
static int config_line(ensemble_config_t *c, const char *b, const char *e, int strict, int *saw_version,
                       char *err, size_t errlen)
{
    trim(&b, &e);
    if (b == e || *b == '#' || *b == '!')
        return 0;
    const char *ke = b;
    while (ke < e && *ke != '=' && *ke != ':' && !isspace((unsigned char)*ke))
        ke++;
    const char *vb = ke;
    while (vb < e && isspace((unsigned char)*vb))
        vb++;
    if (vb < e && (*vb == '=' || *vb == ':'))
        vb++;
    size_t klen = (size_t)(ke - b);
    if (klen > 7 && strncmp(b, "server.", 7) == 0) {
        int id;
        int rc = parse_id(b + 7, ke, &id, err, errlen);
        if (rc)
            return rc;
        ensemble_member_t m;
        if ((rc = member_parse_span(&m, id, vb, e, err, errlen)) != 0)
            return rc;
        /* Properties keeps the last of two lines with one key: so does ZooKeeper. */
        if (ensemble_config_put(c, &m) != 0)
            return fail(ZBADARGUMENTS, err, errlen, "more than %d members", ENSEMBLE_MAX_MEMBERS);
        return 0;
    }
    if (klen == 7 && strncmp(b, "version", 7) == 0) {
        const char *ve = e;
        int64_t v;
        /* A version is a zxid: never negative (ZooKeeper could not read back
         * the 16 hex digits it would write for one). */
        if (parse_long(vb, ve, 16, &v) != 0 || v < 0)
            return fail(ZMARSHALLINGERROR, err, errlen, "version '%.*s' is not hexadecimal",
                        (int)(ve - vb > 40 ? 40 : ve - vb), vb);
        c->version = v;
        *saw_version = 1;
        return 0;
    }
    if ((klen >= 5 && strncmp(b, "group", 5) == 0) || (klen >= 6 && strncmp(b, "weight", 6) == 0))
        return fail(ZBADARGUMENTS, err, errlen, "hierarchical quorums (%.*s) are not supported by kipper",
                    (int)(klen > 40 ? 40 : klen), b);
    if (strict)
        return fail(ZBADARGUMENTS, err, errlen, "Unrecognised parameter: %.*s", (int)(klen > 60 ? 60 : klen), b);
    return 0;
}

static int config_text(ensemble_config_t *c, const char *text, size_t len, int comma_too, int strict,
                       int *saw_version, char *err, size_t errlen)
{
    memset(c, 0, sizeof(*c));
    *saw_version = 0;
    const char *p = text, *end = text + len;
    while (p < end) {
        const char *q = p;
        while (q < end && *q != '\n' && *q != '\r' && !(comma_too && *q == ','))
            q++;
        if (memchr(p, '\0', (size_t)(q - p)))
            return fail(ZBADARGUMENTS, err, errlen, "a NUL byte in the configuration");
        int rc = config_line(c, p, q, strict, saw_version, err, errlen);
        if (rc)
            return rc;
        p = q + 1;
    }
    return 0;
}

int ensemble_config_parse(ensemble_config_t *c, const char *text, size_t len, char *err, size_t errlen)
{
    int saw_version;
    int rc = config_text(c, text, len, 0, 1, &saw_version, err, errlen);
    return rc ? -1 : 0;
}

/* QuorumPeerConfig.parseDynamicConfig's checks on the participants, then
 * PrepRequestProcessor's "at least 1 follower" (its "at least 2" under
 * standaloneEnabled=true is the caller's: prep.c). */
static int check_voters(const ensemble_config_t *next, char *err, size_t errlen)
{
    int voters = ensemble_config_voters(next), observers = next->n - voters;
    if (voters == 0 && observers > 0)
        return fail(ZMARSHALLINGERROR, err, errlen, "Observers w/o participants is an invalid configuration");
    if (voters == 1 && observers > 0)
        return fail(ZMARSHALLINGERROR, err, errlen, "Observers w/o quorum is an invalid configuration");
    if (voters < 1)
        return fail(ZBADARGUMENTS, err, errlen, "Reconfig failed - new configuration must include at least 1 follower");
    return 0;
}

int ensemble_config_nonincremental(const char *new_members, ensemble_config_t *next, char *err, size_t errlen)
{
    int saw_version;
    int rc = config_text(next, new_members, strlen(new_members), 1, 1, &saw_version, err, errlen);
    if (rc)
        return rc;
    next->version = 0;
    return check_voters(next, err, errlen);
}

static int is_special_host(const char *h)
{
    /* QuorumServer.excludedSpecialAddresses: wildcard and loopback addresses
     * never conflict. Host names are compared as written (no resolving here). */
    return strncmp(h, "127.", 4) == 0 || strcmp(h, "0.0.0.0") == 0 || strcmp(h, "::") == 0 ||
           strcmp(h, "::1") == 0 || strcasecmp(h, "localhost") == 0 || h[0] == '\0';
}

static int addr_conflict(const ensemble_member_t *a, const ensemble_member_t *b, char *err, size_t errlen)
{
    struct { const char *h; int port; } aa[3] = {{a->host, a->quorum_port}, {a->host, a->election_port},
                                                 {a->client_addr, a->client_port}},
                                        bb[3] = {{b->host, b->quorum_port}, {b->host, b->election_port},
                                                 {b->client_addr, b->client_port}};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            if (!is_special_host(aa[i].h) && aa[i].port == bb[j].port && strcasecmp(aa[i].h, bb[j].h) == 0)
                return fail(ZBADARGUMENTS, err, errlen, "%s:%d of server.%d conflicts %s:%d of server.%d", aa[i].h,
                            aa[i].port, a->id, bb[j].h, bb[j].port, b->id);
    return 0;
}

/* The next comma-separated element of s from *pos, trimmed, into tok; 0 at the end.
 * ZooKeeper's StringUtils.split drops empty elements. */
static int next_token(const char *s, size_t *pos, char *tok, size_t cap, int *too_long)
{
    size_t len = strlen(s);
    while (*pos < len) {
        const char *b = s + *pos;
        const char *comma = memchr(b, ',', len - *pos);
        const char *e = comma ? comma : s + len;
        *pos = (size_t)(e - s) + (comma ? 1 : 0);
        trim(&b, &e);
        if (b == e)
            continue;
        if ((size_t)(e - b) >= cap) {
            *too_long = 1;
            return 0;
        }
        memcpy(tok, b, (size_t)(e - b));
        tok[e - b] = '\0';
        return 1;
    }
    return 0;
}

/* java.util.HashMap's tableSizeFor: the least power of two >= n (n >= 1). */
static int table_size_for(int n)
{
    int cap = 1;
    while (cap < n)
        cap *= 2;
    return cap;
}

int ensemble_config_incremental(const ensemble_config_t *cur, const char *joining, const char *leaving,
                                ensemble_config_t *next, char *err, size_t errlen)
{
    /* ZooKeeper copies the last seen members into a new HashMap (sized for
     * their count; ranked in the old map's order), removes the leaving,
     * puts the joining: its text lists them in that map's order. */
    memset(next, 0, sizeof(*next));
    next->version = cur->version;
    next->hash_cap = cur->n > 0 ? table_size_for((int)((float)cur->n / 0.75f + 1.0f)) : 16;
    int idx[ENSEMBLE_MAX_MEMBERS];
    map_order(cur, idx);
    for (int i = 0; i < cur->n; i++)
        ensemble_config_put(next, &cur->members[idx[i]]);
    char tok[TOKEN_MAX];
    size_t pos = 0;
    int too_long = 0;
    /* Leaving first, then joining, as ZooKeeper; an id not in the
     * configuration leaves silently, as there. */
    while (leaving && next_token(leaving, &pos, tok, sizeof(tok), &too_long)) {
        int64_t id;
        if (parse_long(tok, tok + strlen(tok), 10, &id) != 0)
            return fail(ZMARSHALLINGERROR, err, errlen, "leaving server id '%.40s' is not a number", tok);
        if (id >= 0 && id <= INT32_MAX)
            ensemble_config_remove(next, (int)id);
    }
    if (too_long)
        return fail(ZMARSHALLINGERROR, err, errlen, "a leaving server id longer than %d bytes", TOKEN_MAX - 1);
    pos = 0;
    while (joining && next_token(joining, &pos, tok, sizeof(tok), &too_long)) {
        ensemble_member_t m;
        char why[256] = "";
        int rc = ensemble_member_parse_line(&m, tok, why, sizeof(why));
        if (rc == ZBADARGUMENTS && strcmp(why, "Wrong format of server string") != 0)
            /* ZooKeeper answers every ConfigException of a joiner with one message; the reason is kept after it. */
            return fail(ZBADARGUMENTS, err, errlen, "Reconfiguration failed: %s", why);
        if (rc)
            return fail(rc, err, errlen, "%s", why);
        if (!m.client_addr[0])
            return fail(ZBADARGUMENTS, err, errlen,
                        "Wrong format of server string - each server should have 3 ports specified");
        for (int i = 0; i < next->n; i++)
            if (next->members[i].id != m.id && (rc = addr_conflict(&m, &next->members[i], err, errlen)) != 0)
                return rc;
        if (ensemble_config_put(next, &m) != 0)
            return fail(ZBADARGUMENTS, err, errlen, "more than %d members", ENSEMBLE_MAX_MEMBERS);
        if (next->n > next->hash_cap / 4 * 3)   /* HashMap's resize past three quarters */
            next->hash_cap *= 2;
    }
    if (too_long)
        return fail(ZBADARGUMENTS, err, errlen, "a joining server string longer than %d bytes", TOKEN_MAX - 1);
    return check_voters(next, err, errlen);
}
