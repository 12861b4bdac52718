/* keeper_membership.c -- what a keeper reads as an ensemble's membership:
 * the text of a zoo.cfg.dynamic file or /zookeeper/config
 * (ensemble_config_parse) and a reconfig request's strings
 * (ensemble_config_incremental, ensemble_config_nonincremental), all of them
 * from a client or a disk (src/keeper/zab/ensemble_config.h).
 *
 * Input: up to three parts split at NUL bytes: a configuration's text, then a
 * joining string (also tried as a non-incremental member list), then a
 * leaving string. Oracles: whatever parses formats back (in ZooKeeper's two
 * layouts) to text that parses to the same members and version; a reconfig
 * either fails with ZooKeeper's codes or yields members in increasing id order
 * with at least one voter. */
#include "fuzz.h"

#include "keeper/data/proto.h"
#include "keeper/zab/ensemble_config.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_quiet();
    return 0;
}

/* The bound a reconfig request's strings have on the wire (jute.maxbuffer's default). */
#define MAX_INPUT (1 << 20)

static void check_sorted(const ensemble_config_t *c)
{
    FUZZ_CHECK(c->n >= 0 && c->n <= ENSEMBLE_MAX_MEMBERS, "%d members", c->n);
    for (int i = 1; i < c->n; i++)
        FUZZ_CHECK(c->members[i - 1].id < c->members[i].id, "members out of id order");
}

static void round_trip(const ensemble_config_t *c)
{
    static char text[ENSEMBLE_CONFIG_TEXT_MAX];
    char err[256];
    ensemble_config_t back;
    size_t len = ensemble_config_format(c, text, sizeof(text));
    FUZZ_CHECK(len < sizeof(text), "format of %zu bytes", len);
    FUZZ_CHECK(ensemble_config_parse(&back, text, len, err, sizeof(err)) == 0, "own text refused: %s", err);
    FUZZ_CHECK(ensemble_config_same_members(c, &back) && back.version == c->version, "text round trip differs");
    len = ensemble_config_format_file(c, 1, text, sizeof(text));
    FUZZ_CHECK(len < sizeof(text), "file of %zu bytes", len);
    FUZZ_CHECK(ensemble_config_parse(&back, text, len, err, sizeof(err)) == 0, "own file refused: %s", err);
    FUZZ_CHECK(ensemble_config_same_members(c, &back) && back.version == c->version, "file round trip differs");
}

static void check_reconfig(int rc, const ensemble_config_t *next, const char *err)
{
    if (rc != 0) {
        FUZZ_CHECK(rc == ZBADARGUMENTS || rc == ZMARSHALLINGERROR, "reconfig answered %d", rc);
        FUZZ_CHECK(err[0] != '\0', "a refusal without a reason");
        return;
    }
    check_sorted(next);
    FUZZ_CHECK(ensemble_config_voters(next) >= 1, "a reconfig leaving %d voters", ensemble_config_voters(next));
    round_trip(next);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > MAX_INPUT)
        return 0;
    char *buf = malloc(size + 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    buf[size] = '\0';
    const char *parts[3] = {buf, NULL, NULL};
    size_t first_len = strlen(buf);
    char *p = buf;
    for (int i = 1; i < 3; i++) {
        char *nul = memchr(p, '\0', size - (size_t)(p - buf));
        if (!nul || nul == buf + size)
            break;
        parts[i] = p = nul + 1;
    }
    static ensemble_config_t cur, next;
    char err[256] = "";
    if (ensemble_config_parse(&cur, parts[0], first_len, err, sizeof(err)) == 0) {
        check_sorted(&cur);
        round_trip(&cur);
    } else {
        FUZZ_CHECK(err[0] != '\0', "a refused text without a reason");
        memset(&cur, 0, sizeof(cur));
    }
    err[0] = '\0';
    int rc = ensemble_config_incremental(&cur, parts[1], parts[2], &next, err, sizeof(err));
    check_reconfig(rc, &next, err);
    if (parts[1]) {
        err[0] = '\0';
        rc = ensemble_config_nonincremental(parts[1], &next, err, sizeof(err));
        check_reconfig(rc, &next, err);
    }
    free(buf);
    return 0;
}
