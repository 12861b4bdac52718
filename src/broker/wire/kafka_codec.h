/* kafka_codec.h -- Kafka's wire protocol described as data, with one codec.
 *
 * Each message is a table of fields (kafka_field_t): a name, a type, the
 * versions the field exists in, the versions in which it may be null, and for
 * flexible versions an optional tag.  The fields are listed once per struct
 * in kafka_messages.h (transcribed from Apache Kafka's
 * clients/src/main/resources/common/message JSON definitions), which builds
 * the tables, an enum of each struct's fields and typed accessors from them.
 * One decoder turns bytes into a generic value tree (kafka_value_t)
 * allocated in an arena; one encoder turns a tree back into bytes.  No code
 * is written per message or per version.
 *
 * Decoding is bounded: every length and count is checked against the bytes
 * that remain, and the arena has a byte budget, so a hostile frame cannot make
 * us allocate more than a small multiple of its own size.  Record batches
 * (type "records") stay opaque: decoded values point into the frame. */
#ifndef KIPPER_BROKER_KAFKA_CODEC_H
#define KIPPER_BROKER_KAFKA_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"

/* ---- schema ---- */

typedef enum {
    KT_BOOL = 1,
    KT_INT8,
    KT_INT16,
    KT_UINT16,
    KT_INT32,
    KT_INT64,
    KT_VARINT,    /* zigzag int32 */
    KT_VARLONG,   /* zigzag int64 */
    KT_FLOAT64,
    KT_UUID,
    KT_STRING,    /* compact in flexible versions */
    KT_BYTES,     /* compact in flexible versions */
    KT_RECORDS,   /* opaque record batches: bytes on the wire */
    KT_STRUCT,    /* nested struct (sub) */
    KT_ARRAY,     /* array of elem; elem KT_STRUCT uses sub */
} kafka_type_t;

#define KAFKA_VMAX 0x7fff   /* "N+" in Kafka's JSON: no upper bound */

typedef struct kafka_struct kafka_struct_t;

typedef struct {
    const char *name;
    uint8_t type;          /* kafka_type_t */
    uint8_t elem;          /* element type of a KT_ARRAY */
    int16_t vmin, vmax;    /* versions the field exists in */
    uint8_t nullable;      /* may be null from version nmin on */
    int16_t nmin;
    uint8_t tagged;        /* a tagged field (in flexible versions) */
    int16_t tag;
    uint8_t defnull;       /* a string/bytes/array whose default is null */
    uint8_t noflex;        /* never compact (the request header's ClientId) */
    int64_t def;           /* default of a numeric field */
    const kafka_struct_t *sub;   /* KT_STRUCT, or KT_ARRAY of KT_STRUCT */
} kafka_field_t;

struct kafka_struct {
    const char *name;
    const kafka_field_t *fields;
    int nfields;
};

/* One API: its key, the versions this codec handles, where flexible versions
 * begin, and its request and response bodies. */
typedef struct {
    int16_t key;
    const char *name;
    int16_t min, max;
    int16_t flex_min;
    const kafka_struct_t *request;
    const kafka_struct_t *response;
} kafka_api_t;

