/* ensemble_config.h -- an ensemble's membership as ZooKeeper 3.8 writes it.
 *
 * One value for the members of an ensemble and the version (the zxid of the
 * reconfig that made it) that is read from zoo.cfg's server.N lines, from a
 * zoo.cfg.dynamic.<version> file, from /zookeeper/config, and from the two
 * forms of a reconfig request; and written back in the exact bytes ZooKeeper
 * writes, so a member can move between ZooKeeper and kipper on one folder
 * (docs/migrating-from-zookeeper.md). Pure: no I/O, no process state; used by
 * keeper/server (config files, prep) and keeper/zab (who votes). */
#ifndef KIPPER_ENSEMBLE_CONFIG_H
#define KIPPER_ENSEMBLE_CONFIG_H

#include <stddef.h>
#include <stdint.h>

/* keeper_config.h's KEEPER_MAX_SERVERS is this value. */
#define ENSEMBLE_MAX_MEMBERS 32
/* Server ids kipper takes: 1 to this (session ids carry one in their top byte). */
#define ENSEMBLE_MAX_SERVER_ID 255

typedef struct {                  /* one server.N line */
    int id;
    char host[256];
    int quorum_port;
    int election_port;
    int observer;                 /* role "observer" (else participant): neither votes nor acknowledges */
    char client_addr[256];        /* the address after ';' ("0.0.0.0" when only a port is given); empty: none */
    int client_port;              /* 0 when the line has no client part */
    int rank;                     /* when it went into ZooKeeper's map of members (ensemble_config_put) */
} ensemble_member_t;

typedef struct {
    ensemble_member_t members[ENSEMBLE_MAX_MEMBERS]; /* in increasing id order */
    int n;
    int64_t version;              /* zxid of the reconfig that made it; 0: the static zoo.cfg's */
    /* ZooKeeper lists members in its HashMap's order: by (id's hash & (table
     * size - 1)), then by when they went in (rank). hash_cap is that table size
     * for a configuration an incremental reconfig built from another one
     * (sized from the old one's count); 0: a map filled from text (16,
     * doubling past 12 and 24 members). For ids below the table size this is
     * id order. */
    int hash_cap;
} ensemble_config_t;

/* The value of a "server.<id>" line, as in zoo.cfg and in reconfig strings:
 * host:quorumPort:electionPort[:participant|:observer][;[clientAddr:]clientPort].
 * 0, or ZooKeeper's answer to a reconfig carrying it (ZBADARGUMENTS, or
 * ZMARSHALLINGERROR where ZooKeeper fails on a Java runtime exception: a port
 * outside 0..65535, a non-numeric id) with the reason in err. */
int ensemble_member_parse(ensemble_member_t *m, int id, const char *value, char *err, size_t errlen);

/* One "server.<id>=value" pair (the reconfig strings' element); 0 or a code as above. */
int ensemble_member_parse_line(ensemble_member_t *m, const char *line, char *err, size_t errlen);

/* The member's value in ZooKeeper's form: host:q:e:role[;addr:port]. */
size_t ensemble_member_format(const ensemble_member_t *m, char *out, size_t cap);

/* The text of zoo.cfg.dynamic.* and /zookeeper/config: server.N lines and an
 * optional "version=<hex>" line. Blank lines and '#' comments are skipped.
 * 0, or -1 with err (a duplicate id, a bad line, too many members). */
int ensemble_config_parse(ensemble_config_t *c, const char *text, size_t len, char *err, size_t errlen);

/* Room for the text of any configuration (format or format_file, the NUL
 * included): a member's line is at most about 560 bytes (two 255-byte
 * addresses, three ports, a role). */
#define ENSEMBLE_CONFIG_TEXT_MAX (ENSEMBLE_MAX_MEMBERS * 700 + 64)

/* ZooKeeper's exact bytes: "server.N=...\n" per member in its map's order, then
 * "version=<lower-case hex>" with no newline after it. Returns the length
 * (as snprintf: may exceed cap, out is always NUL-terminated when cap > 0). */
size_t ensemble_config_format(const ensemble_config_t *c, char *out, size_t cap);

/* What QuorumPeerConfig.writeDynamicConfig writes: the server lines (and the
 * version line when with_version: zoo.cfg.dynamic.next) sorted as strings,
 * joined by '\n', no newline at the end. Length as ensemble_config_format. */
size_t ensemble_config_format_file(const ensemble_config_t *c, int with_version, char *out, size_t cap);

/* Add a member (sorted insert) or replace the one with its id, either way
 * ranked last, as ZooKeeper's remove-then-put; 0 or -1 when full. Remove: 0 or -1 when absent. */
int ensemble_config_put(ensemble_config_t *c, const ensemble_member_t *m);
int ensemble_config_remove(ensemble_config_t *c, int id);

/* The reconfig request's two forms. joining: comma-separated "server.N=..."
 * (or NULL/""); leaving: comma-separated ids (or NULL/""); new_members:
 * comma-separated "server.N=...". next must not be cur. next's version is left at cur's (incremental)
 * or 0; the caller sets it to the txn's zxid. Returns 0, or ZooKeeper's
 * answer (ZBADARGUMENTS, ZMARSHALLINGERROR) with the reason in err, including
 * "at least 1 follower" (ZooKeeper's "at least 2" under standaloneEnabled=true
 * is for the caller to add). */
int ensemble_config_incremental(const ensemble_config_t *cur, const char *joining, const char *leaving,
                                ensemble_config_t *next, char *err, size_t errlen);
int ensemble_config_nonincremental(const char *new_members, ensemble_config_t *next, char *err, size_t errlen);

const ensemble_member_t *ensemble_config_find(const ensemble_config_t *c, int id);
int ensemble_config_voters(const ensemble_config_t *c);          /* participants */
/* Same ids with the same addresses, roles and client parts (version ignored). */
int ensemble_config_same_members(const ensemble_config_t *a, const ensemble_config_t *b);

/* "%llx" of a version, as ZooKeeper names zoo.cfg.dynamic.<version> and writes version=. */
void ensemble_version_hex(int64_t version, char *out, size_t cap);

#endif
