/* test_jute.c -- jute primitives and every txn record.
 *
 * The expected bytes of each txn record were produced by ZooKeeper 3.8's own
 * jute classes (org.apache.zookeeper.txn.*, serialized with
 * BinaryOutputArchive from Debian's zookeeper-jute.jar), so these tests pin
 * the layout to Apache's, not to our reading of zookeeper.jute. */
#include <stdlib.h>
#include <string.h>

#include "keeper/data/jute.h"
#include "keeper/data/txn.h"
#include "suites.h"
#include "unit.h"

/* ---- helpers ---- */

static size_t from_hex(const char *hex, uint8_t *out, size_t cap)
{
    size_t n = 0;
    for (; hex[0] && hex[1] && n < cap; hex += 2) {
        unsigned v = 0;
        for (int i = 0; i < 2; i++) {
            char c = hex[i];
            v = v * 16 + (unsigned)(c <= '9' ? c - '0' : c - 'a' + 10);
        }
        out[n++] = (uint8_t)v;
    }
    return n;
}

static void set_path(txn_t *t, const char *path)
{
    t->path = strdup(path);
}

static void set_data(txn_t *t, const void *data, int32_t len)
{
    t->data_len = len;
    if (len > 0) {
        t->data = malloc((size_t)len);
        memcpy(t->data, data, (size_t)len);
    }
}

/* world:anyone ALL, digest:u:h= READ -- the ACL the Java generator used. */
static void set_acl(txn_t *t)
{
    t->acl.items = calloc(2, sizeof(acl_t));
    t->acl.count = 2;
    t->acl.items[0] = (acl_t){PERM_ALL, strdup("world"), strdup("anyone")};
    t->acl.items[1] = (acl_t){PERM_READ, strdup("digest"), strdup("u:h=")};
}

static int data_equal(const txn_t *a, const txn_t *b)
{
    if (a->data_len != b->data_len)
        return 0;
    return a->data_len <= 0 || memcmp(a->data, b->data, (size_t)a->data_len) == 0;
}

