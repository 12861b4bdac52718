/* tree.h -- the data tree (ZooKeeper's DataTree).
 *
 * Znodes are found by full path through a hash table and linked to their
 * parent and children. The tree changes only through tree_apply(), which
 * applies one transaction exactly as ZooKeeper's DataTree.processTxn does,
 * fires the watches the change triggers, and records the last applied zxid.
 * Readers get const znodes and must not keep pointers across an apply. */
#ifndef KIPPER_KEEPER_TREE_H
#define KIPPER_KEEPER_TREE_H

#include <stddef.h>
#include <stdint.h>

#include "base/hashmap.h"
#include "proto.h"
#include "txn.h"
#include "watch.h"

typedef struct znode znode_t;
struct znode {
    char *path;              /* full path, allocated with the node; "/" for the root */
    znode_t *parent;
    uint8_t *data;           /* NULL when data_len <= 0; in the node's allocation
                                or one of its own (tree.c, node_new) */
    const acl_list_t *acl;   /* the tree's shared copy (ACLs are interned, as
                                ZooKeeper's ACL cache does); read-only */
    int64_t czxid, mzxid, ctime, mtime, pzxid;
    int64_t ephemeral_owner; /* session id, EPHEMERAL_OWNER_CONTAINER, TTL form, or 0
                                (clients see 0 for container and TTL nodes) */
    znode_t **children;
    hmap_node_t path_node;   /* in the tree's path table */
    znode_t *session_next;   /* the owning session's ephemeral list; container and
                                TTL nodes are chained on the tree's list of them */
    znode_t *session_prev;
    /* The 32-bit fields together, so that no padding sits between them:
     * every byte of this struct is paid once per znode. */
    uint32_t name_off;       /* the last component: path + name_off (znode_name) */
    int32_t data_len;        /* -1 for null data (as created with null) */
    int32_t version, aversion;
    /* ZooKeeper's persisted cversion: the number of child creates (a delete
     * only moves pzxid). Sequential names use it; clients see
     * 2 * cversion - nchildren (tree_fill_stat), as DataNode.copyStat. */
    int32_t cversion;
    int32_t nchildren, children_cap;
    int32_t index_in_parent; /* slot in parent->children, for O(1) removal */
};

/* The last component of a node's path ("" for the root). */
static inline const char *znode_name(const znode_t *n)
{
    return n->path + n->name_off;
}

typedef struct tree tree_t;

/* The ensemble's membership (dynamic reconfiguration), read-only to clients. */
#define TREE_CONFIG_NODE "/zookeeper/config"

/* A tree with "/" and "/zookeeper" (and "/zookeeper/quota", "/zookeeper/config"
 * as ZooKeeper 3.8 has them), firing watches through wm (may be NULL). */
tree_t *tree_create(watch_manager_t *wm);
void tree_destroy(tree_t *tree);

/* "" finds the root, as ZooKeeper's node map aliases it. */
const znode_t *tree_lookup(const tree_t *tree, const char *path);
/* The Stat clients see (cversion and ephemeralOwner translated as above). */
void tree_fill_stat(const znode_t *node, zstat_t *out);
/* The stat as stored (ZooKeeper's StatPersisted, which its PrepRequestProcessor
 * works on): cversion counts child creates (so a sequential suffix is this
 * cversion and a create's parent_cversion is cversion + 1; deletes leave it
 * alone) and ephemeral_owner is raw (container/TTL forms kept). */
void tree_fill_stat_persisted(const znode_t *node, zstat_t *out);

/* Apply one transaction; fills result (caller frees with txn_result_free).
 * Returns result->err. Never fails on a txn prep validated, except for
 * ZNONODE/ZNODEEXISTS when replaying (as ZooKeeper tolerates).
 * hdr->type selects the body (txn->type is not consulted at the top level;
 * a multi's subs use their own type). txn may be NULL for bodiless types.
 * Beyond ZooKeeper's tree, which trusts prep blindly, a txn that would
 * break the tree's invariants changes nothing and reports ZBADARGUMENTS
 * (invalid path, bad ttl, nested multi), ZNOTEMPTY (delete of a node with
 * children), ZNOCHILDRENFOREPHEMERALS, or ZSYSTEMERROR (out of memory). */
int tree_apply(tree_t *tree, const txn_header_t *hdr, const txn_t *txn, txn_result_t *result);

