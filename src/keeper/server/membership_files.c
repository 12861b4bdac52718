/* membership_files.c -- the ensemble's membership on disk and in /zookeeper/config.
 *
 * ZooKeeper 3.8 with reconfigEnabled keeps the membership in files next to
 * zoo.cfg: zoo.cfg.dynamic.<version> (committed; zoo.cfg's dynamicConfigFile
 * names it and zoo.cfg loses its server.N lines) and zoo.cfg.dynamic.next (a
 * reconfig proposed and not yet committed), and copies a zoo.cfg that still
 * had server.N lines to zoo.cfg.bak at start. kipper writes the same files the
 * same way, so a member can be switched between ZooKeeper and kipper on one
 * folder (docs/migrating-from-zookeeper.md).
 *
 * Durability: these files are written on the event loop (a reconfig commits
 * there) with a rename but no fsync, so the loop never waits for the disk. The
 * reconfig transaction itself is in the fsynced log, and at start
 * keeper_ensemble_start() takes a newer configuration the log left in
 * /zookeeper/config as the last seen one (a proposal: the log may hold it
 * uncommitted), which the ensemble then completes or drops as any pending
 * reconfig (keeper/zab/leader.c), so a crash between the commit and the file
 * reaching the disk loses nothing. */
#define _GNU_SOURCE
#include "keeper_impl.h"
#include "base/clock.h"
#include "base/config.h"
#include "base/fsutil.h"
#include "base/logging.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


/* Does a later entry of cfg have the same key (java.util.Properties keeps the last)? */
static int overridden(const config_t *cfg, size_t i)
{
    for (size_t j = i + 1; j < cfg->count; j++)
        if (strcmp(cfg->entries[j].key, cfg->entries[i].key) == 0)
            return 1;
    return 0;
}