static int str_equal(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static int txn_equal(const txn_t *a, const txn_t *b)
{
    if (a->type != b->type || !str_equal(a->path, b->path) || !data_equal(a, b) || !acl_list_equal(&a->acl, &b->acl) ||
        a->ephemeral != b->ephemeral || a->parent_cversion != b->parent_cversion || a->ttl != b->ttl ||
        a->version != b->version || a->timeout != b->timeout || a->err != b->err || a->npaths != b->npaths ||
        a->nsubs != b->nsubs)
        return 0;
    for (int32_t i = 0; i < a->npaths; i++)
        if (!str_equal(a->paths[i], b->paths[i]))
            return 0;
    for (int32_t i = 0; i < a->nsubs; i++)
        if (!txn_equal(&a->subs[i], &b->subs[i]))
            return 0;
    return 1;
}

typedef struct {
    const char *name;
    int32_t type;
    const char *hex;   /* ZooKeeper's own serialization */
} sample_t;

static const sample_t samples[] = {
    {"create", OP_CREATE,
     "000000042f612f6200000003010203000000020000001f00000005776f726c6400000006616e796f6e65000000010000000664696765"
     "737400000004753a683d0100000005"},
    {"create_null", OP_CREATE, "000000022f6effffffff0000000000ffffffff"},
    {"container", OP_CREATE_CONTAINER,
     "000000022f6300000000000000020000001f00000005776f726c6400000006616e796f6e65000000010000000664696765737400000004"
     "753a683d00000002"},
    {"ttl", OP_CREATE_TTL,
     "000000022f740000000109000000020000001f00000005776f726c6400000006616e796f6e650000000100000006646967657374000000"
     "04753a683d00000003000000000000ea60"},
    {"delete", OP_DELETE, "000000022f64"},
    {"setdata", OP_SET_DATA, "000000022f7300000002787900000004"},
    {"setacl", OP_SET_ACL,
     "000000022f73000000020000001f00000005776f726c6400000006616e796f6e650000000100000006646967657374000000047"
     "53a683d00000002"},
    {"check", OP_CHECK, "000000022f6b00000009"},
    {"csession", OP_CREATE_SESSION, "00007530"},
    {"close", OP_CLOSE_SESSION, "00000002000000032f6531000000032f6532"},
    {"error", OP_ERROR, "ffffff92"},
    {"multi", OP_MULTI,
     "000000050000000100000041000000022f6d0000000107000000020000001f00000005776f726c6400000006616e796f6e650000000100"
     "00000664696765737400000004753a683d0000000001000000050000000e000000022f6d00000000000000010000000d0000000a000000"
     "022f6d000000010000000200000006000000022f6dffffffff00000004fffffffe"},
};
enum { NSAMPLES = sizeof(samples) / sizeof(samples[0]) };

/* The txn_t each sample was generated from (see the file comment). */
static void build_sample(const char *name, txn_t *t)
{
    if (!strcmp(name, "create")) {
        txn_init(t, OP_CREATE);
        set_path(t, "/a/b");
        set_data(t, "\1\2\3", 3);
        set_acl(t);
        t->ephemeral = 1;
        t->parent_cversion = 5;
    } else if (!strcmp(name, "create_null")) {
        txn_init(t, OP_CREATE);
        set_path(t, "/n");
        t->parent_cversion = -1;
    } else if (!strcmp(name, "container")) {
        txn_init(t, OP_CREATE_CONTAINER);
        set_path(t, "/c");
        set_data(t, "", 0);
        set_acl(t);
        t->parent_cversion = 2;
    } else if (!strcmp(name, "ttl")) {
        txn_init(t, OP_CREATE_TTL);
        set_path(t, "/t");
        set_data(t, "\x09", 1);
        set_acl(t);
        t->parent_cversion = 3;
        t->ttl = 60000;
    } else if (!strcmp(name, "delete")) {
        txn_init(t, OP_DELETE);
        set_path(t, "/d");
    } else if (!strcmp(name, "setdata")) {
        txn_init(t, OP_SET_DATA);
        set_path(t, "/s");
        set_data(t, "xy", 2);
        t->version = 4;
    } else if (!strcmp(name, "setacl")) {
        txn_init(t, OP_SET_ACL);
        set_path(t, "/s");
        set_acl(t);
        t->version = 2;
    } else if (!strcmp(name, "check")) {
        txn_init(t, OP_CHECK);
        set_path(t, "/k");
        t->version = 9;
    } else if (!strcmp(name, "csession")) {
        txn_init(t, OP_CREATE_SESSION);
        t->timeout = 30000;
    } else if (!strcmp(name, "close")) {
        txn_init(t, OP_CLOSE_SESSION);
        t->paths = calloc(2, sizeof(char *));
        t->paths[0] = strdup("/e1");
        t->paths[1] = strdup("/e2");
        t->npaths = 2;
    } else if (!strcmp(name, "error")) {
        txn_init(t, OP_ERROR);
        t->err = ZNODEEXISTS;
    } else if (!strcmp(name, "multi")) {
        txn_init(t, OP_MULTI);
        t->subs = calloc(5, sizeof(txn_t));
        t->nsubs = 5;
        txn_init(&t->subs[0], OP_CREATE);
        set_path(&t->subs[0], "/m");
        set_data(&t->subs[0], "\x07", 1);
        set_acl(&t->subs[0]);
        t->subs[0].parent_cversion = 1;
        txn_init(&t->subs[1], OP_SET_DATA);
        set_path(&t->subs[1], "/m");
        set_data(&t->subs[1], "", 0);
        t->subs[1].version = 1;
        txn_init(&t->subs[2], OP_CHECK);
        set_path(&t->subs[2], "/m");
        t->subs[2].version = 1;
        txn_init(&t->subs[3], OP_DELETE);
        set_path(&t->subs[3], "/m");
        txn_init(&t->subs[4], OP_ERROR);
        t->subs[4].err = ZRUNTIMEINCONSISTENCY;
    }
}

/* ---- primitives ---- */

static void test_jute_primitives_roundtrip(void)
{
    buf_t b;
    buf_init(&b);
    CHECK_EQ(jute_put_int(&b, 0), 0);
    jute_put_int(&b, -1);
    jute_put_int(&b, INT32_MIN);
    jute_put_long(&b, INT64_MAX);
    jute_put_long(&b, INT64_MIN);
    jute_put_bool(&b, 1);
    jute_put_bool(&b, 0);
    jute_put_buffer(&b, "abc", 3);
    jute_put_buffer(&b, NULL, -1);
    jute_put_buffer(&b, "", 0);
    jute_put_string(&b, "hello");
    jute_put_string(&b, NULL);
    jute_put_string(&b, "");

    jute_in_t in;
    jute_in_init(&in, b.data, b.len);
    CHECK_EQ(jute_get_int(&in), 0);
    CHECK_EQ(jute_get_int(&in), -1);
    CHECK_EQ(jute_get_int(&in), INT32_MIN);
    CHECK_EQ(jute_get_long(&in), INT64_MAX);
    CHECK_EQ(jute_get_long(&in), INT64_MIN);
    CHECK_EQ(jute_get_bool(&in), 1);
    CHECK_EQ(jute_get_bool(&in), 0);
    const uint8_t *p;
    int32_t n;
    CHECK_EQ(jute_get_buffer(&in, &p, &n), 0);
    CHECK(n == 3 && memcmp(p, "abc", 3) == 0);
    CHECK_EQ(jute_get_buffer(&in, &p, &n), 0);
    CHECK(n == -1 && p == NULL);
    CHECK_EQ(jute_get_buffer(&in, &p, &n), 0);
    CHECK_EQ(n, 0);
    char *s = jute_get_string(&in);
    CHECK_STR(s, "hello");
    free(s);
    CHECK(jute_get_string(&in) == NULL);
    CHECK_EQ(in.error, 0);
    s = jute_get_string(&in);
    CHECK_STR(s, "");
    free(s);
    CHECK_EQ(jute_remaining(&in), 0);
    CHECK_EQ(in.error, 0);
    buf_free(&b);
}

static void test_jute_big_endian_layout(void)
{
    buf_t b;
    buf_init(&b);
    jute_put_int(&b, 0x01020304);
    jute_put_long(&b, 0x0102030405060708LL);
    jute_put_string(&b, "ab");
    static const uint8_t want[] = {1, 2, 3, 4, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 2, 'a', 'b'};
    CHECK_EQ(b.len, sizeof(want));
    CHECK(memcmp(b.data, want, sizeof(want)) == 0);
    jute_patch_int(&b, 0, -2);
    CHECK(b.data[0] == 0xff && b.data[3] == 0xfe);
    buf_free(&b);
}

static void test_jute_reads_are_bounded(void)
{
    static const uint8_t three[] = {0, 0, 0};
    jute_in_t in;
    jute_in_init(&in, three, sizeof(three));
    CHECK_EQ(jute_get_int(&in), 0);
    CHECK(in.error);
    CHECK_EQ(jute_get_long(&in), 0);   /* latched */
    CHECK_EQ(jute_remaining(&in), 0);

    static const uint8_t long_len[] = {0, 0, 0, 9, 'a', 'b'};   /* claims 9 bytes, has 2 */
    const uint8_t *p;
    int32_t n;
    jute_in_init(&in, long_len, sizeof(long_len));
    CHECK_EQ(jute_get_buffer(&in, &p, &n), -1);
    CHECK(in.error);

    static const uint8_t huge_len[] = {0x7f, 0xff, 0xff, 0xff, 'a'};
    jute_in_init(&in, huge_len, sizeof(huge_len));
    CHECK(jute_get_string(&in) == NULL);
    CHECK(in.error);

    /* A NUL inside reads as NULL with nul_in_string, and the string is consumed. */
    static const uint8_t nul_inside[] = {0, 0, 0, 3, 'a', 0, 'b'};
    jute_in_init(&in, nul_inside, sizeof(nul_inside));
    CHECK(jute_get_string(&in) == NULL);
    CHECK_EQ(in.error, 0);
    CHECK_EQ(in.nul_in_string, 1);
    CHECK_EQ(in.pos, sizeof(nul_inside));

    static const uint8_t null_len[] = {0xff, 0xff, 0xff, 0xff};   /* -1 is null */
    jute_in_init(&in, null_len, sizeof(null_len));
    CHECK(jute_get_string(&in) == NULL);
    CHECK_EQ(in.error, 0);

    static const uint8_t neg_len[] = {0x80, 0, 0, 0};   /* other negatives are malformed, as in Java */
    jute_in_init(&in, neg_len, sizeof(neg_len));
    CHECK(jute_get_string(&in) == NULL);
    CHECK_EQ(in.error, 1);
}

static void test_jute_hostile_vector_counts(void)
{
    /* a count of 2^31-1 elements with 8 bytes behind it */
    static const uint8_t hostile[] = {0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 1, 0, 0, 0, 1};
    jute_in_t in;
    jute_in_init(&in, hostile, sizeof(hostile));
    CHECK_EQ(jute_get_vector_count(&in, 4), -1);
    CHECK(in.error);

    jute_in_init(&in, hostile, sizeof(hostile));
    acl_list_t acl;
    CHECK_EQ(jute_get_acl_list(&in, &acl), -1);
    CHECK(acl.items == NULL && acl.count == 0);

    static const uint8_t two[] = {0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 1};
    jute_in_init(&in, two, sizeof(two));
    CHECK_EQ(jute_get_vector_count(&in, 4), 2);
    static const uint8_t null_vec[] = {0xff, 0xff, 0xff, 0xff};
    jute_in_init(&in, null_vec, sizeof(null_vec));
    CHECK_EQ(jute_get_vector_count(&in, 4), -1);
    CHECK_EQ(in.error, 0);
}

static void test_jute_stat_and_acl_roundtrip(void)
{
    zstat_t st = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, back;
    txn_t t;
    txn_init(&t, OP_SET_ACL);
    set_acl(&t);
    buf_t b;
    buf_init(&b);
    jute_put_stat(&b, &st);
    CHECK_EQ(b.len, 68);   /* ZooKeeper's STAT_OVERHEAD_BYTES: 6 longs + 5 ints */
    jute_put_acl_list(&b, &t.acl);
    jute_in_t in;
    jute_in_init(&in, b.data, b.len);
    jute_get_stat(&in, &back);
    CHECK(back.czxid == 1 && back.mzxid == 2 && back.ctime == 3 && back.mtime == 4 && back.version == 5 &&
          back.cversion == 6 && back.aversion == 7 && back.ephemeral_owner == 8 && back.data_length == 9 &&
          back.num_children == 10 && back.pzxid == 11);
    acl_list_t acl;
    CHECK_EQ(jute_get_acl_list(&in, &acl), 0);
    CHECK(acl_list_equal(&acl, &t.acl));
    acl_list_t copy;
    CHECK_EQ(acl_list_copy(&copy, &acl), 0);
    CHECK(acl_list_equal(&copy, &t.acl));
    copy.items[1].perms = PERM_WRITE;
    CHECK(!acl_list_equal(&copy, &t.acl));
    acl_list_free(&copy);
    acl_list_free(&acl);
    CHECK_EQ(jute_remaining(&in), 0);
    buf_free(&b);
    txn_free(&t);
}

/* ---- txn records ---- */

static void test_txn_header_matches_zookeeper(void)
{
    txn_header_t h = {0x123456789abcdef0LL, 7, 0x100000002LL, 1700000000000LL, OP_CREATE}, back;
    uint8_t want[64];
    size_t wn = from_hex("123456789abcdef00000000700000001000000020000018bcfe5680000000001", want, sizeof(want));
    buf_t b;
    buf_init(&b);
    CHECK_EQ(txn_header_write(&b, &h), 0);
    CHECK(b.len == wn && memcmp(b.data, want, wn) == 0);
    jute_in_t in;
    jute_in_init(&in, b.data, b.len);
    CHECK_EQ(txn_header_read(&in, &back), 0);
    CHECK(back.client_id == h.client_id && back.cxid == 7 && back.zxid == h.zxid && back.time == h.time &&
          back.type == OP_CREATE);
    for (size_t cut = 0; cut < wn; cut++) {
        jute_in_init(&in, want, cut);
        CHECK_EQ(txn_header_read(&in, &back), -1);
    }
    buf_free(&b);
}

/* Every sample: our writer produces ZooKeeper's bytes, our reader gets the
 * same txn back from them. */
static void test_txn_records_match_zookeeper(void)
{
    for (int i = 0; i < NSAMPLES; i++) {
        uint8_t want[512];
        size_t wn = from_hex(samples[i].hex, want, sizeof(want));
        txn_t t, back;
        build_sample(samples[i].name, &t);
        buf_t b;
        buf_init(&b);
        CHECK_EQ(txn_body_write(&b, &t), 0);
        if (b.len != wn || memcmp(b.data, want, wn) != 0)
            unit_fail(__FILE__, __LINE__, samples[i].name);
        jute_in_t in;
        jute_in_init(&in, want, wn);
        CHECK_EQ(txn_body_read(&in, samples[i].type, &back), 0);
        CHECK_EQ(jute_remaining(&in), 0);
        if (!txn_equal(&t, &back))
            unit_fail(__FILE__, __LINE__, samples[i].name);
        txn_free(&back);
        txn_free(&t);
        buf_free(&b);
    }
}

static void test_txn_create2_and_reconfig_layouts(void)
{
    /* create2 logs a CreateTxn, deleteContainer a DeleteTxn, reconfig a SetDataTxn */
    static const struct { int32_t as, like; } pairs[] = {
        {OP_CREATE2, OP_CREATE}, {OP_DELETE_CONTAINER, OP_DELETE}, {OP_RECONFIG, OP_SET_DATA}};
    for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
        const char *name = pairs[i].like == OP_CREATE ? "create" : pairs[i].like == OP_DELETE ? "delete" : "setdata";
        uint8_t want[512];
        size_t wn = 0;
        for (int s = 0; s < NSAMPLES; s++)
            if (!strcmp(samples[s].name, name))
                wn = from_hex(samples[s].hex, want, sizeof(want));
        txn_t t;
        jute_in_t in;
        jute_in_init(&in, want, wn);
        CHECK_EQ(txn_body_read(&in, pairs[i].as, &t), 0);
        CHECK_EQ(t.type, pairs[i].as);
        buf_t b;
        buf_init(&b);
        CHECK_EQ(txn_body_write(&b, &t), 0);
        CHECK(b.len == wn && memcmp(b.data, want, wn) == 0);
        buf_free(&b);
        txn_free(&t);
    }
}

