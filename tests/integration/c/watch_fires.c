/* A tiny program on Apache ZooKeeper's C client library (libzookeeper-mt), used by
 * test_interop_clients.py: connect two sessions, create, get with a watch, set from
 * the other session, see the watch fire; a child watch fired by the other session's
 * ephemeral vanishing on close; a multi that fails atomically and one that succeeds.
 * Prints one deterministic line per step on stdout; exits 0 only if every step
 * behaved as ZooKeeper specifies. Every wait is bounded.
 *
 * usage: watch_fires host:port /base-path
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#define THREADED 1
#include <zookeeper/zookeeper.h>

#define WAIT_MS 10000

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int connected[2];
static int events_seen;
static char event_log[16][160];
static int failures;

static const char *type_name(int t)
{
    if (t == ZOO_CREATED_EVENT) return "CREATED";
    if (t == ZOO_DELETED_EVENT) return "DELETED";
    if (t == ZOO_CHANGED_EVENT) return "CHANGED";
    if (t == ZOO_CHILD_EVENT) return "CHILD";
    if (t == ZOO_SESSION_EVENT) return "SESSION";
    if (t == ZOO_NOTWATCHING_EVENT) return "NOTWATCHING";
    return "UNKNOWN";
}

static const char *state_name(int s)
{
    if (s == ZOO_CONNECTED_STATE) return "CONNECTED";
    if (s == ZOO_CONNECTING_STATE) return "CONNECTING";
    if (s == ZOO_EXPIRED_SESSION_STATE) return "EXPIRED";
    if (s == ZOO_AUTH_FAILED_STATE) return "AUTH_FAILED";
    if (s == 0) return "CLOSED";
    return "OTHER";
}

static void session_watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx)
{
    (void)zh; (void)path;
    int which = (int)(long)ctx;
    if (type == ZOO_SESSION_EVENT) {
        pthread_mutex_lock(&mu);
        connected[which] = (state == ZOO_CONNECTED_STATE);
        pthread_cond_broadcast(&cv);
        pthread_mutex_unlock(&mu);
    }
}

static void node_watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx)
{
    (void)zh;
    pthread_mutex_lock(&mu);
    if (events_seen < 16)
        snprintf(event_log[events_seen], sizeof event_log[0], "watch %s: type=%s state=%s path=%s",
                 (const char *)ctx, type_name(type), state_name(state), path ? path : "");
    events_seen++;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
}

static int wait_for(int *flag, int want)
{
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += WAIT_MS / 1000;
    pthread_mutex_lock(&mu);
    int rc = 0;
    while (*flag < want && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&cv, &mu, &dl);
    int ok = *flag >= want;
    pthread_mutex_unlock(&mu);
    return ok;
}

static void expect(const char *what, int rc, int want)
{
    printf("%s: %s\n", what, zerror(rc));
    if (rc != want) {
        printf("  FAIL: expected %s\n", zerror(want));
        failures++;
    }
}

static zhandle_t *connect_to(const char *hosts, int which)
{
    zhandle_t *zh = zookeeper_init(hosts, session_watcher, 10000, 0, (void *)(long)which, 0);
    if (!zh || !wait_for(&connected[which], 1)) {
        printf("session %d: could not connect to %s\n", which, hosts);
        exit(2);
    }
    printf("session %d: connected, timeout %d ms\n", which, zoo_recv_timeout(zh));
    return zh;
}

static void print_events(int from, int to)
{
    pthread_mutex_lock(&mu);
    for (int i = from; i < to && i < 16; i++)
        printf("%s\n", event_log[i]);
    pthread_mutex_unlock(&mu);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s host:port /base\n", argv[0]);
        return 2;
    }
    const char *hosts = argv[1], *base = argv[2];
    char node[256], eph[256], m1[256], m2[256], buf[512];
    snprintf(node, sizeof node, "%s/node", base);
    snprintf(eph, sizeof eph, "%s/node/eph", base);
    snprintf(m1, sizeof m1, "%s/m1", base);
    snprintf(m2, sizeof m2, "%s/m2", base);
    setvbuf(stdout, NULL, _IOLBF, 0);
    zoo_set_debug_level(ZOO_LOG_LEVEL_ERROR);

    zhandle_t *a = connect_to(hosts, 0);
    zhandle_t *b = connect_to(hosts, 1);
    struct Stat st;
    int len;

    expect("a create base", zoo_create(a, base, "", 0, &ZOO_OPEN_ACL_UNSAFE, 0, buf, sizeof buf), ZOK);
    expect("a create node", zoo_create(a, node, "v0", 2, &ZOO_OPEN_ACL_UNSAFE, 0, buf, sizeof buf), ZOK);
    printf("created path matches: %d\n", strcmp(buf, node) == 0);
    len = sizeof buf;
    expect("a wget node", zoo_wget(a, node, node_watcher, "data", buf, &len, &st), ZOK);
    printf("data=%.*s version=%d dataLength=%d numChildren=%d\n", len, buf, st.version, st.dataLength,
           st.numChildren);

    expect("b set node version 0", zoo_set(b, node, "v1", 2, 0), ZOK);
    if (!wait_for(&events_seen, 1)) {
        printf("FAIL: data watch did not fire within %d ms\n", WAIT_MS);
        return 1;
    }
    print_events(0, 1);
    len = sizeof buf;
    expect("a get node", zoo_get(a, node, 0, buf, &len, &st), ZOK);
    printf("data=%.*s version=%d\n", len, buf, st.version);
    expect("b set node version 0 again", zoo_set(b, node, "v2", 2, 0), ZBADVERSION);

    /* child watch fired by an ephemeral vanishing when its session closes */
    expect("b create ephemeral", zoo_create(b, eph, "e", 1, &ZOO_OPEN_ACL_UNSAFE, ZOO_EPHEMERAL, buf,
                                            sizeof buf), ZOK);
    struct String_vector kids;
    expect("a wget_children node", zoo_wget_children(a, node, node_watcher, "children", &kids), ZOK);
    printf("children=%d first=%s\n", kids.count, kids.count ? kids.data[0] : "-");
    deallocate_String_vector(&kids);
    expect("a wexists ephemeral", zoo_wexists(a, eph, node_watcher, "exists", &st), ZOK);
    printf("ephemeralOwner is session b: %d\n", st.ephemeralOwner == zoo_client_id(b)->client_id);
    expect("b close", zookeeper_close(b), ZOK);
    if (!wait_for(&events_seen, 3)) {
        printf("FAIL: ephemeral's watches did not fire within %d ms\n", WAIT_MS);
        return 1;
    }
    print_events(1, 3);
    expect("a exists ephemeral", zoo_exists(a, eph, 0, &st), ZNONODE);

    /* multi: a failing check rolls back everything; then a good one */
    zoo_op_t ops[3];
    zoo_op_result_t res[3];
    zoo_create_op_init(&ops[0], m1, "x", 1, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
    zoo_check_op_init(&ops[1], node, 7);
    zoo_create_op_init(&ops[2], m2, "y", 1, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
    expect("a multi with bad check", zoo_multi(a, 3, ops, res), ZBADVERSION);
    printf("results: %s / %s / %s\n", zerror(res[0].err), zerror(res[1].err), zerror(res[2].err));
    expect("a exists m1 after failed multi", zoo_exists(a, m1, 0, &st), ZNONODE);
    zoo_check_op_init(&ops[1], node, 1);
    expect("a multi with good check", zoo_multi(a, 3, ops, res), ZOK);
    printf("results: %s / %s / %s\n", zerror(res[0].err), zerror(res[1].err), zerror(res[2].err));
    expect("a exists m2 after multi", zoo_exists(a, m2, 0, &st), ZOK);

    expect("a delete node", zoo_delete(a, node, -1), ZOK);
    expect("a close", zookeeper_close(a), ZOK);
    printf("%s\n", failures ? "FAILED" : "OK");
    return failures ? 1 : 0;
}