int64_t tree_last_zxid(const tree_t *tree);
/* Znodes in the tree, root included (4 when fresh). ZooKeeper's
 * getNodeCount (mntr zk_znode_count) is one more: its map also holds the
 * root under "". */
size_t tree_node_count(const tree_t *tree);
size_t tree_ephemeral_count(const tree_t *tree);
/* Sum of path lengths and data sizes, as ZooKeeper's cached
 * approximateDataSize (mntr zk_approximate_data_size; 44 when fresh). */
int64_t tree_approximate_data_size(const tree_t *tree);

/* The ephemerals of a session, newest first; fn returns nonzero to stop. */
void tree_each_session_ephemeral(const tree_t *tree, int64_t session_id,
                                 int (*fn)(const znode_t *node, void *arg), void *arg);
size_t tree_session_ephemeral_count(const tree_t *tree, int64_t session_id);
/* Distinct sessions owning ephemerals now (for "dump"-style reports). */
void tree_each_ephemeral_session(const tree_t *tree, void (*fn)(int64_t session_id, void *arg), void *arg);

/* Total number of descendants of a node (getAllChildrenNumber); O(subtree). */
int64_t tree_descendant_count(const znode_t *node);

/* Container and TTL nodes ready for deletion, as ZooKeeper's ContainerManager
 * finds them: containers that have had children (cversion > 0) and have none
 * now; TTL nodes with no children whose mtime is older than their ttl at
 * now_ms. fn returns nonzero to stop (e.g. after a per-minute budget); it
 * must not change the tree (collect paths, then apply deleteContainer txns). */
void tree_each_expired_container(const tree_t *tree, int64_t now_ms,
                                 int (*fn)(const znode_t *node, void *arg), void *arg);

/* setWatches (ZooKeeper's DataTree.setWatches): for each path, fire at once
 * what happened after relative_zxid, else register the watch. */
void tree_set_watches(tree_t *tree, int64_t relative_zxid,
                      char *const *data_paths, int ndata,
                      char *const *exist_paths, int nexist,
                      char *const *child_paths, int nchild,
                      char *const *persistent_paths, int npersistent,
                      char *const *recursive_paths, int nrecursive,
                      void *watcher);

/* The ttl encoded in an ephemeral_owner, or -1 if the node is not a TTL node. */
int64_t tree_ttl_of(int64_t ephemeral_owner);

/* ---- snapshots (snapshot.c) ---- */

/* Visit every znode once, parents before children (pre-order, as
 * ZooKeeper's DataTree.serializeNode). fn must not change the tree; a
 * nonzero return stops the walk and is returned (0 after a full walk). */
int tree_walk(const tree_t *tree, int (*fn)(const znode_t *node, void *arg), void *arg);

/* The distinct ACLs the nodes use (ZooKeeper's ReferenceCountedACLCache),
 * each with an id >= 1 that stays the same while any node uses it, so a
 * snapshot can write every ACL once and each node's ACL as its id. */
size_t tree_acl_count(const tree_t *tree);
int tree_each_acl(const tree_t *tree, int (*fn)(int64_t id, const acl_list_t *acl, void *arg), void *arg);
int64_t tree_acl_id(const tree_t *tree, const znode_t *node);

/* Restoring: a tree with no nodes at all, filled by tree_restore_node
 * (root first, every parent before its children), then checked by
 * tree_restore_finish; tree_set_last_zxid gives it the snapshot's zxid. */
tree_t *tree_create_empty(watch_manager_t *wm);
/* Add one node as a snapshot holds it: path ("/" for the root; not
 * NUL-terminated), data (data_len -1 = null), ACL (interned here; the
 * caller keeps its copy) and the persisted stat (tree_fill_stat_persisted's
 * form: raw cversion and ephemeral_owner; data_length and num_children are
 * ignored, the tree derives them). Indexes the node by path, under its
 * parent, and on its session's ephemeral list or the container/TTL list.
 * Fires no watches. 0, or -1 with the reason in err and the tree unchanged:
 * duplicate path, missing parent, invalid path, child of an ephemeral, root
 * with an owner, out of memory. */
int tree_restore_node(tree_t *tree, const char *path, size_t path_len, const uint8_t *data, int32_t data_len,
                      const acl_list_t *acl, const zstat_t *stat, char *err, size_t errlen);
/* 0 if the restored nodes form a tree (there is a root); else -1 with err. */
int tree_restore_finish(const tree_t *tree, char *err, size_t errlen);
void tree_set_last_zxid(tree_t *tree, int64_t zxid);

#endif