/* Cutting a record anywhere short of its end is an error, never a crash or
 * a leak (ASan's leak check covers the partial allocations). */
static void test_txn_truncated_at_every_offset(void)
{
    for (int i = 0; i < NSAMPLES; i++) {
        uint8_t want[512];
        size_t wn = from_hex(samples[i].hex, want, sizeof(want));
        for (size_t cut = 0; cut < wn; cut++) {
            uint8_t *copy = malloc(cut ? cut : 1);   /* exact size, so ASan sees any over-read */
            memcpy(copy, want, cut);
            jute_in_t in;
            jute_in_init(&in, copy, cut);
            txn_t t;
            if (txn_body_read(&in, samples[i].type, &t) != -1)
                unit_fail(__FILE__, __LINE__, samples[i].name);
            CHECK(t.path == NULL && t.data == NULL && t.subs == NULL && t.paths == NULL && t.acl.items == NULL);
            free(copy);
        }
    }
}

/* Every byte of every sample replaced by hostile values: the reader either
 * refuses it or returns a txn that writes back to the very same bytes it
 * consumed (so nothing is misread), and never crashes or leaks. */
static void test_txn_mutated_records(void)
{
    static const uint8_t values[] = {0x00, 0x01, 0x7f, 0x80, 0xfe, 0xff};
    int misread = 0, accepted = 0;
    for (int i = 0; i < NSAMPLES; i++) {
        uint8_t orig[512];
        size_t n = from_hex(samples[i].hex, orig, sizeof(orig));
        for (size_t pos = 0; pos < n; pos++) {
            for (size_t v = 0; v < sizeof(values); v++) {
                uint8_t *copy = malloc(n);
                memcpy(copy, orig, n);
                copy[pos] = values[v];
                jute_in_t in;
                jute_in_init(&in, copy, n);
                txn_t t;
                if (txn_body_read(&in, samples[i].type, &t) == 0) {
                    accepted++;
                    buf_t b;
                    buf_init(&b);
                    /* a negative length other than -1 reads as null and writes as -1 */
                    if (txn_body_write(&b, &t) == 0 && (b.len != in.pos || memcmp(b.data, copy, b.len) != 0)) {
                        jute_in_t again;
                        txn_t t2;
                        jute_in_init(&again, b.data, b.len);
                        misread += txn_body_read(&again, samples[i].type, &t2) != 0 || !txn_equal(&t, &t2);
                        txn_free(&t2);   /* harmless after a failed read */
                    }
                    buf_free(&b);
                    txn_free(&t);
                }
                free(copy);
            }
        }
    }
    CHECK_EQ(misread, 0);
    CHECK(accepted > 0);
}

