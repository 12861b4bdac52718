/* quorum.c -- see quorum.h. */
#define _GNU_SOURCE
#include "quorum.h"
#include "keeper/data/jute.h"
#include "base/fsutil.h"
#include "base/endian.h"
#include "base/logging.h"

#include <errno.h>
#include <stdint.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_AUTH_IDS 64

int quorum_voter_count(const keeper_peer_t *peers, int npeers)
{
    int voters = 0;
    for (int i = 0; i < npeers; i++)
        if (!peers[i].observer)
            voters++;
    return voters;
}

static int cmp_desc(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x > y ? -1 : x < y;
}

int64_t quorum_commit_point(int64_t *acks, int n, int majority)
{
    if (majority < 1 || n < majority)
        return -1;
    qsort(acks, (size_t)n, sizeof(acks[0]), cmp_desc);
    return acks[majority - 1];
}

int quorum_config_is_voter(const ensemble_config_t *c, int64_t sid)
{
    const ensemble_member_t *m = sid > 0 && sid <= INT32_MAX ? ensemble_config_find(c, (int)sid) : NULL;
    return m && !m->observer;
}

int64_t quorum_config_commit_point(const ensemble_config_t *c, const quorum_ack_t *acks, int n)
{
    int64_t zxids[ENSEMBLE_MAX_MEMBERS];
    int count = 0;
    for (int i = 0; i < n && count < ENSEMBLE_MAX_MEMBERS; i++) {
        int dup = 0;   /* one vote per server, whatever the caller passed */
        for (int j = 0; j < i; j++)
            dup |= acks[j].sid == acks[i].sid;
        if (!dup && quorum_config_is_voter(c, acks[i].sid))
            zxids[count++] = acks[i].zxid;
    }
    return quorum_commit_point(zxids, count, quorum_majority(ensemble_config_voters(c)));
}

int64_t quorum_reconfig_commit_point(const ensemble_config_t *cur, const ensemble_config_t *next, int64_t reconfig_zxid,
                                     const quorum_ack_t *acks, int n)
{
    int64_t point = quorum_config_commit_point(cur, acks, n);
    if (!next || point < reconfig_zxid)
        return point;
    int64_t both = quorum_config_commit_point(next, acks, n);
    if (both < point)
        point = both;
    /* Short of next's majority the reconfig waits, and all after it with it. */
    return point >= reconfig_zxid ? point : reconfig_zxid - 1;
}

int quorum_config_has_majority(const ensemble_config_t *c, const int64_t *sids, int n)
{
    int count = 0;
    for (int i = 0; i < n; i++) {
        int dup = 0;
        for (int j = 0; j < i; j++)
            dup |= sids[j] == sids[i];
        if (!dup && quorum_config_is_voter(c, sids[i]))
            count++;
    }
    return ensemble_config_voters(c) > 0 && count >= quorum_majority(ensemble_config_voters(c));
}

int64_t quorum_designated_leader(const ensemble_config_t *next, int64_t leader_sid, int64_t reconfig_zxid,
                                 const quorum_ack_t *acks, int n)
{
    if (quorum_config_is_voter(next, leader_sid))
        return leader_sid;
    int64_t best = -1;
    for (int i = 0; i < n; i++)
        if (acks[i].zxid >= reconfig_zxid && acks[i].sid != leader_sid && quorum_config_is_voter(next, acks[i].sid) &&
            (best < 0 || acks[i].sid < best))
            best = acks[i].sid;
    return best;
}

int quorum_reconfig_action(char role, int64_t self, int64_t leader, const ensemble_config_t *prev,
                           const ensemble_config_t *next, int64_t designated)
{
    if (role != 'L' && role != 'F')
        return QUORUM_STAY;
    if (designated > 0 && designated != leader)
        return QUORUM_HAND_OFF;
    const ensemble_member_t *was = self > 0 && self <= INT32_MAX ? ensemble_config_find(prev, (int)self) : NULL;
    const ensemble_member_t *me = self > 0 && self <= INT32_MAX ? ensemble_config_find(next, (int)self) : NULL;
    if (role == 'L' && (!me || me->observer))
        return QUORUM_ELECT;
    if (me && was && was->observer != me->observer)
        return QUORUM_ELECT;
    if (role == 'F' && designated < 0) {
        /* Without a designated leader ZooKeeper elects when its leader lost
         * its vote, or when its quorum address moved (to reach it there). */
        if (!quorum_config_is_voter(next, leader))
            return QUORUM_ELECT;
        const ensemble_member_t *old = leader <= INT32_MAX ? ensemble_config_find(prev, (int)leader) : NULL;
        const ensemble_member_t *now = ensemble_config_find(next, (int)leader);
        if (!old || strcmp(old->host, now->host) != 0 || old->quorum_port != now->quorum_port)
            return QUORUM_ELECT;
    }
    return QUORUM_STAY;
}

