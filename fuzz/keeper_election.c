/* keeper_election.c -- what a keeper reads on its election port: the
 * connecting peer's InitialMessage (election_parse_initial_message), then
 * notifications, each behind an int length bounded by ELECTION_MAX_MESSAGE
 * (election_decode_notification), as election.c reads a connection.
 *
 * Input: the bytes a peer sends on one election connection. Each decoded
 * vote is also ranked against the previous one and against the extremes
 * with election_vote_beats (the total order every round applies), which
 * must be a strict order: never both ways, never a vote over itself. The
 * config text a notification carries stays inside its message and goes
 * through ensemble_config_parse, as a LOOKING keeper reads it
 * (maybe_adopt_config). */
#include "fuzz.h"

#include "base/endian.h"
#include "keeper/zab/election.h"
#include "keeper/zab/ensemble_config.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_quiet();
    return 0;
}

static void rank(const vote_t *a, const vote_t *b)
{
    int ab = election_vote_beats(a->leader, a->zxid, a->peer_epoch, b->leader, b->zxid, b->peer_epoch);
    int ba = election_vote_beats(b->leader, b->zxid, b->peer_epoch, a->leader, a->zxid, a->peer_epoch);
    FUZZ_CHECK(!(ab && ba), "two votes beat each other");
    if (a->leader == b->leader && a->zxid == b->zxid && a->peer_epoch == b->peer_epoch)
        FUZZ_CHECK(!ab, "a vote beats itself");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int64_t sid;
    size_t used = 0;
    const char *why = NULL;
    if (election_parse_initial_message(data, size, &sid, &used, &why) <= 0)
        return 0;
    FUZZ_CHECK(used <= size, "an InitialMessage of %zu bytes in %zu", used, size);
    static const vote_t lowest = {INT64_MIN, INT64_MIN, 0, INT64_MIN};
    static const vote_t highest = {INT64_MAX, INT64_MAX, INT64_MAX, INT64_MAX};
    vote_t previous = {sid, 0, 0, 0};
    size_t off = used;
    while (size - off >= 4) {
        int32_t len = (int32_t)be32_get(data + off);
        if (len <= 0 || len > ELECTION_MAX_MESSAGE || (size_t)len > size - off - 4)
            break;   /* the connection is closed, or waits for the rest */
        election_notification_t n;
        const uint8_t *msg = data + off + 4;
        if (election_decode_notification(msg, (size_t)len, &n, &why) < 0)
            break;
        if (n.config) {
            FUZZ_CHECK(n.config_len >= 0 && n.config >= msg && n.config + n.config_len <= msg + len,
                       "a config of %d bytes outside its %d-byte message", n.config_len, len);
            static ensemble_config_t c;
            char err[256];
            if (ensemble_config_parse(&c, (const char *)n.config, (size_t)n.config_len, err, sizeof(err)) == 0)
                FUZZ_CHECK(c.n >= 0 && c.n <= ENSEMBLE_MAX_MEMBERS, "a config of %d members", c.n);
        }
        off += 4 + (size_t)len;
        rank(&n.vote, &previous);
        rank(&n.vote, &n.vote);
        rank(&n.vote, &lowest);
        rank(&n.vote, &highest);
        previous = n.vote;
    }
    return 0;
}