static int read_hex(const char *hex, int32_t type)
{
    uint8_t bytes[512];
    size_t n = from_hex(hex, bytes, sizeof(bytes));
    jute_in_t in;
    jute_in_init(&in, bytes, n);
    txn_t t;
    int rc = txn_body_read(&in, type, &t);
    if (rc == 0)
        txn_free(&t);
    return rc;
}

static void test_txn_rejects_malformed(void)
{
    /* hostile counts: paths2Delete, ACL vector, multi txns */
    CHECK_EQ(read_hex("7fffffff000000032f6531", OP_CLOSE_SESSION), -1);
    CHECK_EQ(read_hex("000000022f6effffffff7fffffff0000000000", OP_CREATE), -1);
    CHECK_EQ(read_hex("7fffffff00000002000000022f64", OP_MULTI), -1);
    /* a null path */
    CHECK_EQ(read_hex("ffffffff", OP_DELETE), -1);
    CHECK_EQ(read_hex("ffffffff00000001", OP_CHECK), -1);
    /* a null entry in paths2Delete */
    CHECK_EQ(read_hex("00000001ffffffff", OP_CLOSE_SESSION), -1);
    /* an unknown txn type */
    CHECK_EQ(read_hex("00000000", 12345), -1);
    CHECK_EQ(read_hex("00000000", OP_GET_DATA), -1);
    /* multi: a nested multi, a session txn inside, an unknown sub type */
    CHECK_EQ(read_hex("000000010000000e0000000400000000", OP_MULTI), -1);
    CHECK_EQ(read_hex("00000001fffffff60000000400007530", OP_MULTI), -1);
    CHECK_EQ(read_hex("000000010000006300000004ffffff92", OP_MULTI), -1);
    /* multi: a sub record with trailing bytes, one cut short, a null buffer */
    CHECK_EQ(read_hex("00000001ffffffff00000005ffffff9200", OP_MULTI), -1);
    CHECK_EQ(read_hex("00000001ffffffff00000003ffffff", OP_MULTI), -1);
    CHECK_EQ(read_hex("00000001ffffffffffffffff", OP_MULTI), -1);
    /* multi: the second of two subs broken after the first parsed (frees the first) */
    CHECK_EQ(read_hex("00000002000000020000000600000002" "2f64" "0000000200000005000000022f", OP_MULTI), -1);
    /* well-formed edge cases read fine: empty and null vectors */
    CHECK_EQ(read_hex("00000000", OP_MULTI), 0);
    CHECK_EQ(read_hex("ffffffff", OP_CLOSE_SESSION), 0);
    CHECK_EQ(read_hex("00000000", OP_CLOSE_SESSION), 0);
}