enum {
    KAFKA_API_PRODUCE = 0,
    KAFKA_API_FETCH = 1,
    KAFKA_API_LIST_OFFSETS = 2,
    KAFKA_API_METADATA = 3,
    KAFKA_API_OFFSET_COMMIT = 8,
    KAFKA_API_OFFSET_FETCH = 9,
    KAFKA_API_FIND_COORDINATOR = 10,
    KAFKA_API_JOIN_GROUP = 11,
    KAFKA_API_HEARTBEAT = 12,
    KAFKA_API_LEAVE_GROUP = 13,
    KAFKA_API_SYNC_GROUP = 14,
    KAFKA_API_DESCRIBE_GROUPS = 15,
    KAFKA_API_LIST_GROUPS = 16,
    KAFKA_API_DELETE_GROUPS = 42,
    KAFKA_API_OFFSET_DELETE = 47,
    KAFKA_API_DESCRIBE_CONFIGS = 32,
    KAFKA_API_ALTER_CONFIGS = 33,
    KAFKA_API_DESCRIBE_LOG_DIRS = 35,
    KAFKA_API_INCREMENTAL_ALTER_CONFIGS = 44,
    KAFKA_API_DELETE_RECORDS = 21,
    KAFKA_API_API_VERSIONS = 18,
    KAFKA_API_CREATE_TOPICS = 19,
    KAFKA_API_DELETE_TOPICS = 20,
    KAFKA_API_INIT_PRODUCER_ID = 22,
    KAFKA_API_OFFSET_FOR_LEADER_EPOCH = 23,
    KAFKA_API_CREATE_PARTITIONS = 37,
    KAFKA_API_ELECT_LEADERS = 43,
    KAFKA_API_ALTER_PARTITION_REASSIGNMENTS = 45,
    KAFKA_API_LIST_PARTITION_REASSIGNMENTS = 46,
    KAFKA_API_DESCRIBE_CLUSTER = 60,
};

extern const kafka_api_t kafka_apis[];
extern const int kafka_napis;
const kafka_api_t *kafka_api_find(int16_t key);
static inline int kafka_api_flexible(const kafka_api_t *api, int16_t version) { return version >= api->flex_min; }
static inline int kafka_api_supports(const kafka_api_t *api, int16_t version)
{
    return version >= api->min && version <= api->max;
}

/* ---- arena ---- */

typedef struct kafka_chunk kafka_chunk_t;
typedef struct {
    kafka_chunk_t *head;
    size_t used, limit;   /* bytes handed out; the most we will hand out */
    int exhausted;        /* an allocation was refused for the limit */
} kafka_arena_t;

/* limit 0 means unbounded (for values the broker builds itself). */
void kafka_arena_init(kafka_arena_t *a, size_t limit);
void kafka_arena_free(kafka_arena_t *a);
/* Zeroed memory, or NULL once the budget is spent (or malloc fails). */
void *kafka_arena_alloc(kafka_arena_t *a, size_t n);

/* ---- values ---- */

typedef struct kafka_value kafka_value_t;
struct kafka_value {
    uint8_t type;      /* kafka_type_t */
    uint8_t is_null;   /* strings, bytes, records, arrays */
    uint8_t external;  /* KT_RECORDS whose bytes the caller sends itself (u.ext) */
    uint32_t n;        /* string/bytes length, array count, struct field count */
    union {
        int64_t i;                 /* bool and integer types */
        double f;                  /* KT_FLOAT64 */
        uint8_t uuid[16];
        const char *s;             /* KT_STRING: NUL-terminated copy in the arena */
        const uint8_t *b;          /* KT_BYTES/KT_RECORDS: into the frame, or caller's memory */
        struct kafka_ext_records *ext;   /* KT_RECORDS with external set */
        kafka_value_t *items;      /* KT_ARRAY elements, KT_STRUCT fields (schema order) */
    } u;
    const kafka_struct_t *schema;  /* KT_STRUCT, and KT_ARRAY of structs */
};

/* A struct with every field at its default (empty strings/arrays, or null
 * where the default is null). */
kafka_value_t *kv_new_struct(kafka_arena_t *a, const kafka_struct_t *s);
static inline kafka_value_t *kv_at(const kafka_value_t *arr, uint32_t i) { return &arr->u.items[i]; }

/* ---- fields ----
 * A field is named by its struct and its index in the struct's table. The
 * KV_* macros of kafka_messages.h build both from names the compiler checks;
 * the functions here are what they expand to. */

/* Logs which field was asked of which value, and aborts. */
_Noreturn void kv_wrong_struct(const kafka_value_t *st, const kafka_struct_t *s, int i);

