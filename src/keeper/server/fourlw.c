/* fourlw.c -- ZooKeeper's four-letter words: a connection whose first four
 * bytes spell a known command gets a text answer and is closed. Formats
 * follow ZooKeeper 3.8 line for line so monitoring scripts keep working. */
#define _GNU_SOURCE
#include "keeper_impl.h"
#include "base/logging.h"
#include "base/clock.h"

#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#define KIPPER_ZK_VERSION "3.8.0-kipper"

static void out_printf(buf_t *out, const char *fmt, ...) KIPPER_PRINTF(2, 3);
static void out_printf(buf_t *out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    int n = vasprintf(&s, fmt, ap);
    va_end(ap);
    if (n > 0)
        buf_append(out, s, (size_t)n);
    free(s);
}

/* ZooKeeper counts the root twice (it is stored under "" and "/"), so its
 * node count is one more than the znodes there are; report it the same way. */
static const char *server_state(const keeper_t *k)
{
    if (k->read_only)
        return "read-only";
    switch (k->role) {
    case ROLE_LEADING: return "leader";
    case ROLE_FOLLOWING: return k->cfg.peer_type == PEER_TYPE_OBSERVER ? "observer" : "follower";
    case ROLE_LOOKING: return "looking";
    default: return "standalone";
    }
}

static size_t zookeeper_node_count(keeper_t *k)
{
    return tree_node_count(k->tree) + 1;
}

static uint64_t min_latency(const keeper_stats_t *s)
{
    return s->latency_count ? s->latency_min_ms : 0;
}

static double avg_latency(const keeper_stats_t *s)
{
    return s->latency_count ? (double)s->latency_total_ms / (double)s->latency_count : 0.0;
}

static void connection_line(buf_t *out, const client_conn_t *c, int brief)
{
    unsigned interest = (c->read_paused || c->closing ? 0u : 1u) | (buf_unread(&c->out) ? 4u : 0u);
    out_printf(out, " /%s:%d[%x](queued=0,recved=%llu,sent=%llu", c->ip, c->port, interest,
               (unsigned long long)c->stats.packets_received, (unsigned long long)c->stats.packets_sent);
    if (!brief && c->session_id) {
        out_printf(out, ",sid=0x%llx,lop=%s,est=%llu,to=%d", (unsigned long long)c->session_id, c->last_op,
                   (unsigned long long)c->established_wall_ms, c->session_timeout);
        if (c->last_cxid >= 0)
            out_printf(out, ",lcxid=0x%llx", (unsigned long long)c->last_cxid);
        out_printf(out, ",lzxid=0x%llx,lresp=%llu,llat=%llu,minlat=%llu,avglat=%llu,maxlat=%llu",
                   (unsigned long long)c->last_zxid, (unsigned long long)c->last_response_wall_ms,
                   (unsigned long long)c->last_latency_ms, (unsigned long long)min_latency(&c->stats),
                   (unsigned long long)avg_latency(&c->stats), (unsigned long long)c->stats.latency_max_ms);
    }
    out_printf(out, ")\n");
}

static void server_stats(keeper_t *k, buf_t *out, int with_clients)
{
    out_printf(out, "Zookeeper version: %s, built on %s\n", KIPPER_ZK_VERSION, __DATE__);
    if (with_clients) {
        out_printf(out, "Clients:\n");
        for (const client_conn_t *c = k->clients; c; c = c->next) {
            connection_line(out, c, 1);
            out_printf(out, "\n");
        }
        out_printf(out, "\n");
    }
    out_printf(out, "Latency min/avg/max: %llu/%.4f/%llu\n", (unsigned long long)min_latency(&k->stats),
               avg_latency(&k->stats), (unsigned long long)k->stats.latency_max_ms);
    out_printf(out, "Received: %llu\nSent: %llu\nConnections: %zu\nOutstanding: %zu\nZxid: 0x%llx\n",
               (unsigned long long)k->stats.packets_received, (unsigned long long)k->stats.packets_sent,
               k->nclients, k->npending, (unsigned long long)tree_last_zxid(k->tree));
    out_printf(out, "Mode: %s\nNode count: %zu\n", server_state(k), zookeeper_node_count(k));
}

static long count_open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return -1;
    long n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n - 1;   /* the directory stream itself */
}