static void test_txn_top_level_allows_trailing_bytes(void)
{
    /* A log entry may carry a TxnDigest after the body (ZooKeeper 3.6+):
     * the top-level reader stops at the record's end and leaves the rest. */
    uint8_t bytes[16];
    size_t n = from_hex("000000022f64aabbccdd", bytes, sizeof(bytes));
    jute_in_t in;
    jute_in_init(&in, bytes, n);
    txn_t t;
    CHECK_EQ(txn_body_read(&in, OP_DELETE, &t), 0);
    CHECK_STR(t.path, "/d");
    CHECK_EQ(jute_remaining(&in), 4);
    txn_free(&t);
}

static void test_txn_write_refuses_bad_multi(void)
{
    txn_t t;
    txn_init(&t, OP_MULTI);
    t.subs = calloc(1, sizeof(txn_t));
    t.nsubs = 1;
    txn_init(&t.subs[0], OP_MULTI);
    buf_t b;
    buf_init(&b);
    CHECK_EQ(txn_body_write(&b, &t), -1);
    txn_init(&t.subs[0], OP_CLOSE_SESSION);
    CHECK_EQ(txn_body_write(&b, &t), -1);
    txn_init(&t.subs[0], OP_ERROR);
    buf_clear(&b);
    CHECK_EQ(txn_body_write(&b, &t), 0);
    txn_t unknown;
    txn_init(&unknown, 4242);
    CHECK_EQ(txn_body_write(&b, &unknown), -1);
    CHECK(txn_allowed_in_multi(OP_SET_DATA) && txn_allowed_in_multi(OP_ERROR) && !txn_allowed_in_multi(OP_MULTI) &&
          !txn_allowed_in_multi(OP_CREATE_SESSION));
    buf_free(&b);
    txn_free(&t);
}

