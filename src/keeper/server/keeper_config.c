/* keeper_config.c -- zoo.cfg, read as ZooKeeper's QuorumPeerConfig reads it. */
#define _GNU_SOURCE
#include "keeper_config.h"
#include "base/fsutil.h"
#include "base/logging.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Keys ZooKeeper knows that kipper accepts but does not act on. */
static const char *const accepted_without_effect[] = {
    "admin.enableServer", "admin.serverPort", "admin.serverAddress", "admin.commandURL",
    "metricsProvider.className",
    "metricsProvider.httpPort", "metricsProvider.exportJvmInfo", "quorumListenOnAllIPs",
    "electionAlg", "syncEnabled", "clientPortListenBacklog", "snapSizeLimitInKb",
};

/* ZooKeeper's quorum and client-port security: SASL between members, TLS
 * on the quorum and client ports. kipper implements none of it yet. A key
 * that turns one on stops start-up, naming it -- an ensemble must not run
 * without the protection its configuration asks for -- while the keys that
 * only tune them (key stores, login contexts, protocols) are accepted with an
 * info line, as they change nothing while the feature is off. */
static const char *const security_switches[] = {
    "quorum.auth.enableSasl", "quorum.auth.learnerRequireSasl", "quorum.auth.serverRequireSasl",
    "sslQuorum", "portUnification", "client.portUnification",
};
static const char *const security_ports[] = {"secureClientPort", "secureClientPortAddress"};
static const char *const security_tuning_prefixes[] = {"quorum.auth.", "ssl.", "zookeeper.ssl."};

static int is_switch(const char *key)
{
    for (size_t i = 0; i < sizeof(security_switches) / sizeof(security_switches[0]); i++)
        if (strcmp(key, security_switches[i]) == 0)
            return 1;
    return 0;
}

static void note_no_effect(const char *path, const char *key)
{
    log_info("%s: %s is accepted and has no effect: kipper does not implement quorum SASL or TLS yet", path, key);
}

static void note_tuning_key(const char *key, const char *value, void *arg)
{
    (void)value;
    const char *path = arg;
    if (!is_switch(key))   /* those were named already */
        note_no_effect(path, key);
}

static int check_security(config_t *cfg, char *err, size_t errlen)
{
    for (size_t i = 0; i < sizeof(security_switches) / sizeof(security_switches[0]); i++) {
        int on = 0;
        if (config_get_bool(cfg, security_switches[i], 0, &on) < 0) {
            snprintf(err, errlen, "%s", cfg->error);
            return -1;
        }
        if (on) {
            snprintf(err, errlen, "%s: %s=true: kipper does not implement quorum SASL or TLS yet, and will not "
                     "run an ensemble without the protection this asks for", cfg->path, security_switches[i]);
            return -1;
        }
        if (config_get(cfg, security_switches[i]))
            note_no_effect(cfg->path, security_switches[i]);
    }
    for (size_t i = 0; i < sizeof(security_ports) / sizeof(security_ports[0]); i++)
        if (config_get(cfg, security_ports[i])) {
            snprintf(err, errlen, "%s: %s: kipper does not serve TLS client connections yet", cfg->path,
                     security_ports[i]);
            return -1;
        }
    for (size_t i = 0; i < sizeof(security_tuning_prefixes) / sizeof(security_tuning_prefixes[0]); i++)
        config_each_prefix(cfg, security_tuning_prefixes[i], note_tuning_key, (void *)cfg->path);
    return 0;
}

/* peerType, as QuorumPeerConfig reads it: observer or participant. */
static int get_peer_type(config_t *cfg, keeper_peer_type_t *out, char *err, size_t errlen)
{
    const char *v = config_get(cfg, "peerType");
    *out = PEER_TYPE_PARTICIPANT;
    if (!v || strcmp(v, "participant") == 0)
        return 0;
    if (strcmp(v, "observer") == 0) {
        *out = PEER_TYPE_OBSERVER;
        return 0;
    }
    snprintf(err, errlen, "%s: peerType must be observer or participant, got '%.40s'", cfg->path, v);
    return -1;
}

/* As QuorumPeerConfig.setupPeerType: this member's own server.N line says
 * what it is; a peerType that disagrees is overruled with a warning. */