static void monitor(keeper_t *k, buf_t *out)
{
    watch_stats_t ws;
    watch_stats(k->watches, &ws);
    struct rlimit rl;
    long max_fds = getrlimit(RLIMIT_NOFILE, &rl) == 0 ? (long)rl.rlim_cur : -1;
    out_printf(out, "zk_version\t%s, built on %s\n", KIPPER_ZK_VERSION, __DATE__);
    out_printf(out, "zk_server_state\t%s\n", server_state(k));
    out_printf(out, "zk_avg_latency\t%.4f\n", avg_latency(&k->stats));
    out_printf(out, "zk_max_latency\t%llu\n", (unsigned long long)k->stats.latency_max_ms);
    out_printf(out, "zk_min_latency\t%llu\n", (unsigned long long)min_latency(&k->stats));
    out_printf(out, "zk_packets_received\t%llu\n", (unsigned long long)k->stats.packets_received);
    out_printf(out, "zk_packets_sent\t%llu\n", (unsigned long long)k->stats.packets_sent);
    out_printf(out, "zk_num_alive_connections\t%zu\n", k->nclients);
    out_printf(out, "zk_outstanding_requests\t%zu\n", k->npending);   /* in the pipeline */
    out_printf(out, "zk_uptime\t%llu\n", (unsigned long long)(clock_wall_ms() - k->started_wall_ms));
    out_printf(out, "zk_znode_count\t%zu\n", zookeeper_node_count(k));
    out_printf(out, "zk_watch_count\t%zu\n", ws.watch_count);
    out_printf(out, "zk_ephemerals_count\t%zu\n", tree_ephemeral_count(k->tree));
    out_printf(out, "zk_approximate_data_size\t%lld\n", (long long)tree_approximate_data_size(k->tree));
    size_t local = local_sessions_count(k);
    out_printf(out, "zk_global_sessions\t%zu\n", session_count(k->sessions) - local);
    out_printf(out, "zk_local_sessions\t%zu\n", local);
    out_printf(out, "zk_open_file_descriptor_count\t%ld\n", count_open_fds());
    out_printf(out, "zk_max_file_descriptor_count\t%ld\n", max_fds);
    out_printf(out, "zk_connection_drop_probability\t0.0\n");
    out_printf(out, "zk_outstanding_tls_handshake\t0\n");
    out_printf(out, "zk_auth_failed_count\t0\n");
    if (k->role == ROLE_LEADING) {
        int learners, synced_followers, synced_observers;
        leader_counts(k, &learners, &synced_followers, &synced_observers);
        out_printf(out, "zk_learners\t%d\nzk_synced_followers\t%d\nzk_synced_observers\t%d\nzk_followers\t%d\n",
                   learners, synced_followers, synced_observers, learners);
        out_printf(out, "zk_kipper_syncs_diff\t%llu\nzk_kipper_syncs_trunc\t%llu\nzk_kipper_syncs_snap\t%llu\n",
                   (unsigned long long)k->syncs_sent[0], (unsigned long long)k->syncs_sent[1],
                   (unsigned long long)k->syncs_sent[2]);
    }
    out_printf(out, "zk_kipper_last_logged_zxid\t0x%llx\n", (unsigned long long)k->last_logged_zxid);
}

static void environment(keeper_t *k, buf_t *out)
{
    struct utsname u;
    char host[256] = "", cwd[1024] = "";
    gethostname(host, sizeof(host) - 1);
    if (!getcwd(cwd, sizeof(cwd)))
        cwd[0] = 0;
    const char *user = getenv("USER"), *home = getenv("HOME");
    int have_uname = uname(&u) == 0;
    out_printf(out, "Environment:\n");
    out_printf(out, "zookeeper.version=%s, built on %s\n", KIPPER_ZK_VERSION, __DATE__);
    out_printf(out, "host.name=%s\n", host);
    out_printf(out, "os.name=%s\n", have_uname ? u.sysname : "");
    out_printf(out, "os.arch=%s\n", have_uname ? u.machine : "");
    out_printf(out, "os.version=%s\n", have_uname ? u.release : "");
    out_printf(out, "user.name=%s\n", user ? user : "");
    out_printf(out, "user.home=%s\n", home ? home : "");
    out_printf(out, "user.dir=%s\n", cwd);
    out_printf(out, "kipper.config=%s\n", k->cfg.path);
}