static void test_txn_free_and_result_free(void)
{
    txn_t t;
    build_sample("multi", &t);
    txn_free(&t);
    CHECK(t.subs == NULL && t.nsubs == 0 && t.type == OP_MULTI && t.data_len == -1);
    txn_free(&t);   /* freeing twice is harmless */

    txn_result_t r = {0};
    r.path = strdup("/x");
    r.subs = calloc(2, sizeof(txn_result_t));
    r.nsubs = 2;
    r.subs[1].path = strdup("/y");
    txn_result_free(&r);
    CHECK(r.path == NULL && r.subs == NULL && r.nsubs == 0);
}

void suite_jute(void)
{
    RUN(test_jute_primitives_roundtrip);
    RUN(test_jute_big_endian_layout);
    RUN(test_jute_reads_are_bounded);
    RUN(test_jute_hostile_vector_counts);
    RUN(test_jute_stat_and_acl_roundtrip);
    RUN(test_txn_header_matches_zookeeper);
    RUN(test_txn_records_match_zookeeper);
    RUN(test_txn_create2_and_reconfig_layouts);
    RUN(test_txn_truncated_at_every_offset);
    RUN(test_txn_mutated_records);
    RUN(test_txn_rejects_malformed);
    RUN(test_txn_top_level_allows_trailing_bytes);
    RUN(test_txn_write_refuses_bad_multi);
    RUN(test_txn_free_and_result_free);
}