static void settle_peer_type(keeper_config_t *kc, keeper_peer_type_t configured)
{
    kc->peer_type = configured;
    for (int i = 0; i < kc->npeers; i++) {
        if (kc->peers[i].id != kc->server_id)
            continue;
        keeper_peer_type_t by_line = kc->peers[i].observer ? PEER_TYPE_OBSERVER : PEER_TYPE_PARTICIPANT;
        if (by_line != configured)
            log_warn("%s: peerType=%s but server.%d is %s: it is %s, as its server.N line says", kc->path,
                     configured == PEER_TYPE_OBSERVER ? "observer" : "participant", kc->server_id,
                     by_line == PEER_TYPE_OBSERVER ? "an observer" : "a participant",
                     by_line == PEER_TYPE_OBSERVER ? "an observer" : "a participant");
        kc->peer_type = by_line;
    }
}

static int copy_string(config_t *cfg, const char *key, const char *def, char *out, size_t outlen,
                       char *err, size_t errlen)
{
    const char *v = config_get(cfg, key);
    if (!v)
        v = def;
    if (strlen(v) >= outlen) {
        snprintf(err, errlen, "%s: %s is longer than %zu bytes", cfg->path, key, outlen - 1);
        return -1;
    }
    snprintf(out, outlen, "%s", v);
    return 0;
}

static int get_int(config_t *cfg, const char *key, long def, long min, long max, int *out,
                   char *err, size_t errlen)
{
    long v;
    if (config_get_long(cfg, key, def, min, max, &v) < 0) {
        snprintf(err, errlen, "%s", cfg->error);
        return -1;
    }
    *out = (int)v;
    return 0;
}

typedef struct {
    keeper_config_t *kc;
    char *err;
    size_t errlen;
    int failed;
} peer_parse_t;

static int add_peer(keeper_config_t *kc, const ensemble_member_t *m, const char *where, char *err, size_t errlen)
{
    /* Session ids carry the server id in their top byte (session.c): 1 to 255. */
    if (m->id < 1 || m->id > ENSEMBLE_MAX_SERVER_ID) {
        snprintf(err, errlen, "%s: server.%d: the server id must be a number from 1 to 255", where, m->id);
        return -1;
    }
    for (int i = 0; i < kc->npeers; i++)
        if (kc->peers[i].id == m->id) {   /* a later line wins, as in java.util.Properties */
            kc->peers[i] = *m;
            return 0;
        }
    if (kc->npeers >= KEEPER_MAX_SERVERS) {
        snprintf(err, errlen, "%s: more than %d server.N lines", where, KEEPER_MAX_SERVERS);
        return -1;
    }
    kc->peers[kc->npeers++] = *m;
    return 0;
}

/* server.N=host:quorumPort:electionPort[:participant|observer][;[clientAddr:]clientPort],
 * read by ensemble_member_parse, the one reading of these lines in kipper.
 * The client part is kept for /zookeeper/config and, on this member's own
 * line, says where to listen (settle_client_port). */
static void parse_peer(const char *key, const char *value, void *arg)
{
    peer_parse_t *pp = arg;
    if (pp->failed)
        return;
    char *end = NULL;
    errno = 0;
    long id = strtol(key + strlen("server."), &end, 10);
    if (errno || *end || id < 1 || id > ENSEMBLE_MAX_SERVER_ID) {
        snprintf(pp->err, pp->errlen, "%s: %s: the server id must be a number from 1 to 255",
                 pp->kc->path, key);
        pp->failed = 1;
        return;
    }
    ensemble_member_t m;
    char why[256];
    if (ensemble_member_parse(&m, (int)id, value, why, sizeof(why)) != 0) {
        snprintf(pp->err, pp->errlen, "%s: %s must be host:quorumPort:electionPort[:participant|:observer]"
                 "[;[clientAddr:]clientPort], got '%.100s': %s", pp->kc->path, key, value, why);
        pp->failed = 1;
        return;
    }
    if (add_peer(pp->kc, &m, pp->kc->path, pp->err, pp->errlen) < 0)
        pp->failed = 1;
}

/* A membership file is a few lines; anything near this is not one. */
#define MEMBERSHIP_FILE_MAX (1u << 20)