/* Field i of st, which must be a struct of s (else a programming error:
 * kv_wrong_struct). */
static inline kafka_value_t *kv_field(const kafka_value_t *st, const kafka_struct_t *s, int i)
{
    if (__builtin_expect(st->type != KT_STRUCT || st->schema != s, 0))
        kv_wrong_struct(st, s, i);
    return &st->u.items[i];
}

static inline int64_t kv_int_at(const kafka_value_t *st, const kafka_struct_t *s, int i)
{
    return kv_field(st, s, i)->u.i;
}

/* NULL when null. */
static inline const char *kv_str_at(const kafka_value_t *st, const kafka_struct_t *s, int i)
{
    const kafka_value_t *v = kv_field(st, s, i);
    return v->is_null ? NULL : v->u.s;
}

static inline void kv_set_int_at(kafka_value_t *st, const kafka_struct_t *s, int i, int64_t x)
{
    kv_field(st, s, i)->u.i = x;
}

/* Copies str into the arena; str NULL sets null. */
void kv_set_str_at(kafka_arena_t *a, kafka_value_t *st, const kafka_struct_t *s, int i, const char *str);
/* Points at p (not copied): it must outlive the encode.  p NULL sets null. */
void kv_set_bytes_at(kafka_value_t *st, const kafka_struct_t *s, int i, const void *p, uint32_t len);
/* Records sent from elsewhere (a file, with sendfile): the encoder writes
 * only the length prefix and notes in ext->out_offset where the len bytes
 * belong, counted from the output buffer's read cursor at the time (stable
 * until the buffer is consumed). The frame size includes them. */
typedef struct kafka_ext_records {
    size_t out_offset;
    uint32_t len;
    int encoded;   /* set by the encoder */
    void *owner;   /* the caller's */
} kafka_ext_records_t;
void kv_set_external_records_at(kafka_value_t *st, const kafka_struct_t *s, int i, kafka_ext_records_t *ext);

/* Makes the array field n elements long (structs at their defaults, numbers
 * 0) and returns it; NULL when out of arena. */
kafka_value_t *kv_set_array_at(kafka_arena_t *a, kafka_value_t *st, const kafka_struct_t *s, int i, uint32_t n);

/* A field chosen at run time: code that walks several messages of the same
 * shape (topics, then partitions) is given the fields to use. Made with
 * kafka_messages.h's KV_REF(Struct, Field). */
typedef struct {
    const kafka_struct_t *s;
    int i;
} kv_ref_t;

#define KV_REF_GET(v, r) kv_field((v), (r).s, (r).i)
#define KV_REF_INT(v, r) kv_int_at((v), (r).s, (r).i)
#define KV_REF_STR(v, r) kv_str_at((v), (r).s, (r).i)
#define KV_REF_SET_INT(v, r, x) kv_set_int_at((v), (r).s, (r).i, (x))
#define KV_REF_SET_STR(a, v, r, x) kv_set_str_at((a), (v), (r).s, (r).i, (x))
#define KV_REF_SET_ARRAY(a, v, r, n) kv_set_array_at((a), (v), (r).s, (r).i, (n))

/* ---- codec ---- */

enum {
    KAFKA_OK = 0,
    KAFKA_EMALFORMED = -1,     /* truncated, bad length, trailing bytes (but a request's: see
                                * kafka_request_decode), over budget */
    KAFKA_EUNSUPPORTED = -2,   /* unknown API key or version; the header is valid */
    KAFKA_EINVAL = -3,         /* encode: a value that does not fit the schema */
    KAFKA_EBUDGET = -4,        /* decode: well-formed so far, but past the arena's budget */
};

/* Body codec.  decode consumes exactly n bytes or fails. */
int kafka_encode(buf_t *out, const kafka_struct_t *s, int16_t version, int flexible, const kafka_value_t *v);
int kafka_decode(const uint8_t *p, size_t n, const kafka_struct_t *s, int16_t version, int flexible,
                 kafka_arena_t *a, kafka_value_t **out);

