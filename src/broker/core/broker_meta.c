/* broker_meta.c -- meta.properties in each log dir, as Kafka keeps it: the
 * cluster id and broker id the dir belongs to, so a dir moved to the wrong
 * broker or cluster is refused instead of silently mixed in. */
#define _GNU_SOURCE
#include "broker_meta.h"
#include "base/fsutil.h"
#include "base/logging.h"
#include "broker/coord/coord_data.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

/* Kafka's Uuid.randomUuid().toString(): 16 random bytes, written as a topic
 * id is (URL-safe base64 without padding, 22 characters). */
static int random_cluster_id(char *out, size_t outlen)
{
    uint8_t r[16];
    if (outlen < 23 || getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
        return -1;
    coord_topic_id_format(r, out);
    return 0;
}

/* 1 and fills id/bid when dir has meta.properties, 0 when not, -1 on error. */
static int read_meta(const char *dir, char *id, size_t idlen, long *bid, char *err, size_t errlen)
{
    char path[BROKER_PATH_MAX + 32];
    snprintf(path, sizeof(path), "%s/meta.properties", dir);
    if (access(path, F_OK) < 0 && errno == ENOENT)
        return 0;
    config_t cfg;
    if (config_load(&cfg, path) < 0) {
        snprintf(err, errlen, "%s", cfg.error);
        return -1;
    }
    long version;
    const char *cid = config_get(&cfg, "cluster.id");
    int rc = 1;
    if (config_get_long(&cfg, "version", -1, 0, 0, &version) < 0 ||
        config_get_long(&cfg, "broker.id", -1, 0, INT32_MAX, bid) < 0) {
        snprintf(err, errlen, "%s", cfg.error);
        rc = -1;
    } else if (!cid || !*cid || strlen(cid) >= idlen || *bid < 0) {
        snprintf(err, errlen, "%s: needs version=0, cluster.id and broker.id", path);
        rc = -1;
    } else {
        snprintf(id, idlen, "%s", cid);
    }
    config_free(&cfg);
    return rc;
}

/* Written atomically, so a crash leaves either no meta.properties or a whole one. */
static int write_meta(const char *dir, const char *cluster_id, int32_t broker_id, char *err, size_t errlen)
{
    char path[BROKER_PATH_MAX + 32], text[256];
    snprintf(path, sizeof(path), "%s/meta.properties", dir);
    int n = snprintf(text, sizeof(text), "#\n#kipper broker\nversion=0\ncluster.id=%s\nbroker.id=%d\n",
                     cluster_id, (int)broker_id);
    if (fs_write_atomic(path, text, (size_t)n) < 0) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

int broker_meta_load(const broker_config_t *bc, const char *coord_id, char *cluster_id, size_t idlen, char *err,
                     size_t errlen)
{
    int have[BROKER_MAX_LOG_DIRS] = {0};
    cluster_id[0] = 0;
    for (int i = 0; i < bc->n_log_dirs; i++) {
        char id[128];
        long bid;
        const char *dir = bc->log_dirs[i];
        if (fs_make_dirs(dir) < 0) {
            snprintf(err, errlen, "log.dirs: cannot create %s: %s", dir, strerror(errno));
            return -1;
        }
        int r = read_meta(dir, id, sizeof(id), &bid, err, errlen);
        if (r < 0)
            return -1;
        if (r == 0)
            continue;
        have[i] = 1;
        if (bid != bc->broker_id) {
            snprintf(err, errlen, "configured broker.id %d does not match broker.id %ld in %s/meta.properties",
                     (int)bc->broker_id, bid, dir);
            return -1;
        }
        if (cluster_id[0] && strcmp(cluster_id, id) != 0) {
            snprintf(err, errlen, "log dirs belong to different clusters: %s and %s (%s)", cluster_id, id, dir);
            return -1;
        }
        snprintf(cluster_id, idlen, "%s", id);
    }
    /* The coordinator's /cluster/id wins; log dirs that belong to another
     * cluster are refused (Kafka's InconsistentClusterIdException). */
    if (coord_id && coord_id[0]) {
        if (cluster_id[0] && strcmp(cluster_id, coord_id) != 0) {
            snprintf(err, errlen,
                     "the cluster id %s in the coordinator does not match %s in meta.properties of the log dirs; "
                     "the broker is pointed at another cluster's coordinator, or its log dirs belong to another "
                     "cluster",
                     coord_id, cluster_id);
            return -1;
        }
        snprintf(cluster_id, idlen, "%s", coord_id);
    }
    if (!cluster_id[0]) {
        if (random_cluster_id(cluster_id, idlen) < 0) {
            snprintf(err, errlen, "cannot generate a cluster id: %s", strerror(errno));
            return -1;
        }
        log_info("new cluster id %s", cluster_id);
    }
    for (int i = 0; i < bc->n_log_dirs; i++)
        if (!have[i] && write_meta(bc->log_dirs[i], cluster_id, bc->broker_id, err, errlen) < 0)
            return -1;
    return 0;
}