static int read_whole_file(const char *path, char **out, size_t *len, char *err, size_t errlen)
{
    if (fs_read_file(path, MEMBERSHIP_FILE_MAX, out, len) == 0)
        return 0;
    snprintf(err, errlen, "%s: %s", path, errno == EFBIG ? "larger than 1 MiB" : strerror(errno));
    return -1;
}

/* The version a dynamic file's name carries after its last '.', in hex
 * (QuorumPeerConfig.getVersionFromFilename); 0 when it carries none. */
static int64_t version_from_filename(const char *path)
{
    const char *dot = strrchr(path, '.');
    if (!dot || !dot[1])
        return 0;
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(dot + 1, &end, 16);
    if (errno || *end || v > INT64_MAX || dot[1] == '-' || dot[1] == '+')
        return 0;
    return (int64_t)v;
}

/* dynamicConfigFile: the server.N lines live there, with no version inside
 * (its name says it), as QuorumPeerConfig.parse reads it; then
 * <zoo.cfg>.dynamic.next, a reconfig proposed and not committed. */
static int load_dynamic(keeper_config_t *kc, config_t *cfg, char *err, size_t errlen)
{
    const char *v = config_get(cfg, "dynamicConfigFile");
    if (!v)
        return 0;
    if (strlen(v) >= sizeof(kc->dynamic_config_file)) {
        snprintf(err, errlen, "%s: dynamicConfigFile is longer than %zu bytes", cfg->path,
                 sizeof(kc->dynamic_config_file) - 1);
        return -1;
    }
    snprintf(kc->dynamic_config_file, sizeof(kc->dynamic_config_file), "%s", v);
    for (size_t i = 0; i < cfg->count; i++) {
        const char *key = cfg->entries[i].key;
        if (strncmp(key, "server.", 7) == 0 || strncmp(key, "group", 5) == 0 || strncmp(key, "weight", 6) == 0) {
            snprintf(err, errlen, "%s: parameter %s must be in a separate dynamic config file (%s)", cfg->path, key,
                     v);
            return -1;
        }
    }
    char *text;
    size_t len;
    char why[256];
    if (read_whole_file(v, &text, &len, why, sizeof(why)) < 0) {
        snprintf(err, errlen, "%s: dynamicConfigFile cannot be read: %s", cfg->path, why);
        return -1;
    }
    ensemble_config_t *c = malloc(sizeof(*c));
    int rc = c ? ensemble_config_parse(c, text, len, why, sizeof(why)) : -1;
    if (!c)
        snprintf(why, sizeof(why), "out of memory");
    if (rc == 0 && memmem(text, len, "version", 7) && c->version != 0) {
        snprintf(why, sizeof(why), "dynamic file shouldn't have version inside");
        rc = -1;
    }
    free(text);
    for (int i = 0; rc == 0 && i < c->n; i++)
        if (add_peer(kc, &c->members[i], v, err, errlen) < 0) {
            free(c);
            return -1;
        }
    if (rc != 0) {
        snprintf(err, errlen, "%s (dynamicConfigFile of %s): %s", v, cfg->path, why);
        free(c);
        return -1;
    }
    kc->peers_version = version_from_filename(v);
    free(c);
    char next[600];
    snprintf(next, sizeof(next), "%s.dynamic.next", cfg->path);
    if (access(next, F_OK) == 0) {
        if (read_whole_file(next, &text, &len, err, errlen) < 0)
            return -1;
        rc = ensemble_config_parse(&kc->next_ensemble, text, len, why, sizeof(why));
        free(text);
        if (rc == 0)
            kc->has_next_ensemble = 1;
        else   /* as ZooKeeper: an unreadable next file is left, not fatal */
            log_warn("%s: not read: %s", next, why);
    }
    return 0;
}

void keeper_config_ensemble(const keeper_config_t *kc, ensemble_config_t *out)
{
    memset(out, 0, sizeof(*out));
    for (int i = 0; i < kc->npeers; i++)
        ensemble_config_put(out, &kc->peers[i]);
    out->version = kc->peers_version;
}

/* skipACL: ZooKeeper reads the system property zookeeper.skipACL, which a
 * zoo.cfg line "skipACL=yes" also sets (zoo.cfg keys it does not know become
 * "zookeeper." properties); only "yes" turns it on. */