long quorum_packet_parse(const uint8_t *in, size_t len, quorum_packet_t *p)
{
    memset(p, 0, sizeof(*p));
    jute_in_t r;
    jute_in_init(&r, in, len);
    p->type = jute_get_int(&r);
    p->zxid = jute_get_long(&r);
    int32_t dlen = jute_get_int(&r);
    if (r.error)
        return 0;
    if (dlen < -1 || (dlen > 0 && (uint32_t)dlen > QUORUM_MAX_DATA))
        return -1;
    if (dlen > 0 && jute_remaining(&r) < (size_t)dlen)
        return 0;
    p->data_len = dlen;
    p->data = dlen >= 0 ? in + r.pos : NULL;
    if (dlen > 0)
        r.pos += (size_t)dlen;
    if (jute_remaining(&r) < 4)
        return 0;
    int32_t nids = jute_get_int(&r);
    if (nids < -1 || nids > MAX_AUTH_IDS)
        return -1;
    p->auth_null = nids == -1;
    auth_set_init(&p->auth);
    for (int32_t i = 0; i < nids; i++) {
        char *scheme = jute_get_string(&r);
        char *id = jute_get_string(&r);
        if (r.error) {   /* not all here yet (or cut): wait for more */
            free(scheme);
            free(id);
            auth_set_free(&p->auth);
            return 0;
        }
        if (!scheme || !id) {
            free(scheme);
            free(id);
            auth_set_free(&p->auth);
            return -1;
        }
        auth_set_add(&p->auth, scheme, id);
        free(scheme);
        free(id);
    }
    return (long)r.pos;
}

void quorum_packet_write(buf_t *out, int32_t type, int64_t zxid, const void *data, int32_t data_len,
                         const auth_set_t *auth)
{
    jute_put_int(out, type);
    jute_put_long(out, zxid);
    jute_put_buffer(out, data, data ? data_len : -1);
    int32_t n = auth ? auth->count : 0;
    jute_put_int(out, auth ? n : -1);
    for (int32_t i = 0; i < n; i++) {
        jute_put_string(out, auth->items[i].scheme);
        jute_put_string(out, auth->items[i].id);
    }
}

const char *quorum_packet_name(int32_t type)
{
    static const char *names[] = {"?", "REQUEST", "PROPOSAL", "ACK", "COMMIT", "PING", "REVALIDATE", "SYNC",
                                  "INFORM", "COMMITANDACTIVATE", "NEWLEADER", "FOLLOWERINFO", "UPTODATE",
                                  "DIFF", "TRUNC", "SNAP", "OBSERVERINFO", "LEADERINFO", "ACKEPOCH", "INFORMANDACTIVATE"};
    return type > 0 && type < (int32_t)(sizeof(names) / sizeof(names[0])) ? names[type] : "UNKNOWN";
}

static int64_t read_epoch_file(const char *dir, const char *name, int64_t missing)
{
    char path[700], text[64] = "";
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    if (!f)
        return errno == ENOENT ? missing : -2;
    char *got = fgets(text, sizeof(text), f);
    fclose(f);
    char *end = NULL;
    errno = 0;
    long long v = got ? strtoll(text, &end, 10) : -1;
    if (!got || errno || end == text || v < 0)
        return -2;
    return (int64_t)v;
}

int64_t quorum_read_epoch(const char *snap_dir, const char *legacy_dir, const char *name, int64_t missing)
{
    int64_t v = read_epoch_file(snap_dir, name, -3);
    if (v == -3)
        v = legacy_dir ? read_epoch_file(legacy_dir, name, missing) : missing;
    return v;
}

