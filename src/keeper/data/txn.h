/* txn.h -- ZooKeeper transactions: the one form in which a change reaches the
 * data tree, the transaction log (keeper/disk/txnlog.h) and the other members
 * of an ensemble (PROPOSAL packets, keeper/zab).
 *
 * A txn is produced by prep (prep.c) from a validated client request, with
 * every non-deterministic input resolved (final sequential path, time,
 * zxid, new version numbers), so applying it is deterministic and never
 * fails for a reason other than a bug. Bodies serialize exactly as
 * ZooKeeper's jute records (zookeeper.jute, module org.apache.zookeeper.txn). */
#ifndef KIPPER_KEEPER_TXN_H
#define KIPPER_KEEPER_TXN_H

#include <stdint.h>

#include "base/buf.h"
#include "jute.h"
#include "proto.h"

/* TxnHeader. type is an OP_* code (OP_CREATE, OP_CREATE2, OP_CREATE_CONTAINER,
 * OP_CREATE_TTL, OP_DELETE, OP_DELETE_CONTAINER, OP_SET_DATA, OP_SET_ACL,
 * OP_CHECK, OP_MULTI, OP_CREATE_SESSION, OP_CLOSE_SESSION, OP_ERROR). */
typedef struct {
    int64_t client_id;   /* session id */
    int32_t cxid;
    int64_t zxid;
    int64_t time;        /* wall-clock ms when prepared */
    int32_t type;
} txn_header_t;

typedef struct txn txn_t;

/* One txn body; which fields are meaningful depends on type:
 *   CreateTxn (OP_CREATE, OP_CREATE2): path data acl ephemeral parent_cversion
 *   CreateContainerTxn (OP_CREATE_CONTAINER): path data acl parent_cversion
 *   CreateTTLTxn (OP_CREATE_TTL): path data acl parent_cversion ttl
 *   DeleteTxn (OP_DELETE, OP_DELETE_CONTAINER): path
 *   SetDataTxn (OP_SET_DATA): path data version (the node's new version)
 *   SetACLTxn (OP_SET_ACL): path acl version (the node's new aversion)
 *   CheckVersionTxn (OP_CHECK): path version
 *   CreateSessionTxn (OP_CREATE_SESSION): timeout
 *   CloseSessionTxn (OP_CLOSE_SESSION): paths (the session's ephemerals)
 *   ErrorTxn (OP_ERROR): err
 *   MultiTxn (OP_MULTI): subs (each sub has its own type; a failed multi is
 *     all OP_ERROR subs, as ZooKeeper writes it) */
struct txn {
    int32_t type;
    char *path;
    uint8_t *data;
    int32_t data_len;   /* -1 = null */
    acl_list_t acl;
    int ephemeral;
    int32_t parent_cversion;
    int64_t ttl;
    int32_t version;
    int32_t timeout;
    int32_t err;
    char **paths;
    int32_t npaths;
    txn_t *subs;
    int32_t nsubs;
};

void txn_init(txn_t *t, int32_t type);
void txn_free(txn_t *t);                     /* frees the body's contents, not t itself */

/* Serialize header and body as ZooKeeper does (TxnHeader, then the body
 * record; MultiTxn as a vector of {type, buffer} pairs). 0 or -1. */
int txn_header_write(buf_t *out, const txn_header_t *hdr);
int txn_body_write(buf_t *out, const txn_t *t);
/* Parse; return 0 or -1 on malformed/truncated input (never crash, bounded sizes). */
int txn_header_read(jute_in_t *in, txn_header_t *hdr);
int txn_body_read(jute_in_t *in, int32_t type, txn_t *t);
/* txn_body_read initializes t itself; on -1 t holds nothing. A MultiTxn's
 * sub-records must each fill their buffer exactly, and a multi never nests. */

/* 1 if a MultiTxn may carry a sub-txn of this type: the ops a multi request
 * can hold (create kinds, delete kinds, setData, setACL, check) and the
 * ErrorTxn of a failed multi. */
int txn_allowed_in_multi(int32_t type);

/* What applying a txn produced, for building the client's reply. */
typedef struct txn_result txn_result_t;
struct txn_result {
    int32_t type;       /* the txn type applied (OP_ERROR for a failed op) */
    int32_t err;        /* ZOK or the error code */
    char *path;         /* the txn's path (the created path for create kinds), owned */
    zstat_t stat;       /* create2/createTTL/createContainer, setData, setACL */
    int has_stat;
    txn_result_t *subs; /* multi: one result per op */
    int32_t nsubs;
};

void txn_result_free(txn_result_t *r);

#endif