static void get_skip_acl(config_t *cfg, keeper_config_t *kc)
{
    const char *a = config_get(cfg, "skipACL");
    const char *b = config_get(cfg, "zookeeper.skipACL");
    kc->skip_acl = (a && strcmp(a, "yes") == 0) || (b && strcmp(b, "yes") == 0);
    if (kc->skip_acl)
        log_warn("%s: skipACL=yes: no ACL is checked, every client may read and change every node", cfg->path);
}

/* Observers follow a quorum of participants: there must be one to follow. */
static int check_participants(const keeper_config_t *kc, char *err, size_t errlen)
{
    for (int i = 0; i < kc->npeers; i++)
        if (!kc->peers[i].observer)
            return 0;
    snprintf(err, errlen, "%s: every server.N line is an observer: an ensemble needs participants to vote", kc->path);
    return -1;
}

static int read_myid(keeper_config_t *kc, char *err, size_t errlen)
{
    char path[600];
    snprintf(path, sizeof(path), "%s/myid", kc->data_dir);
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "%s: server.N lines are set, so %s must hold this server's id: %s",
                 kc->path, path, strerror(errno));
        return -1;
    }
    char line[64] = "";
    char *got = fgets(line, sizeof(line), f);
    fclose(f);
    char *end = NULL;
    long id = got ? strtol(line, &end, 10) : 0;
    if (!got || end == line || id < 1 || id > ENSEMBLE_MAX_SERVER_ID) {
        snprintf(err, errlen, "%s: must hold a server id from 1 to 255", path);
        return -1;
    }
    for (int i = 0; i < kc->npeers; i++)
        if (kc->peers[i].id == id) {
            kc->server_id = (int)id;
            return 0;
        }
    snprintf(err, errlen, "%s: id %ld has no server.%ld line in %s", path, id, id, kc->path);
    return -1;
}

/* As QuorumPeerConfig.setupClientPort: this member's own server.N line may
 * say where clients connect (";[addr:]port"), which is how ZooKeeper keeps it
 * once it has moved the line to a dynamic file and dropped clientPort from
 * zoo.cfg. A clientPort/clientPortAddress in zoo.cfg that disagrees with it
 * is an error there, and here. */
static int settle_client_port(keeper_config_t *kc, config_t *cfg, char *err, size_t errlen)
{
    const keeper_peer_t *me = NULL;
    for (int i = 0; i < kc->npeers; i++)
        if (kc->peers[i].id == kc->server_id)
            me = &kc->peers[i];
    if (!me || !me->client_addr[0])
        return 0;
    const char *addr = strcmp(me->client_addr, "0.0.0.0") == 0 ? "" : me->client_addr;
    int static_port = config_get(cfg, "clientPort") != NULL;
    int static_addr = config_get(cfg, "clientPortAddress") != NULL;
    if ((static_port && kc->client_port != me->client_port) ||
        (static_addr && strcmp(kc->client_port_address, addr) != 0 &&
         !(strcmp(kc->client_port_address, "0.0.0.0") == 0 && !addr[0]))) {
        snprintf(err, errlen, "%s: the client address of server.%d in the static config (%s:%d) differs from the "
                 "one on its server.%d line (%s:%d)", kc->path, kc->server_id,
                 kc->client_port_address[0] ? kc->client_port_address : "0.0.0.0", kc->client_port, kc->server_id,
                 me->client_addr, me->client_port);
        return -1;
    }
    kc->client_port = me->client_port;
    snprintf(kc->client_port_address, sizeof(kc->client_port_address), "%s", addr);
    return 0;
}

/* ZooKeeper reads the Java system property readonlymode.enabled; a zoo.cfg
 * line becomes the property "zookeeper." + key, so both spellings are taken
 * here (either one true turns the mode on). */
static int get_read_only_mode(config_t *cfg, int *out)
{
    int plain = 0, prefixed = 0;
    if (config_get_bool(cfg, "readonlymode.enabled", 0, &plain) < 0 ||
        config_get_bool(cfg, "zookeeper.readonlymode.enabled", 0, &prefixed) < 0)
        return -1;
    *out = plain || prefixed;
    return 0;
}

