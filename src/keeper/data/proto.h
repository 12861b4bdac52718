/* proto.h -- ZooKeeper's client-protocol constants and shared records.
 *
 * Numbers are ZooKeeper 3.8's own (ZooDefs.OpCode, KeeperException.Code,
 * Watcher.Event, ZooDefs.Perms, CreateMode) so clients and a mixed ensemble
 * see exactly what Apache ZooKeeper would send. */
#ifndef KIPPER_KEEPER_PROTO_H
#define KIPPER_KEEPER_PROTO_H

#include <stdint.h>

/* Operation codes (request types and txn types). */
enum {
    OP_NOTIFICATION = 0,
    OP_CREATE = 1,
    OP_DELETE = 2,
    OP_EXISTS = 3,
    OP_GET_DATA = 4,
    OP_SET_DATA = 5,
    OP_GET_ACL = 6,
    OP_SET_ACL = 7,
    OP_GET_CHILDREN = 8,
    OP_SYNC = 9,
    OP_PING = 11,
    OP_GET_CHILDREN2 = 12,
    OP_CHECK = 13,
    OP_MULTI = 14,
    OP_CREATE2 = 15,
    OP_RECONFIG = 16,
    OP_CHECK_WATCHES = 17,
    OP_REMOVE_WATCHES = 18,
    OP_CREATE_CONTAINER = 19,
    OP_DELETE_CONTAINER = 20,
    OP_CREATE_TTL = 21,
    OP_MULTI_READ = 22,
    OP_AUTH = 100,
    OP_SET_WATCHES = 101,
    OP_SASL = 102,
    OP_GET_EPHEMERALS = 103,
    OP_GET_ALL_CHILDREN_NUMBER = 104,
    OP_SET_WATCHES2 = 105,
    OP_ADD_WATCH = 106,
    OP_WHO_AM_I = 107,
    OP_CREATE_SESSION = -10,
    OP_CLOSE_SESSION = -11,
    OP_ERROR = -1,
};

/* Error codes (KeeperException.Code). */
enum {
    ZOK = 0,
    ZSYSTEMERROR = -1,
    ZRUNTIMEINCONSISTENCY = -2,
    ZDATAINCONSISTENCY = -3,
    ZCONNECTIONLOSS = -4,
    ZMARSHALLINGERROR = -5,
    ZUNIMPLEMENTED = -6,
    ZOPERATIONTIMEOUT = -7,
    ZBADARGUMENTS = -8,
    ZUNKNOWNSESSION = -12,
    ZNEWCONFIGNOQUORUM = -13,
    ZRECONFIGINPROGRESS = -14,
    ZAPIERROR = -100,
    ZNONODE = -101,
    ZNOAUTH = -102,
    ZBADVERSION = -103,
    ZNOCHILDRENFOREPHEMERALS = -108,
    ZNODEEXISTS = -110,
    ZNOTEMPTY = -111,
    ZSESSIONEXPIRED = -112,
    ZINVALIDCALLBACK = -113,
    ZINVALIDACL = -114,
    ZAUTHFAILED = -115,
    ZSESSIONMOVED = -118,
    ZNOTREADONLY = -119,
    ZEPHEMERALONLOCALSESSION = -120,
    ZNOWATCHER = -121,
    ZRECONFIGDISABLED = -123,
    ZSESSIONCLOSEDREQUIRESASLAUTH = -124,
    ZQUOTAEXCEEDED = -125,
    ZTHROTTLEDOP = -127,
};

/* Watcher event types and keeper states. */
enum {
    EVENT_NONE = -1,
    EVENT_NODE_CREATED = 1,
    EVENT_NODE_DELETED = 2,
    EVENT_NODE_DATA_CHANGED = 3,
    EVENT_NODE_CHILDREN_CHANGED = 4,
    EVENT_DATA_WATCH_REMOVED = 5,
    EVENT_CHILD_WATCH_REMOVED = 6,
    EVENT_PERSISTENT_WATCH_REMOVED = 7,
};
enum {
    STATE_DISCONNECTED = 0,
    STATE_SYNC_CONNECTED = 3,
    STATE_AUTH_FAILED = 4,
    STATE_CONNECTED_READ_ONLY = 5,
    STATE_EXPIRED = -112,
    STATE_CLOSED = 7,
};

/* Special xids. */
enum { XID_NOTIFICATION = -1, XID_PING = -2, XID_AUTH = -4, XID_SET_WATCHES = -8 };

/* ACL permissions. */
enum { PERM_READ = 1, PERM_WRITE = 2, PERM_CREATE = 4, PERM_DELETE = 8, PERM_ADMIN = 16, PERM_ALL = 31 };

/* CreateMode flags of a create request. */
enum {
    CREATE_PERSISTENT = 0,
    CREATE_EPHEMERAL = 1,
    CREATE_PERSISTENT_SEQUENTIAL = 2,
    CREATE_EPHEMERAL_SEQUENTIAL = 3,
    CREATE_CONTAINER = 4,
    CREATE_PERSISTENT_WITH_TTL = 5,
    CREATE_PERSISTENT_SEQUENTIAL_WITH_TTL = 6,
};

/* addWatch modes, and watcher types of checkWatches/removeWatches. */
enum { ADD_WATCH_PERSISTENT = 0, ADD_WATCH_PERSISTENT_RECURSIVE = 1 };
enum { WATCHER_TYPE_CHILDREN = 1, WATCHER_TYPE_DATA = 2, WATCHER_TYPE_ANY = 3 };

/* ephemeralOwner values of special node kinds (ZooKeeper's EphemeralType). */
#define EPHEMERAL_OWNER_CONTAINER ((int64_t)INT64_MIN)            /* 0x8000000000000000 */
#define EPHEMERAL_OWNER_TTL_MASK ((int64_t)0xFF00000000000000ULL) /* high byte 0xFF, ttl below */
#define TTL_MAX_MS ((int64_t)0x000000FFFFFFFFFFLL)                /* 40 bits, ZooKeeper's limit */

/* The znode Stat as clients see it. */
typedef struct {
    int64_t czxid, mzxid, ctime, mtime;
    int32_t version, cversion, aversion;
    int64_t ephemeral_owner;
    int32_t data_length, num_children;
    int64_t pzxid;
} zstat_t;

/* One ACL entry: permissions for (scheme, id). Strings are owned (malloc). */
typedef struct {
    int32_t perms;
    char *scheme;
    char *id;
} acl_t;

typedef struct {
    acl_t *items;
    int32_t count;
} acl_list_t;

void acl_list_free(acl_list_t *list);
int acl_list_copy(acl_list_t *dst, const acl_list_t *src);   /* 0 or -1 (memory) */
int acl_list_equal(const acl_list_t *a, const acl_list_t *b);

#endif