static int starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* QuorumPeerConfig.editStaticConfig: zoo.cfg without its membership keys
 * (server.*, group*, weight*, dynamicConfigFile, peerType, and the client
 * port keys when this member's line has a client part), then
 * dynamicConfigFile=<absolute path>. ZooKeeper writes the kept keys in its
 * hash table's order; kipper keeps the file's order (both read the same). */
static int edit_static_config(const keeper_t *k, const char *dynamic_path, int erase_client_port)
{
    config_t cfg;
    if (config_load(&cfg, k->cfg.path) < 0) {
        log_error("cannot rewrite %s: %s", k->cfg.path, cfg.error);
        return -1;
    }
    size_t cap = 4096, len = 0;
    for (size_t i = 0; i < cfg.count; i++)
        cap += strlen(cfg.entries[i].key) + strlen(cfg.entries[i].value) + 2;
    char *out = malloc(cap + PATH_MAX + 32);
    if (!out) {
        config_free(&cfg);
        return -1;
    }
    for (size_t i = 0; i < cfg.count; i++) {
        const char *key = cfg.entries[i].key;
        if (overridden(&cfg, i) || starts_with(key, "server.") || starts_with(key, "group") ||
            starts_with(key, "weight") || starts_with(key, "dynamicConfigFile") || starts_with(key, "peerType") ||
            (erase_client_port && starts_with(key, "clientPort")))
            continue;
        len += (size_t)sprintf(out + len, "%s=%s\n", key, cfg.entries[i].value);
    }
    config_free(&cfg);
    char abs[PATH_MAX];
    if (!realpath(dynamic_path, abs))
        snprintf(abs, sizeof(abs), "%s", dynamic_path);
    len += (size_t)sprintf(out + len, "dynamicConfigFile=%s\n", abs);
    int rc = fs_write_replace(k->cfg.path, out, len, 0);
    if (rc < 0)
        log_error("cannot rewrite %s: %s", k->cfg.path, strerror(errno));
    free(out);
    return rc;
}

int keeper_config_store(keeper_t *k, const ensemble_config_t *c, int committed)
{
    if (!k->cfg.reconfig_enabled)   /* ZooKeeper writes no dynamic file with reconfig off */
        return 0;
    char *text = malloc(ENSEMBLE_CONFIG_TEXT_MAX);
    if (!text)
        return -1;
    size_t len = ensemble_config_format_file(c, !committed, text, ENSEMBLE_CONFIG_TEXT_MAX);
    char path[PATH_MAX];
    int rc;
    if (!committed) {
        snprintf(path, sizeof(path), "%s.dynamic.next", k->cfg.path);
        rc = fs_write_replace(path, text, len, 0);
    } else {
        char hex[24];
        ensemble_version_hex(c->version, hex, sizeof(hex));
        snprintf(path, sizeof(path), "%s.dynamic.%s", k->cfg.path, hex);
        rc = fs_write_replace(path, text, len, 0);
        if (rc == 0) {
            const ensemble_member_t *me = ensemble_config_find(c, k->cfg.server_id);
            rc = edit_static_config(k, path, me && me->client_addr[0]);
        }
        if (rc == 0 && c->version >= k->last_seen.version) {   /* nothing proposed beyond it */
            char next[PATH_MAX];
            snprintf(next, sizeof(next), "%s.dynamic.next", k->cfg.path);
            unlink(next);
        }
        /* ZooKeeper's processReconfig re-sets /zookeeper/config from every
         * activation (initConfigInZKDatabase), a reconfig txn's or not; where a
         * txn made it, the txn's apply comes after and leaves the leader's
         * text and the txn's time. Here the apply may come first: a node
         * already at this version is left as the txn made it. */
        const znode_t *node = k->tree ? tree_lookup(k->tree, TREE_CONFIG_NODE) : NULL;
        if (node && c->version >= k->config.version && node->mzxid < c->version)
            keeper_config_node_set(k, c, (int64_t)clock_wall_ms());
    }
    if (rc < 0)
        log_error("cannot write %s: %s", path, strerror(errno));
    else
        log_info("wrote %s (configuration version %llx)", path, (unsigned long long)c->version);
    free(text);
    return rc;
}

int keeper_config_node_set(keeper_t *k, const ensemble_config_t *c, int64_t mtime)
{
    char *text = malloc(ENSEMBLE_CONFIG_TEXT_MAX);
    if (!text)
        return -1;
    size_t len = ensemble_config_format(c, text, ENSEMBLE_CONFIG_TEXT_MAX);
    /* As ZKDatabase.initConfigInZKDatabase: setData with version -1, the
     * configuration's version as mzxid, the wall clock as mtime. Not a
     * transaction: every member derives it from its own configuration. */
    txn_header_t hdr;
    memset(&hdr, 0, sizeof(hdr));
    hdr.type = OP_SET_DATA;
    hdr.zxid = c->version;
    hdr.time = mtime;
    txn_t txn;
    txn_init(&txn, OP_SET_DATA);
    txn.path = strdup(TREE_CONFIG_NODE);
    txn.data = (uint8_t *)text;
    txn.data_len = (int32_t)len;
    txn.version = -1;
    txn_result_t r;
    int64_t last = tree_last_zxid(k->tree);   /* not a transaction: the tree's zxid stays */
    int err = txn.path ? tree_apply(k->tree, &hdr, &txn, &r) : ZSYSTEMERROR;
    tree_set_last_zxid(k->tree, last);
    if (txn.path)
        txn_result_free(&r);
    txn_free(&txn);   /* frees text */
    return err == ZOK ? 0 : -1;
}

int keeper_config_from_txn(const txn_header_t *hdr, const txn_t *txn, ensemble_config_t *out)
{
    if (hdr->type != OP_RECONFIG || !txn->path || strcmp(txn->path, TREE_CONFIG_NODE) != 0 || !txn->data ||
        txn->data_len < 0)
        return -1;
    char why[256];
    if (ensemble_config_parse(out, (const char *)txn->data, (size_t)txn->data_len, why, sizeof(why)) != 0) {
        log_warn("reconfig txn %llx: its configuration is not readable: %s", (unsigned long long)hdr->zxid, why);
        return -1;
    }
    out->version = hdr->zxid;   /* the text says so too; the zxid is what ZooKeeper trusts */
    return 0;
}

/* QuorumPeerConfig.backupOldConfig: with reconfigEnabled, a zoo.cfg holding
 * its server.N lines is copied to zoo.cfg.bak at start. */
static void backup_static_config(const keeper_t *k)
{
    char *text;
    size_t len;
    if (fs_read_file(k->cfg.path, 1u << 20, &text, &len) < 0) {   /* a zoo.cfg is a few KiB */
        log_warn("cannot read %s to back it up: %s", k->cfg.path, strerror(errno));
        return;
    }
    char bak[PATH_MAX];
    snprintf(bak, sizeof(bak), "%s.bak", k->cfg.path);
    if (fs_write_atomic(bak, text, len) < 0)
        log_warn("cannot write %s: %s", bak, strerror(errno));
    free(text);
}

/* The configuration /zookeeper/config holds after recovery: the log's newest
 * reconfig, committed or only proposed. */
static int config_in_tree(const keeper_t *k, ensemble_config_t *out)
{
    const znode_t *n = tree_lookup(k->tree, TREE_CONFIG_NODE);
    if (!n || n->data_len <= 0)
        return -1;
    char why[256];
    if (ensemble_config_parse(out, (const char *)n->data, (size_t)n->data_len, why, sizeof(why)) != 0)
        return -1;
    return out->n > 0 ? 0 : -1;
}

void keeper_ensemble_start(keeper_t *k)
{
    keeper_config_ensemble(&k->cfg, &k->config);
    k->last_seen = k->config;
    k->reconfig_enabled = k->cfg.reconfig_enabled;
    if (k->cfg.npeers == 0)   /* standalone: no membership, /zookeeper/config stays empty */
        return;
    if (k->reconfig_enabled) {
        if (!k->cfg.dynamic_config_file[0])
            backup_static_config(k);
        /* ZooKeeper takes the next file as last seen only with reconfig on. */
        if (k->cfg.has_next_ensemble && k->cfg.next_ensemble.version > k->config.version)
            k->last_seen = k->cfg.next_ensemble;
        ensemble_config_t *logged = malloc(sizeof(*logged));
        if (logged && config_in_tree(k, logged) == 0 && logged->version > k->last_seen.version) {
            log_warn("the log holds configuration %llx, newer than %s's files (%llx): taking it as the last "
                     "seen one, for the ensemble to complete", (unsigned long long)logged->version, k->cfg.path,
                     (unsigned long long)k->last_seen.version);
            k->last_seen = *logged;
            keeper_config_store(k, logged, 0);
        }
        free(logged);
    }
    keeper_config_node_set(k, &k->config, (int64_t)clock_wall_ms());
}
