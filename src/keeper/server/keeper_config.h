/* keeper_config.h -- a keeper's settings, read from ZooKeeper's own zoo.cfg keys. */
#ifndef KIPPER_KEEPER_CONFIG_H
#define KIPPER_KEEPER_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "base/config.h"
#include "keeper/zab/ensemble_config.h"

#define KEEPER_MAX_SERVERS ENSEMBLE_MAX_MEMBERS

/* One server.N line (observer: ":observer" on it, it neither votes nor acknowledges). */
typedef ensemble_member_t keeper_peer_t;

/* What this member is (peerType, and its own server.N line, which wins). */
typedef enum { PEER_TYPE_PARTICIPANT, PEER_TYPE_OBSERVER } keeper_peer_type_t;

typedef struct {
    char path[512];               /* the zoo.cfg read */
    int tick_time;                /* ms */
    int init_limit, sync_limit;   /* ticks */
    char data_dir[512];
    char data_log_dir[512];       /* defaults to data_dir */
    int client_port;
    char client_port_address[256];
    int max_client_cnxns;         /* per IP; 0 = unlimited */
    int min_session_timeout;      /* ms; default 2 x tickTime */
    int max_session_timeout;      /* ms; default 20 x tickTime */
    int32_t jute_maxbuffer;       /* largest request frame, bytes */
    /* Backpressure (server.c): a connection over one of these is not read
     * until it is back under half of it. Requests count from arrival until
     * answered (waiting for the log or the quorum included), replies until
     * written; bytes are the requests' frames and the unsent replies. */
    int max_outstanding_per_cnxn; /* kipper.maxOutstandingPerConnection: requests + unsent replies */
    int max_outstanding_bytes_per_cnxn; /* kipper.maxOutstandingBytesPerConnection */
    int global_outstanding_limit; /* globalOutstandingLimit (ZooKeeper's): requests of every connection */
    int global_outstanding_bytes; /* kipper.globalOutstandingBytes: their bytes */
    char four_letter_whitelist[512];
    int snap_count;               /* snapshot after about this many txns (randomised) */
    int force_sync;               /* forceSync: fdatasync the log before answering */
    int64_t prealloc_bytes;       /* preAllocSize (given in KiB) */
    int autopurge_snap_retain_count;
    int autopurge_purge_interval; /* hours */
    char super_digest[256];       /* DigestAuthenticationProvider.superDigest: "super:<hash>" */
    int read_only_mode_enabled;   /* readonlymode.enabled: serve read-only clients while looking */
    int local_sessions_enabled;   /* localSessionsEnabled: new sessions live on this member alone */
    int local_sessions_upgrading; /* localSessionsUpgradingEnabled: an ephemeral create makes one global */
    int extended_types_enabled;   /* extendedTypesEnabled: TTL nodes (default on in kipper) */
    int container_check_interval_ms;
    int container_max_per_minute;
    int server_id;                /* myid; 0 when standalone */
    keeper_peer_type_t peer_type; /* from this member's server.N line (peerType must agree or is overruled) */
    /* The membership read at start: zoo.cfg's server.N lines, or (dynamicConfigFile)
     * that file's, with the version its name carries. peers/npeers are its members. */
    keeper_peer_t peers[KEEPER_MAX_SERVERS];
    int npeers;
    int64_t peers_version;
    char dynamic_config_file[512];  /* dynamicConfigFile as written; empty: the server.N lines are in zoo.cfg */
    ensemble_config_t next_ensemble;/* zoo.cfg.dynamic.next: proposed, never committed */
    int has_next_ensemble;
    int reconfig_enabled;         /* reconfigEnabled: the reconfig request and the dynamic files */
    int standalone_enabled;       /* standaloneEnabled: a reconfig keeps at least 2 voters (else 1) */
    int skip_acl;                 /* skipACL / zookeeper.skipACL = yes: no ACL is checked */
} keeper_config_t;

/* The membership cfg was started with, as one value (version peers_version). */
void keeper_config_ensemble(const keeper_config_t *kc, ensemble_config_t *out);

/* Read zoo.cfg (and dataDir/myid when server.N lines exist). 0, or -1 with
 * a message naming the key in err. Unknown keys are logged as warnings. */
int keeper_config_load(keeper_config_t *kc, const char *path, char *err, size_t errlen);

/* Is this four-letter word allowed by 4lw.commands.whitelist? */
int keeper_config_4lw_allowed(const keeper_config_t *kc, const char *word);

#endif