static int load_values(keeper_config_t *kc, config_t *cfg, char *err, size_t errlen)
{
    if (get_int(cfg, "tickTime", 2000, 1, 600000, &kc->tick_time, err, errlen) < 0 ||
        get_int(cfg, "initLimit", 10, 1, 100000, &kc->init_limit, err, errlen) < 0 ||
        get_int(cfg, "syncLimit", 5, 1, 100000, &kc->sync_limit, err, errlen) < 0 ||
        get_int(cfg, "clientPort", 2181, 0, 65535, &kc->client_port, err, errlen) < 0 ||
        get_int(cfg, "maxClientCnxns", 60, 0, 1000000, &kc->max_client_cnxns, err, errlen) < 0 ||
        get_int(cfg, "minSessionTimeout", -1, -1, INT32_MAX, &kc->min_session_timeout, err, errlen) < 0 ||
        get_int(cfg, "maxSessionTimeout", -1, -1, INT32_MAX, &kc->max_session_timeout, err, errlen) < 0 ||
        get_int(cfg, "autopurge.snapRetainCount", 3, 3, 1000000, &kc->autopurge_snap_retain_count, err,
                errlen) < 0 ||
        get_int(cfg, "autopurge.purgeInterval", 0, 0, 1000000, &kc->autopurge_purge_interval, err, errlen) < 0 ||
        get_int(cfg, "znode.container.checkIntervalMs", 60000, 10, 86400000, &kc->container_check_interval_ms,
                err, errlen) < 0 ||
        get_int(cfg, "znode.container.maxPerMinute", 10000, 1, 1000000000, &kc->container_max_per_minute, err,
                errlen) < 0 ||
        get_int(cfg, "kipper.maxOutstandingPerConnection", 1000, 1, 1000000, &kc->max_outstanding_per_cnxn,
                err, errlen) < 0 ||
        get_int(cfg, "kipper.maxOutstandingBytesPerConnection", 4 << 20, 64 << 10, 1 << 30,
                &kc->max_outstanding_bytes_per_cnxn, err, errlen) < 0 ||
        get_int(cfg, "globalOutstandingLimit", 1000, 1, 10000000, &kc->global_outstanding_limit, err, errlen) < 0 ||
        get_int(cfg, "kipper.globalOutstandingBytes", 16 << 20, 64 << 10, 1 << 30, &kc->global_outstanding_bytes,
                err, errlen) < 0)
        return -1;
    if (get_int(cfg, "snapCount", 100000, 2, INT32_MAX, &kc->snap_count, err, errlen) < 0)
        return -1;
    int prealloc_kib;
    if (get_int(cfg, "preAllocSize", 65536, 0, 16 * 1024 * 1024, &prealloc_kib, err, errlen) < 0)
        return -1;
    kc->prealloc_bytes = (int64_t)prealloc_kib * 1024;
    const char *force_sync = config_get(cfg, "forceSync");
    kc->force_sync = 1;
    if (force_sync && strcmp(force_sync, "no") == 0) {
        kc->force_sync = 0;
        log_warn("%s: forceSync=no: the transaction log is not fsynced; a crash of the machine can lose "
                 "acknowledged writes",
                 cfg->path);
    } else if (force_sync && strcmp(force_sync, "yes") != 0) {
        snprintf(err, errlen, "%s: forceSync must be yes or no, got '%.80s'", cfg->path, force_sync);
        return -1;
    }
    int maxbuf;
    if (get_int(cfg, "jute.maxbuffer", 0xfffff, 1024, 256 * 1024 * 1024, &maxbuf, err, errlen) < 0)
        return -1;
    kc->jute_maxbuffer = maxbuf;
    if (copy_string(cfg, "dataDir", "", kc->data_dir, sizeof(kc->data_dir), err, errlen) < 0 ||
        copy_string(cfg, "dataLogDir", kc->data_dir, kc->data_log_dir, sizeof(kc->data_log_dir), err,
                    errlen) < 0 ||
        copy_string(cfg, "clientPortAddress", "", kc->client_port_address, sizeof(kc->client_port_address),
                    err, errlen) < 0 ||
        copy_string(cfg, "4lw.commands.whitelist", "", kc->four_letter_whitelist,
                    sizeof(kc->four_letter_whitelist), err, errlen) < 0 ||
        copy_string(cfg, "DigestAuthenticationProvider.superDigest", "", kc->super_digest,
                    sizeof(kc->super_digest), err, errlen) < 0)
        return -1;
    if (config_get_bool(cfg, "extendedTypesEnabled", 1, &kc->extended_types_enabled) < 0 ||
        get_read_only_mode(cfg, &kc->read_only_mode_enabled) < 0 ||
        config_get_bool(cfg, "localSessionsEnabled", 0, &kc->local_sessions_enabled) < 0 ||
        config_get_bool(cfg, "localSessionsUpgradingEnabled", 0, &kc->local_sessions_upgrading) < 0) {
        snprintf(err, errlen, "%s", cfg->error);
        return -1;
    }
    if (kc->data_dir[0] == 0) {
        snprintf(err, errlen, "%s: dataDir is not set", cfg->path);
        return -1;
    }
    if (kc->min_session_timeout < 0)
        kc->min_session_timeout = 2 * kc->tick_time;
    if (kc->max_session_timeout < 0)
        kc->max_session_timeout = 20 * kc->tick_time;
    if (kc->min_session_timeout > kc->max_session_timeout) {
        snprintf(err, errlen, "%s: minSessionTimeout (%d) must not be larger than maxSessionTimeout (%d)",
                 cfg->path, kc->min_session_timeout, kc->max_session_timeout);
        return -1;
    }
    return 0;
}