/* Header versions: request v2 / response v1 for flexible API versions, else
 * v1 / v0.  ApiVersions responses always use header v0 (KIP-511), so a client
 * can read the answer whatever version it asked for.  A version above what we
 * support is taken as flexible when the API's flexible versions are open-ended,
 * as Kafka does. */
int kafka_request_header_version(const kafka_api_t *api, int16_t version);
int kafka_response_header_version(const kafka_api_t *api, int16_t version);

typedef struct {
    int16_t api_key, api_version;
    int32_t correlation_id;
    const char *client_id;      /* NULL when null */
    const kafka_api_t *api;     /* NULL for an unknown key */
    kafka_value_t *body;        /* NULL unless KAFKA_OK */
} kafka_request_t;

/* One request frame without its 4-byte size prefix; bytes after a complete
 * body are ignored, as Kafka does (kafka_codec.c says where and why).  KAFKA_EUNSUPPORTED
 * leaves the key, version and correlation id filled in so the broker can
 * answer with an error instead of dropping the connection; KAFKA_EBUDGET
 * says the frame needs more memory than the arena's budget. */
int kafka_request_decode(const uint8_t *p, size_t n, kafka_arena_t *a, kafka_request_t *out);
/* Appends size prefix, header and body. */
int kafka_request_encode(buf_t *out, const kafka_api_t *api, int16_t version, int32_t correlation_id,
                         const char *client_id, const kafka_value_t *body);
int kafka_response_encode(buf_t *out, const kafka_api_t *api, int16_t version, int32_t correlation_id,
                          const kafka_value_t *body);
/* p, n: a response frame without its size prefix. */
int kafka_response_decode(const uint8_t *p, size_t n, const kafka_api_t *api, int16_t version, kafka_arena_t *a,
                          int32_t *correlation_id, kafka_value_t **body);

/* KIP-511: an ApiVersions request of a version we do not support is answered
 * with ApiVersions v0 and UNSUPPORTED_VERSION, listing what we do support. */
int16_t kafka_api_versions_response_version(int16_t requested);

/* Arena budget for decoding a frame of n bytes. A value node is 32 bytes and
 * a struct holds one per field of its schema, so the smallest elements cost
 * the most per wire byte: a Metadata v1 topic of an empty name is 2 bytes on
 * the wire and 96 in nodes (48 per byte). What clients really send costs at
 * most 16 per byte (Fetch v4's partitions; OffsetCommit, ListOffsets and
 * Metadata of short names 13-14; Produce about 1: test_kafka_decode_budget
 * measures them), so the budget is that, plus room for small frames, and
 * never more than KAFKA_DECODE_MAX whatever the frame: a request made of
 * empty names is refused instead of taking 48 times its size. */
#define KAFKA_DECODE_PER_BYTE 16
#define KAFKA_DECODE_SLACK 65536
/* About 85,000 OffsetCommit partitions or 60,000 Fetch partitions in one
 * request; no client needs more in one. */
#define KAFKA_DECODE_MAX ((size_t)16 << 20)
static inline size_t kafka_decode_budget(size_t n)
{
    return n < (KAFKA_DECODE_MAX - KAFKA_DECODE_SLACK) / KAFKA_DECODE_PER_BYTE
               ? KAFKA_DECODE_PER_BYTE * n + KAFKA_DECODE_SLACK
               : KAFKA_DECODE_MAX;
}
/* The same for an answer from a broker we asked (the replica fetcher's),
 * without the cap: its size is bounded by what we asked for, and a follower
 * of many idle partitions gets an answer of tens of thousands of empty ones
 * (14 bytes of nodes per byte: test_kafka_decode_budget). */
static inline size_t kafka_answer_decode_budget(size_t n)
{
    return KAFKA_DECODE_PER_BYTE * n + KAFKA_DECODE_SLACK;
}

#endif