static void configuration(keeper_t *k, buf_t *out)
{
    out_printf(out, "clientPort=%d\nsecureClientPort=-1\n", k->port);
    out_printf(out, "dataDir=%s\ndataDirSize=0\ndataLogDir=%s\ndataLogSize=0\n", k->cfg.data_dir,
               k->cfg.data_log_dir);
    out_printf(out, "tickTime=%d\nmaxClientCnxns=%d\nminSessionTimeout=%d\nmaxSessionTimeout=%d\n",
               k->cfg.tick_time, k->cfg.max_client_cnxns, k->cfg.min_session_timeout,
               k->cfg.max_session_timeout);
    out_printf(out, "clientPortListenBacklog=511\nserverId=%d\n", k->cfg.server_id);
    if (k->role == ROLE_STANDALONE)
        return;
    /* An ensemble member goes on as ZooKeeper's QuorumZooKeeperServer.dumpConf:
     * its quorum settings, then the active membership as /zookeeper/config
     * holds it (QuorumVerifier.toString: no newline after it). */
    const ensemble_member_t *me = ensemble_config_find(&k->config, k->cfg.server_id);
    out_printf(out, "initLimit=%d\nsyncLimit=%d\nelectionAlg=3\nelectionPort=%d\nquorumPort=%d\npeerType=%d\n",
               k->cfg.init_limit, k->cfg.sync_limit, me ? me->election_port : 0, me ? me->quorum_port : 0,
               k->cfg.peer_type == PEER_TYPE_OBSERVER ? 1 : 0);
    out_printf(out, "membership: \n");
    const znode_t *node = tree_lookup(k->tree, TREE_CONFIG_NODE);
    if (node && node->data_len > 0) {
        buf_append(out, node->data, (size_t)node->data_len);
        return;
    }
    char *text = malloc(ENSEMBLE_CONFIG_TEXT_MAX);
    if (!text)
        return;
    size_t len = ensemble_config_format(&k->config, text, ENSEMBLE_CONFIG_TEXT_MAX);
    if (len < ENSEMBLE_CONFIG_TEXT_MAX)
        buf_append(out, text, len);
    free(text);
}

/* dump: sessions, then each session's ephemerals (ZooKeeper's DumpCommand). */
typedef struct {
    keeper_t *keeper;
    buf_t *out;
    size_t with_ephemerals;
} dump_ctx_t;

static void dump_session_id(session_t *s, void *arg)
{
    dump_ctx_t *ctx = arg;
    if (s->local)   /* listed apart, as ZooKeeper's LeaderSessionTracker.dumpSessions does */
        return;
    out_printf(ctx->out, "\t0x%llx\t%d\n", (unsigned long long)s->id, s->timeout_ms);
    if (tree_session_ephemeral_count(ctx->keeper->tree, s->id) > 0)
        ctx->with_ephemerals++;
}

static int dump_ephemeral(const znode_t *n, void *arg)
{
    out_printf(arg, "\t%s\n", n->path);
    return 0;
}

static void dump_session_ephemerals(session_t *s, void *arg)
{
    dump_ctx_t *ctx = arg;
    if (tree_session_ephemeral_count(ctx->keeper->tree, s->id) == 0)
        return;
    out_printf(ctx->out, "0x%llx:\n", (unsigned long long)s->id);
    tree_each_session_ephemeral(ctx->keeper->tree, s->id, dump_ephemeral, ctx->out);
}

static void dump(keeper_t *k, buf_t *out)
{
    dump_ctx_t ctx = {k, out, 0};
    size_t local = local_sessions_count(k);
    out_printf(out, "SessionTracker dump:\n");
    if (local)
        out_printf(out, "Local sessions: %zu\n", local);
    out_printf(out, "Global Sessions(%zu):\n", session_count(k->sessions) - local);
    session_each(k->sessions, dump_session_id, &ctx);
    out_printf(out, "ephemeral nodes dump:\nSessions with Ephemerals (%zu):\n", ctx.with_ephemerals);
    session_each(k->sessions, dump_session_ephemerals, &ctx);
}

/* wchp / wchc: the data watches by path or by session (WatchManager.dumpWatches). */
static void dump_watch_by_path(const char *path, void *watcher, int first, void *arg)
{
    if (first)
        out_printf(arg, "%s\n", path);
    out_printf(arg, "\t0x%llx\n", (unsigned long long)((client_conn_t *)watcher)->session_id);
}

