/* broker_meta.c -- meta.properties in a log dir, as a broker checks it at
 * start (broker_meta_load): the properties parser (base/config.c, which
 * bounds the file at 4 MiB) and the checks of version, broker.id and
 * cluster.id against the broker's configuration and the coordinator's
 * cluster id.
 *
 * Input: one meta.properties, in a scratch log dir, checked twice: for
 * broker 1 with no cluster id known yet, and for broker 1 against the
 * coordinator's id "fuzz-cluster-id". A file the loader accepts is never
 * rewritten (the loader writes meta.properties only where it is missing),
 * so nothing accumulates. */
#include "fuzz.h"

#include "broker/core/broker_meta.h"

static broker_config_t config;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_quiet();
    char dir[512];
    if (fuzz_scratch_file(dir, sizeof(dir), NULL, "logs") < 0 || mkdir(dir, 0700) < 0)
        return -1;
    config.broker_id = 1;
    config.n_log_dirs = 1;
    snprintf(config.log_dirs[0], sizeof(config.log_dirs[0]), "%s", dir);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[600];
    snprintf(path, sizeof(path), "%s/meta.properties", config.log_dirs[0]);
    if (fuzz_write_file(path, data, size) < 0)
        abort();
    char cluster_id[128], err[512];
    if (broker_meta_load(&config, NULL, cluster_id, sizeof(cluster_id), err, sizeof(err)) == 0)
        FUZZ_CHECK(cluster_id[0] != 0, "meta.properties accepted without a cluster id");
    if (broker_meta_load(&config, "fuzz-cluster-id", cluster_id, sizeof(cluster_id), err, sizeof(err)) == 0)
        FUZZ_CHECK(strcmp(cluster_id, "fuzz-cluster-id") == 0, "the coordinator's cluster id lost to %s", cluster_id);
    unlink(path);
    return 0;
}
