/* keeper_quorum.c -- what one keeper of an ensemble reads from another on
 * the quorum port: QuorumPackets back to back (quorum_packet_parse), and
 * after a SNAP the bare snapshot stream that follows it, whose end is found
 * by snap_scan as bytes arrive.
 *
 * Input: the bytes of one direction of a quorum connection (a leader's to a
 * follower, or a follower's to its leader). They are read as follower.c
 * and leader.c read them: packet by packet until one is malformed or cut;
 * a PROPOSAL's (or INFORM's) data is a TxnHeader and a txn record, applied
 * in order to a tree as the follower commits them, with the DIFF history
 * kept; after a SNAP the stream is scanned in uneven steps, as reads would
 * deliver it, and the snapshot loaded as a follower does; a FOLLOWERINFO,
 * a PING's session list and a REQUEST's header are decoded as the leader
 * does.
 *
 * Oracle: snap_scan fed in steps ends where one call over the same bytes
 * ends, with the same result. */
#include "fuzz.h"

#include "base/endian.h"
#include "keeper/data/jute.h"
#include "keeper/data/proto.h"
#include "keeper/data/tree.h"
#include "keeper/data/txn.h"
#include "keeper/disk/history.h"
#include "keeper/disk/snapshot.h"
#include "keeper/zab/quorum.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_quiet();
    return 0;
}

/* follower.c: on_proposal, then on_commit's apply. */
static void proposal(tree_t *tree, history_t *history, const quorum_packet_t *p)
{
    jute_in_t in;
    jute_in_init(&in, p->data, p->data_len > 0 ? (size_t)p->data_len : 0);
    txn_header_t hdr;
    txn_t txn;
    if (txn_header_read(&in, &hdr) < 0 || txn_body_read(&in, hdr.type, &txn) < 0)
        return;
    if (hdr.zxid == p->zxid) {
        history_add(history, &hdr, &txn);
        txn_result_t result;
        tree_apply(tree, &hdr, &txn, &result);
        txn_result_free(&result);
    }
    txn_free(&txn);
}

/* leader.c: what it reads of a learner's packets' data. */
static void from_learner(const quorum_packet_t *p)
{
    jute_in_t in;
    jute_in_init(&in, p->data, p->data_len > 0 ? (size_t)p->data_len : 0);
    switch (p->type) {
    case QP_FOLLOWERINFO:
    case QP_OBSERVERINFO:
        (void)jute_get_long(&in);   /* sid */
        (void)jute_get_int(&in);    /* protocol version */
        (void)jute_get_long(&in);   /* config version */
        break;
    case QP_PING:
        while (jute_remaining(&in) >= 12) {
            (void)jute_get_long(&in);
            (void)jute_get_int(&in);
        }
        break;
    case QP_REQUEST: {
        (void)jute_get_long(&in);   /* session */
        (void)jute_get_int(&in);    /* cxid */
        int32_t type = jute_get_int(&in);
        if (!in.error && type == OP_CREATE_SESSION)
            (void)jute_get_int(&in);
        break;
    }
    default:
        break;
    }
}

/* The snapshot after a SNAP, as reads deliver it: 1 loaded (*used set),
 * 0 cut short, -1 malformed. */
static int snapshot_stream(const uint8_t *p, size_t len, size_t *used)
{
    snap_scan_t whole, steps;
    memset(&whole, 0, sizeof(whole));
    memset(&steps, 0, sizeof(steps));
    int want = snap_scan(&whole, p, len);
    int rc = 0;
    for (size_t have = 0; rc == 0 && have < len;) {
        have += 1 + (have * 7 + 3) % 97;   /* uneven reads */
        if (have > len)
            have = len;
        rc = snap_scan(&steps, p, have);
    }
    if (len == 0)
        rc = snap_scan(&steps, p, 0);
    FUZZ_CHECK(rc == want, "snap_scan in steps gave %d, in one call %d", rc, want);
    if (rc > 0)
        FUZZ_CHECK(steps.pos == whole.pos && steps.body_len == whole.body_len,
                   "snap_scan in steps ended at %zu (body %zu), in one call at %zu (body %zu)", steps.pos,
                   steps.body_len, whole.pos, whole.body_len);
    if (rc <= 0)
        return rc;
    tree_t *tree = NULL;
    snapshot_session_t *sessions = NULL;
    size_t n = 0;
    char err[512];
    if (snapshot_load_buffer(p, steps.body_len, NULL, &tree, &sessions, &n, err, sizeof(err)) < 0)
        return -1;
    tree_destroy(tree);
    free(sessions);
    *used = steps.pos;
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tree_t *tree = tree_create(NULL);
    if (!tree)
        abort();
    history_t history;
    history_init(&history, 20000, 16u << 20, 0);
    size_t off = 0;
    int in_snapshot = 0;
    for (;;) {
        if (in_snapshot) {
            size_t used = 0;
            if (snapshot_stream(data + off, size - off, &used) <= 0)
                break;
            off += used;
            in_snapshot = 0;
        }
        quorum_packet_t p;
        long used = quorum_packet_parse(data + off, size - off, &p);
        if (used <= 0)
            break;
        FUZZ_CHECK((size_t)used <= size - off, "a packet of %ld bytes in %zu", used, size - off);
        off += (size_t)used;
        switch (p.type) {
        case QP_PROPOSAL:
        case QP_INFORM:
            proposal(tree, &history, &p);
            break;
        case QP_SNAP:
            in_snapshot = 1;
            break;
        default:
            from_learner(&p);
            break;
        }
        auth_set_free(&p.auth);
    }
    history_free(&history);
    tree_destroy(tree);
    return 0;
}