static void dump_watch_by_session(const char *path, void *watcher, int first, void *arg)
{
    if (first)
        out_printf(arg, "0x%llx\n", (unsigned long long)((client_conn_t *)watcher)->session_id);
    out_printf(arg, "\t%s\n", path);
}

/* ZooKeeper's known words (FourLetterCommands.cmd2String); four other bytes
 * are read as an ordinary frame length. */
static const char *const known_words[] = {"ruok", "stat", "srvr", "conf", "cons", "mntr", "wchs", "wchc", "wchp",
                                          "envi", "isro", "srst", "crst", "dump", "dirs", "gtmk", "stmk", "hash"};

int fourlw_run(keeper_t *k, client_conn_t *c, const uint8_t word_bytes[4], buf_t *out)
{
    char word[5];
    memcpy(word, word_bytes, 4);
    word[4] = 0;
    size_t i, n = sizeof(known_words) / sizeof(known_words[0]);
    for (i = 0; i < n; i++)
        if (strcmp(word, known_words[i]) == 0)
            break;
    if (i == n)
        return 0;
    log_info("processing four-letter word '%s' from %s:%d", word, c->ip, c->port);
    if (!keeper_config_4lw_allowed(&k->cfg, word)) {
        out_printf(out, "%s is not executed because it is not in the whitelist.\n", word);
        return 1;
    }
    if (!k->serving && !k->read_only && strcmp(word, "ruok") && strcmp(word, "envi") && strcmp(word, "gtmk") && strcmp(word, "stmk")) {
        /* electing a leader or syncing with one, as ZooKeeper says it */
        out_printf(out, strcmp(word, "isro") ? "This ZooKeeper instance is not currently serving requests\n" : "null");
        return 1;
    }
    if (!strcmp(word, "ruok")) {
        out_printf(out, "imok");
    } else if (!strcmp(word, "stat")) {
        server_stats(k, out, 1);
    } else if (!strcmp(word, "srvr")) {
        server_stats(k, out, 0);
    } else if (!strcmp(word, "conf")) {
        configuration(k, out);
    } else if (!strcmp(word, "cons")) {
        for (const client_conn_t *x = k->clients; x; x = x->next)
            connection_line(out, x, 0);
        out_printf(out, "\n");
    } else if (!strcmp(word, "mntr")) {
        monitor(k, out);
    } else if (!strcmp(word, "wchs")) {
        watch_stats_t ws;
        watch_stats(k->watches, &ws);
        out_printf(out, "%zu connections watching %zu paths\nTotal watches:%zu\n", ws.watchers, ws.paths, ws.total);
    } else if (!strcmp(word, "envi")) {
        environment(k, out);
    } else if (!strcmp(word, "isro")) {
        out_printf(out, k->read_only ? "ro" : "rw");
    } else if (!strcmp(word, "srst")) {
        memset(&k->stats, 0, sizeof(k->stats));
        k->stats.latency_min_ms = UINT64_MAX;
        out_printf(out, "Server stats reset.\n");
    } else if (!strcmp(word, "crst")) {
        for (client_conn_t *x = k->clients; x; x = x->next) {
            memset(&x->stats, 0, sizeof(x->stats));
            x->stats.latency_min_ms = UINT64_MAX;
        }
        out_printf(out, "Connection stats reset.\n");
    } else if (!strcmp(word, "dump")) {
        dump(k, out);
    } else if (!strcmp(word, "dirs")) {
        out_printf(out, "datadir_size: 0\nlogdir_size: 0\n");
    } else if (!strcmp(word, "wchp")) {
        watch_dump_by_path(k->watches, WATCH_TABLE_DATA, dump_watch_by_path, out);
        out_printf(out, "\n");
    } else if (!strcmp(word, "wchc")) {
        watch_dump_by_watcher(k->watches, WATCH_TABLE_DATA, dump_watch_by_session, out);
        out_printf(out, "\n");
    } else if (!strcmp(word, "gtmk") || !strcmp(word, "stmk")) {
        out_printf(out, "0");   /* kipper has no trace mask; its log level is KIPPER_LOG_LEVEL */
    }
    /* hash: ZooKeeper prints its digest log, empty unless digests are enabled. */
    return 1;
}