int quorum_write_epoch(const char *snap_dir, const char *legacy_dir, const char *name, int64_t epoch)
{
    char path[700], text[32];
    snprintf(path, sizeof(path), "%s/%s", snap_dir, name);
    int n = snprintf(text, sizeof(text), "%" PRId64, epoch);
    if (fs_write_atomic(path, text, (size_t)n) < 0)
        return -1;
    if (legacy_dir && strcmp(legacy_dir, snap_dir) != 0) {
        snprintf(path, sizeof(path), "%s/%s", legacy_dir, name);
        if (unlink(path) < 0 && errno != ENOENT)
            log_warn("cannot remove %s, an epoch file of an earlier kipper: %s", path, strerror(errno));
    }
    return 0;
}

/* ---- finding the end of a snapshot stream (SNAP sync) ---- */

static int scan_need(const snap_scan_t *s, size_t len, size_t n)
{
    return s->pos + n <= len;
}

/* A string or buffer at pos: 1 with its total size in *size, 0 if not all
 * here yet, -1 if its length is impossible. */
static int scan_bytes(const snap_scan_t *s, const uint8_t *p, size_t len, size_t *size)
{
    if (!scan_need(s, len, 4))
        return 0;
    int32_t n = (int32_t)be32_get(p + s->pos);
    if (n < -1 || (n > 0 && (uint32_t)n > QUORUM_MAX_DATA))
        return -1;
    size_t total = 4 + (n > 0 ? (size_t)n : 0);
    if (!scan_need(s, len, total))
        return 0;
    *size = total;
    return 1;
}

int snap_scan(snap_scan_t *s, const uint8_t *p, size_t len)
{
    enum { SESSION_COUNT, SESSIONS, ACL_COUNT, ACL_HEADER, ACL_ITEMS, NODE_PATH, NODE_BODY, SIGNATURE };
    size_t size;
    int rc;
    for (;;) {
        if (s->pos > QUORUM_MAX_DATA)
            return -1;
        switch (s->phase) {
        case SESSION_COUNT:
        case ACL_COUNT:
            if (!scan_need(s, len, 4))
                return 0;
            s->outer = (int32_t)be32_get(p + s->pos);
            if (s->outer < 0)
                return -1;
            s->pos += 4;
            s->phase = s->phase == SESSION_COUNT ? SESSIONS : ACL_HEADER;
            break;
        case SESSIONS:
            if (s->outer == 0) {
                s->phase = ACL_COUNT;
                break;
            }
            if (!scan_need(s, len, 12))
                return 0;
            s->pos += 12;
            s->outer--;
            break;
        case ACL_HEADER:
            if (s->outer == 0) {
                s->phase = NODE_PATH;
                break;
            }
            if (!scan_need(s, len, 12))
                return 0;
            s->inner = (int32_t)be32_get(p + s->pos + 8);
            if (s->inner < -1)
                return -1;
            if (s->inner < 0)
                s->inner = 0;
            s->pos += 12;
            s->phase = ACL_ITEMS;
            break;
        case ACL_ITEMS: {
            if (s->inner == 0) {
                s->outer--;
                s->phase = ACL_HEADER;
                break;
            }
            size_t a, b;
            snap_scan_t t = *s;
            if (!scan_need(&t, len, 4))
                return 0;
            t.pos += 4;   /* perms */
            if ((rc = scan_bytes(&t, p, len, &a)) <= 0)
                return rc;
            t.pos += a;
            if ((rc = scan_bytes(&t, p, len, &b)) <= 0)
                return rc;
            s->pos = t.pos + b;
            s->inner--;
            break;
        }
        case NODE_PATH:
            if ((rc = scan_bytes(s, p, len, &size)) <= 0)
                return rc;
            if (size == 5 && p[s->pos + 4] == '/') {
                s->pos += size;
                s->body_len = s->pos;   /* the nodes end with the path "/" */
                s->phase = SIGNATURE;
                break;
            }
            s->pos += size;
            s->phase = NODE_BODY;
            break;
        case NODE_BODY:
            if ((rc = scan_bytes(s, p, len, &size)) <= 0)
                return rc;
            if (!scan_need(s, len, size + 8 + 60))   /* data, ACL id, StatPersisted */
                return 0;
            s->pos += size + 8 + 60;
            s->phase = NODE_PATH;
            break;
        case SIGNATURE:
            if ((rc = scan_bytes(s, p, len, &size)) <= 0)
                return rc;
            if (size != 14 || memcmp(p + s->pos + 4, "BenWasHere", 10) != 0)
                return -1;
            s->pos += size;
            return 1;
        default:
            return -1;
        }
    }
}