int keeper_config_load(keeper_config_t *kc, const char *path, char *err, size_t errlen)
{
    memset(kc, 0, sizeof(*kc));
    snprintf(kc->path, sizeof(kc->path), "%s", path);
    config_t cfg;
    if (config_load(&cfg, path) < 0) {
        snprintf(err, errlen, "%s", cfg.error);
        config_free(&cfg);
        return -1;
    }
    keeper_peer_type_t configured_type = PEER_TYPE_PARTICIPANT;
    int rc = get_peer_type(&cfg, &configured_type, err, errlen);
    if (rc == 0)
        rc = load_values(kc, &cfg, err, errlen);
    if (rc == 0)
        rc = check_security(&cfg, err, errlen);
    if (rc == 0 && (config_get_bool(&cfg, "reconfigEnabled", 0, &kc->reconfig_enabled) < 0 ||
                    config_get_bool(&cfg, "standaloneEnabled", 1, &kc->standalone_enabled) < 0)) {
        snprintf(err, errlen, "%s", cfg.error);
        rc = -1;
    }
    if (rc == 0)
        get_skip_acl(&cfg, kc);
    if (rc == 0)
        rc = load_dynamic(kc, &cfg, err, errlen);
    if (rc == 0 && !kc->dynamic_config_file[0]) {
        peer_parse_t pp = {kc, err, errlen, 0};
        config_each_prefix(&cfg, "server.", parse_peer, &pp);
        rc = pp.failed ? -1 : 0;
    }
    if (rc == 0 && kc->npeers > 0)
        rc = check_participants(kc, err, errlen);
    if (rc == 0 && kc->npeers > 0)
        rc = read_myid(kc, err, errlen);
    if (rc == 0 && kc->npeers > 0)
        rc = settle_client_port(kc, &cfg, err, errlen);
    if (rc == 0)
        settle_peer_type(kc, configured_type);
    if (rc == 0) {
        for (size_t i = 0; i < sizeof(accepted_without_effect) / sizeof(accepted_without_effect[0]); i++)
            if (config_get(&cfg, accepted_without_effect[i]))
                log_info("%s: %s has no effect in kipper", path, accepted_without_effect[i]);
        config_warn_unknown(&cfg);
    }
    config_free(&cfg);
    return rc;
}

int keeper_config_4lw_allowed(const keeper_config_t *kc, const char *word)
{
    if (strcmp(word, "srvr") == 0)   /* always on: zkServer.sh status depends on it */
        return 1;
    const char *list = kc->four_letter_whitelist;
    size_t wlen = strlen(word);
    while (*list) {
        while (*list == ' ' || *list == ',')
            list++;
        const char *end = list;
        while (*end && *end != ',')
            end++;
        const char *last = end;
        while (last > list && last[-1] == ' ')
            last--;
        size_t len = (size_t)(last - list);
        if ((len == 1 && *list == '*') || (len == wlen && strncmp(list, word, wlen) == 0))
            return 1;
        list = end;
    }
    return 0;
}
