/* test_kafka_codec.c -- the table-driven Kafka codec.
 *
 * Every version of every request and response is filled with non-default
 * values (and again with nulls wherever the version allows them), encoded,
 * decoded, compared and re-encoded byte for byte; every truncation of every
 * frame must be rejected.  Known-answer frames are written out by hand from
 * Kafka's protocol definitions, the way the Java client and kafka-python put
 * them on the wire. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "broker/wire/kafka_codec.h"
#include "broker/wire/kafka_errors.h"
#include "broker/wire/kafka_messages.h"
#include "suites.h"
#include "unit.h"
#include "base/endian.h"

/* ---- helpers ---- */

static size_t from_hex(const char *hex, uint8_t *out, size_t cap)
{
    size_t n = 0;
    while (*hex && n < cap) {
        if (*hex == ' ') {
            hex++;
            continue;
        }
        unsigned v = 0;
        for (int i = 0; i < 2; i++) {
            char c = hex[i];
            v = v * 16 + (unsigned)(c <= '9' ? c - '0' : c - 'a' + 10);
        }
        out[n++] = (uint8_t)v;
        hex += 2;
    }
    return n;
}

static int counter;
static const uint8_t record_bytes[] = "opaque-record-batch";

static int in_ver(const kafka_field_t *f, int16_t v) { return v >= f->vmin && v <= f->vmax; }
static int nullable_in(const kafka_field_t *f, int16_t v) { return f->nullable && v >= f->nmin; }

static void fill_value(kafka_arena_t *a, const kafka_field_t *f, int16_t v, int nulls, kafka_value_t *out);

static void fill_struct(kafka_arena_t *a, const kafka_struct_t *s, int16_t v, int nulls, kafka_value_t *st)
{
    for (int i = 0; i < s->nfields; i++)
        if (in_ver(&s->fields[i], v))
            fill_value(a, &s->fields[i], v, nulls, &st->u.items[i]);
}

/* A value different from the field's default (so tagged fields are sent),
 * or null when asked and the version allows it. */
static void fill_value(kafka_arena_t *a, const kafka_field_t *f, int16_t v, int nulls, kafka_value_t *out)
{
    int c = ++counter;
    if (nulls && nullable_in(f, v) && f->type != KT_STRUCT) {
        out->is_null = 1;
        out->n = 0;
        out->u.b = NULL;
        return;
    }
    out->is_null = 0;
    switch (f->type) {
    case KT_BOOL: out->u.i = !f->def; break;
    case KT_INT8: out->u.i = c % 100 + 1; break;
    case KT_INT16: out->u.i = -(c % 30000) - 2; break;
    case KT_UINT16: out->u.i = 65535 - c % 1000; break;
    case KT_INT32: case KT_VARINT: out->u.i = 100000 + c; break;
    case KT_INT64: case KT_VARLONG: out->u.i = (int64_t)0x0102030405060708LL + c; break;
    case KT_FLOAT64: out->u.f = 1.5 + c; break;
    case KT_UUID:
        for (int i = 0; i < 16; i++)
            out->u.uuid[i] = (uint8_t)(c + i);
        break;
    case KT_STRING: {
        char *s = kafka_arena_alloc(a, 24);
        snprintf(s, 24, "s%d", c);
        out->u.s = s;
        out->n = (uint32_t)strlen(s);
        break;
    }
    case KT_BYTES: case KT_RECORDS:
        out->u.b = record_bytes;
        out->n = (uint32_t)(c % 10 + 5);
        break;
    case KT_STRUCT:
        fill_struct(a, f->sub, v, nulls, out);
        break;
    case KT_ARRAY: {
        kafka_field_t e = {.name = f->name, .type = f->elem, .sub = f->sub, .vmax = KAFKA_VMAX};
        out->n = 2;
        out->schema = f->sub;
        out->u.items = kafka_arena_alloc(a, 2 * sizeof(kafka_value_t));
        for (int i = 0; i < 2; i++) {
            out->u.items[i].type = f->elem;
            if (f->elem == KT_STRUCT) {
                kafka_value_t *st = kv_new_struct(a, f->sub);
                out->u.items[i] = *st;
            }
            fill_value(a, &e, v, nulls, &out->u.items[i]);
        }
        break;
    }
    }
}

static int values_equal(const kafka_value_t *x, const kafka_value_t *y)
{
    if (x->type != y->type || x->is_null != y->is_null)
        return 0;
    if (x->is_null)
        return 1;
    switch (x->type) {
    case KT_STRING:
        return x->n == y->n && memcmp(x->u.s, y->u.s, x->n) == 0 && y->u.s[y->n] == '\0';
    case KT_BYTES: case KT_RECORDS:
        return x->n == y->n && (x->n == 0 || memcmp(x->u.b, y->u.b, x->n) == 0);
    case KT_UUID:
        return memcmp(x->u.uuid, y->u.uuid, 16) == 0;
    case KT_FLOAT64:
        return x->u.f == y->u.f;
    case KT_ARRAY: case KT_STRUCT:
        if (x->n != y->n)
            return 0;
        for (uint32_t i = 0; i < x->n; i++)
            if (!values_equal(&x->u.items[i], &y->u.items[i]))
                return 0;
        return 1;
    default:
        return x->u.i == y->u.i;
    }
}

/* Every strict prefix of a frame must be rejected, never read past. */
static int all_prefixes_rejected(const uint8_t *p, size_t n, const kafka_struct_t *s, int16_t v, int flex)
{
    for (size_t k = 0; k < n; k++) {
        uint8_t *copy = malloc(k ? k : 1);   /* exact-size copy so ASan sees overreads */
        memcpy(copy, p, k);
        kafka_arena_t a;
        kafka_arena_init(&a, kafka_decode_budget(k));
        kafka_value_t *out;
        int rc = kafka_decode(copy, k, s, v, flex, &a, &out);
        kafka_arena_free(&a);
        free(copy);
        if (rc != KAFKA_EMALFORMED)
            return 0;
    }
    return 1;
}

/* Fill, encode, decode, compare, re-encode, compare bytes; then truncate. */
static int roundtrip_body(const kafka_api_t *api, const kafka_struct_t *s, int16_t v, int nulls, int *frames)
{
    int ok = 1, flex = kafka_api_flexible(api, v);
    kafka_arena_t a, d;
    kafka_arena_init(&a, 0);
    kafka_value_t *val = kv_new_struct(&a, s);
    fill_struct(&a, s, v, nulls, val);
    buf_t b1, b2;
    buf_init(&b1);
    buf_init(&b2);
    ok &= kafka_encode(&b1, s, v, flex, val) == KAFKA_OK;
    kafka_arena_init(&d, kafka_decode_budget(b1.len));
    kafka_value_t *got = NULL;
    ok &= kafka_decode(b1.data, b1.len, s, v, flex, &d, &got) == KAFKA_OK;
    ok = ok && values_equal(val, got);
    ok = ok && kafka_encode(&b2, s, v, flex, got) == KAFKA_OK;
    ok = ok && b1.len == b2.len && (b1.len == 0 || memcmp(b1.data, b2.data, b1.len) == 0);
    ok = ok && all_prefixes_rejected(b1.data, b1.len, s, v, flex);
    if (!ok)
        fprintf(stderr, "  roundtrip %s %s v%d nulls=%d failed\n", api->name, s->name, v, nulls);
    (*frames)++;
    buf_free(&b1);
    buf_free(&b2);
    kafka_arena_free(&a);
    kafka_arena_free(&d);
    return ok;
}

/* ---- tests ---- */

static void test_kafka_roundtrip_every_version(void)
{
    int frames = 0;
    for (int i = 0; i < kafka_napis; i++) {
        const kafka_api_t *api = &kafka_apis[i];
        for (int16_t v = api->min; v <= api->max; v++)
            for (int nulls = 0; nulls < 2; nulls++) {
                CHECK(roundtrip_body(api, api->request, v, nulls, &frames));
                CHECK(roundtrip_body(api, api->response, v, nulls, &frames));
            }
    }
    CHECK(frames > 300);
}

/* Whole frames: size prefix, the right header version, then the body. */
static void test_kafka_frames_every_version(void)
{
    for (int i = 0; i < kafka_napis; i++) {
        const kafka_api_t *api = &kafka_apis[i];
        for (int16_t v = api->min; v <= api->max; v++) {
            kafka_arena_t a, d;
            kafka_arena_init(&a, 0);
            kafka_value_t *req = kv_new_struct(&a, api->request);
            kafka_value_t *resp = kv_new_struct(&a, api->response);
            fill_struct(&a, api->request, v, 0, req);
            fill_struct(&a, api->response, v, 0, resp);
            buf_t b;
            buf_init(&b);
            CHECK_EQ(kafka_request_encode(&b, api, v, 77, "cid", req), KAFKA_OK);
            uint32_t size = be32_get(b.data);
            CHECK_EQ(size, b.len - 4);
            kafka_arena_init(&d, kafka_decode_budget(b.len));
            kafka_request_t r;
            CHECK_EQ(kafka_request_decode(b.data + 4, b.len - 4, &d, &r), KAFKA_OK);
            CHECK(r.api == api && r.api_version == v && r.correlation_id == 77);
            CHECK_STR(r.client_id, "cid");
            CHECK(r.body && values_equal(req, r.body));
            /* header v2 carries a tagged-field byte after the client id */
            if (kafka_api_flexible(api, v))
                CHECK(b.len > 17 && b.data[17] == 0);
            buf_clear(&b);
            CHECK_EQ(kafka_response_encode(&b, api, v, 78, resp), KAFKA_OK);
            int32_t corr = 0;
            kafka_value_t *got = NULL;
            CHECK_EQ(kafka_response_decode(b.data + 4, b.len - 4, api, v, &d, &corr, &got), KAFKA_OK);
            CHECK(corr == 78 && got && values_equal(resp, got));
            buf_free(&b);
            kafka_arena_free(&a);
            kafka_arena_free(&d);
        }
    }
}

/* ApiVersions v3 as the Java client (3.9) opens a connection. */
static void test_kafka_known_api_versions_v3_request(void)
{
    uint8_t frame[128];
    size_t n = from_hex("00000031"                        /* size 49 */
                        "0012 0003 00000001"              /* key 18, v3, correlation 1 */
                        "000d 61646d696e636c69656e742d31" /* "adminclient-1", int16 length */
                        "00"                              /* header tagged fields */
                        "12 6170616368652d6b61666b612d6a617661" /* compact "apache-kafka-java" */
                        "06 332e392e30"                   /* compact "3.9.0" */
                        "00",                             /* body tagged fields */
                        frame, sizeof(frame));
    CHECK_EQ(n, 53u);
    kafka_arena_t a;
    kafka_arena_init(&a, kafka_decode_budget(n));
    kafka_request_t r;
    CHECK_EQ(kafka_request_decode(frame + 4, n - 4, &a, &r), KAFKA_OK);
    CHECK_EQ(r.api_key, 18);
    CHECK_EQ(r.api_version, 3);
    CHECK_EQ(r.correlation_id, 1);
    CHECK_STR(r.client_id, "adminclient-1");
    CHECK_STR(KV_STR(r.body, ApiVersionsRequest, ClientSoftwareName), "apache-kafka-java");
    CHECK_STR(KV_STR(r.body, ApiVersionsRequest, ClientSoftwareVersion), "3.9.0");

    /* and we put the same bytes on the wire */
    buf_t b;
    buf_init(&b);
    CHECK_EQ(kafka_request_encode(&b, r.api, 3, 1, "adminclient-1", r.body), KAFKA_OK);
    CHECK(b.len == n && memcmp(b.data, frame, n) == 0);
    buf_free(&b);
    kafka_arena_free(&a);
}

/* kafka-python 2.0.2 probes with Metadata v0 for all topics (empty array). */
static void test_kafka_known_metadata_v0_request(void)
{
    uint8_t frame[64];
    size_t n = from_hex("00000020 0003 0000 00000002"
                        "0012 6b61666b612d707974686f6e2d322e302e32" /* "kafka-python-2.0.2" */
                        "00000000",
                        frame, sizeof(frame));
    kafka_arena_t a;
    kafka_arena_init(&a, kafka_decode_budget(n));
    kafka_request_t r;
    CHECK_EQ(kafka_request_decode(frame + 4, n - 4, &a, &r), KAFKA_OK);
    CHECK(r.api_key == KAFKA_API_METADATA && r.api_version == 0 && r.correlation_id == 2);
    CHECK_STR(r.client_id, "kafka-python-2.0.2");
    const kafka_value_t *topics = KV_GET(r.body, MetadataRequest, Topics);
    CHECK(!topics->is_null && topics->n == 0);
    /* fields newer than v0 read as Kafka's defaults */
    CHECK_EQ(KV_INT(r.body, MetadataRequest, AllowAutoTopicCreation), 1);
    kafka_arena_free(&a);
}

/* ApiVersions responses: v0 bytes exactly, and v3 keeps header v0 (KIP-511). */
static void test_kafka_known_api_versions_responses(void)
{
    const kafka_api_t *api = kafka_api_find(KAFKA_API_API_VERSIONS);
    kafka_arena_t a;
    kafka_arena_init(&a, 0);
    kafka_value_t *body = kv_new_struct(&a, api->response);
    kafka_value_t *keys = KV_SET_ARRAY(&a, body, ApiVersionsResponse, ApiKeys, 2);
    KV_SET_INT(kv_at(keys, 0), ApiVersion, ApiKey, 0);
    KV_SET_INT(kv_at(keys, 0), ApiVersion, MaxVersion, 9);
    KV_SET_INT(kv_at(keys, 1), ApiVersion, ApiKey, 18);
    KV_SET_INT(kv_at(keys, 1), ApiVersion, MaxVersion, 3);
    uint8_t want[64];
    buf_t b;
    buf_init(&b);

    CHECK_EQ(kafka_response_encode(&b, api, 0, 5, body), KAFKA_OK);
    size_t n = from_hex("00000016 00000005 0000 00000002 0000 0000 0009 0012 0000 0003", want, sizeof(want));
    CHECK(b.len == n && memcmp(b.data, want, n) == 0);

    buf_clear(&b);
    CHECK_EQ(kafka_response_encode(&b, api, 3, 5, body), KAFKA_OK);
    /* header v0 (no tagged fields), then a compact array of entries that
     * each end in an empty tagged-field section */
    n = from_hex("0000001a 00000005 0000 03 0000 0000 0009 00 0012 0000 0003 00 00000000 00", want, sizeof(want));
    CHECK(b.len == n && memcmp(b.data, want, n) == 0);
    buf_free(&b);
    kafka_arena_free(&a);
}

/* KIP-511: a newer ApiVersions than ours is still read far enough to answer
 * it, with v0 and UNSUPPORTED_VERSION. */
static void test_kafka_api_versions_fallback(void)
{
    uint8_t frame[64];
    /* ApiVersions v9 with a body we cannot know */
    size_t n = from_hex("0012 0009 0000002a 0003 616263 00 ff ee dd", frame, sizeof(frame));
    kafka_arena_t a;
    kafka_arena_init(&a, kafka_decode_budget(n));
    kafka_request_t r;
    CHECK_EQ(kafka_request_decode(frame, n, &a, &r), KAFKA_EUNSUPPORTED);
    CHECK(r.api_key == 18 && r.api_version == 9 && r.correlation_id == 42 && r.body == NULL);
    CHECK_STR(r.client_id, "abc");
    CHECK_EQ(kafka_api_versions_response_version(9), 0);
    CHECK_EQ(kafka_api_versions_response_version(3), 3);
    CHECK_EQ(kafka_api_versions_response_version(-1), 0);

    /* unknown API key: header still read, answer possible */
    n = from_hex("7fff 0000 00000007 ffff", frame, sizeof(frame));
    CHECK_EQ(kafka_request_decode(frame, n, &a, &r), KAFKA_EUNSUPPORTED);
    CHECK(r.api == NULL && r.correlation_id == 7 && r.client_id == NULL);
    /* a version below our minimum of a known API */
    n = from_hex("0003 ffff 00000008 ffff", frame, sizeof(frame));
    CHECK_EQ(kafka_request_decode(frame, n, &a, &r), KAFKA_EUNSUPPORTED);
    kafka_arena_free(&a);
}

static int decode_req(const char *hex, kafka_arena_t *a, kafka_request_t *r)
{
    uint8_t frame[256];
    size_t n = from_hex(hex, frame, sizeof(frame));
    uint8_t *copy = malloc(n);
    memcpy(copy, frame, n);
    kafka_arena_init(a, kafka_decode_budget(n));
    int rc = kafka_request_decode(copy, n, a, r);
    free(copy);   /* strings were copied; bodies here hold no records */
    return rc;
}

/* Lengths and counts that the frame cannot back are refused before any
 * allocation of that size. */
static void test_kafka_hostile_lengths(void)
{
    static const char *bad[] = {
        "0003 0000 00000001 ffff 7fffffff 0001 61",          /* Metadata v0: 2^31-1 topics */
        "0003 0000 00000001 ffff 00000001 7fff 61",          /* topic name longer than the frame */
        "0003 0000 00000001 ffff 00000001 fffe",             /* negative string length */
        "0003 0000 00000001 ffff fffffffe",                  /* negative count */
        "0003 0000 00000001 ffff ffffffff",                  /* null topics in v0 */
        "0003 0000 00000001 fff0",                           /* client id length -16 */
        "0003 0009 00000001 ffff 00 ffffffff0f 00 00 00 00", /* compact count 2^32-2 */
        "0003 0009 00000001 ffff 00 ffffffffff01",           /* varint longer than 5 bytes */
        "0003 0009 00000001 ffff 00 02 00 0000 00 00 00 00", /* compact string len+1 = 0 (null name) in v9 */
        "0000 0003 00000001 ffff ffff 0001 00000000 00000001 0003 616263 00000001 00000000 7ffffff0",
        /* Produce v3: records length beyond the frame */
        "0012 0003 00000001 ffff 00 01 01 01 05 7f 00",      /* tagged field size beyond the frame */
        "0012 0003 00000001 ffff 00 01 01 05",               /* tagged count 5 with none present */
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        kafka_arena_t a;
        kafka_request_t r;
        int rc = decode_req(bad[i], &a, &r);
        if (rc != KAFKA_EMALFORMED)
            fprintf(stderr, "  hostile case %zu: rc %d\n", i, rc);
        CHECK_EQ(rc, KAFKA_EMALFORMED);
        CHECK(a.used < 8192);
        kafka_arena_free(&a);
    }
    /* A generous budget still holds: tiny budget, real frame -> refused. */
    kafka_arena_t a;
    kafka_arena_init(&a, 64);
    const kafka_api_t *api = kafka_api_find(KAFKA_API_METADATA);
    uint8_t frame[32];
    size_t n = from_hex("00000002 0001 61 0001 62", frame, sizeof(frame));
    kafka_value_t *out;
    CHECK_EQ(kafka_decode(frame, n, api->request, 0, 0, &a, &out), KAFKA_EMALFORMED);
    CHECK(a.used <= 64);
    kafka_arena_free(&a);
}

/* Tags we do not know are skipped; known ones are read from their slot. */
static void test_kafka_tagged_fields(void)
{
    kafka_arena_t a;
    kafka_request_t r;
    /* ApiVersions v3: body tagged fields carry tag 7 (3 bytes) and tag 100 (0 bytes) */
    CHECK_EQ(decode_req("0012 0003 00000001 ffff 00 02 61 02 62 02 07 03 aabbcc 64 00", &a, &r), KAFKA_OK);
    CHECK_STR(KV_STR(r.body, ApiVersionsRequest, ClientSoftwareName), "a");
    CHECK_STR(KV_STR(r.body, ApiVersionsRequest, ClientSoftwareVersion), "b");
    kafka_arena_free(&a);
    /* ... and in the request header too */
    CHECK_EQ(decode_req("0012 0003 00000001 ffff 01 05 02 0102 02 61 02 62 00", &a, &r), KAFKA_OK);
    kafka_arena_free(&a);

    /* Fetch v12 with ClusterId (tag 0) = "c" and an unknown tag 9 */
    CHECK_EQ(decode_req("0001 000c 00000001 ffff 00"
                        "ffffffff 00000064 00000001 00100000 00 00000000 ffffffff"
                        "01 01 01"  /* Topics [], ForgottenTopicsData [], RackId "" */
                        "02 00 02 02 63 09 01 ff", /* tags: 0 -> "c", 9 -> skipped */
                        &a, &r),
             KAFKA_OK);
    CHECK_STR(KV_STR(r.body, FetchRequest, ClusterId), "c");
    CHECK_EQ(KV_INT(r.body, FetchRequest, MaxWaitMs), 100);
    CHECK_EQ(KV_INT(r.body, FetchRequest, ReplicaId), -1);
    kafka_arena_free(&a);

    /* a known tag whose value does not fill its declared size */
    CHECK_EQ(decode_req("0001 000c 00000001 ffff 00"
                        "ffffffff 00000064 00000001 00100000 00 00000000 ffffffff"
                        "01 01 01 01 00 03 02 63 63",
                        &a, &r),
             KAFKA_EMALFORMED);
    kafka_arena_free(&a);
}

/* Types no table above uses yet: varint, varlong, uint16, float64. */
static const kafka_field_t prim_fields[] = {
    {.name = "vi", .type = KT_VARINT, .vmax = KAFKA_VMAX},
    {.name = "vl", .type = KT_VARLONG, .vmax = KAFKA_VMAX},
    {.name = "u16", .type = KT_UINT16, .vmax = KAFKA_VMAX},
    {.name = "f", .type = KT_FLOAT64, .vmax = KAFKA_VMAX},
    {.name = "b", .type = KT_BYTES, .vmax = KAFKA_VMAX, .nullable = 1},
};
static const kafka_struct_t prim_struct = {"Prims", prim_fields, 5};
/* Its fields by index: the functional form of typed access (kv_*_at), as
 * KV_* macros expand to for kafka_messages.h's structs. */
enum { PRIM_VI, PRIM_VL, PRIM_U16, PRIM_F, PRIM_B };
static const uint8_t prim_xy[] = "xy";

static void test_kafka_primitives(void)
{
    static const int64_t vis[] = {0, -1, 1, 63, -64, 64, INT32_MAX, INT32_MIN};
    static const int64_t vls[] = {0, -1, 300, INT64_MAX, INT64_MIN};
    for (size_t i = 0; i < sizeof(vis) / sizeof(vis[0]); i++)
        for (size_t j = 0; j < sizeof(vls) / sizeof(vls[0]); j++)
            for (int flex = 0; flex < 2; flex++) {
                kafka_arena_t a;
                kafka_arena_init(&a, 0);
                kafka_value_t *v = kv_new_struct(&a, &prim_struct), *got;
                kv_set_int_at(v, &prim_struct, PRIM_VI, vis[i]);
                kv_set_int_at(v, &prim_struct, PRIM_VL, vls[j]);
                kv_set_int_at(v, &prim_struct, PRIM_U16, 65535);
                kv_field(v, &prim_struct, PRIM_F)->u.f = -2.25;
                kv_set_bytes_at(v, &prim_struct, PRIM_B, flex ? NULL : prim_xy, 2);
                buf_t b;
                buf_init(&b);
                CHECK_EQ(kafka_encode(&b, &prim_struct, 0, flex, v), KAFKA_OK);
                CHECK_EQ(kafka_decode(b.data, b.len, &prim_struct, 0, flex, &a, &got), KAFKA_OK);
                CHECK(values_equal(v, got));
                buf_free(&b);
                kafka_arena_free(&a);
            }
    /* zigzag: -1 is 01, 1 is 02, INT32_MIN is ffffffff0f */
    uint8_t want[32];
    kafka_arena_t a;
    kafka_arena_init(&a, 0);
    kafka_value_t *v = kv_new_struct(&a, &prim_struct);
    kv_set_int_at(v, &prim_struct, PRIM_VI, INT32_MIN);
    kv_set_int_at(v, &prim_struct, PRIM_VL, -1);
    buf_t b;
    buf_init(&b);
    CHECK_EQ(kafka_encode(&b, &prim_struct, 0, 0, v), KAFKA_OK);
    size_t n = from_hex("ffffffff0f 01 0000 0000000000000000 00000000", want, sizeof(want));
    CHECK(b.len == n && memcmp(b.data, want, n) == 0);
    buf_free(&b);
    kafka_arena_free(&a);
}

/* Values that do not fit the schema are refused, and the output is unchanged. */
static void test_kafka_encode_refuses(void)
{
    const kafka_api_t *api = kafka_api_find(KAFKA_API_METADATA);
    kafka_arena_t a;
    kafka_arena_init(&a, 0);
    kafka_value_t *body = kv_new_struct(&a, api->request);
    KV_GET(body, MetadataRequest, Topics)->is_null = 1;   /* null topics: v1+ only */
    buf_t b;
    buf_init(&b);
    buf_append(&b, "x", 1);
    CHECK_EQ(kafka_encode(&b, api->request, 0, 0, body), KAFKA_EINVAL);
    CHECK_EQ(kafka_request_encode(&b, api, 0, 1, "c", body), KAFKA_EINVAL);
    CHECK_EQ(b.len, 1u);
    CHECK_EQ(kafka_encode(&b, api->request, 1, 0, body), KAFKA_OK);
    CHECK_EQ(kafka_encode(&b, api->response, 1, 0, body), KAFKA_EINVAL);   /* wrong schema */
    buf_free(&b);
    kafka_arena_free(&a);
}

/* Random bytes after a valid header: any result but a crash or overread. */
static void test_kafka_garbage(void)
{
    uint32_t seed = 12345;
    for (int i = 0; i < kafka_napis; i++) {
        const kafka_api_t *api = &kafka_apis[i];
        for (int16_t v = api->min; v <= api->max; v++)
            for (int round = 0; round < 50; round++) {
                size_t n = 11 + (size_t)(round * 3);
                uint8_t *p = malloc(n);
                for (size_t k = 0; k < n; k++) {
                    seed = seed * 1103515245u + 12345u;
                    p[k] = (uint8_t)(seed >> 16);
                }
                be16_put(p, (uint16_t)api->key);
                be16_put(p + 2, (uint16_t)v);
                p[8] = p[9] = 0xff;   /* null client id, so the body is what gets fuzzed */
                if (kafka_api_flexible(api, v))
                    p[10] = 0;
                kafka_arena_t a;
                kafka_arena_init(&a, kafka_decode_budget(n));
                kafka_request_t r;
                int rc = kafka_request_decode(p, n, &a, &r);
                CHECK(rc == KAFKA_OK || rc == KAFKA_EMALFORMED);
                CHECK(a.used <= kafka_decode_budget(n));
                kafka_arena_free(&a);
                free(p);
            }
    }
}

/* Schema sanity: tagged fields ascending, element types set, ranges sane. */
static int struct_ok(const kafka_struct_t *s)
{
    int last_tag = -1;
    for (int i = 0; i < s->nfields; i++) {
        const kafka_field_t *f = &s->fields[i];
        if (f->vmin > f->vmax || (f->nullable && f->nmin > f->vmax && f->vmax != KAFKA_VMAX))
            return 0;
        if (f->tagged) {
            if (f->tag <= last_tag)
                return 0;
            last_tag = f->tag;
        }
        if (f->type == KT_ARRAY && !f->elem)
            return 0;
        if ((f->type == KT_STRUCT || (f->type == KT_ARRAY && f->elem == KT_STRUCT)) && !struct_ok(f->sub))
            return 0;
    }
    return 1;
}

static void test_kafka_schema_tables(void)
{
    for (int i = 0; i < kafka_napis; i++) {
        CHECK(struct_ok(kafka_apis[i].request));
        CHECK(struct_ok(kafka_apis[i].response));
        CHECK(kafka_api_find(kafka_apis[i].key) == &kafka_apis[i]);
    }
    CHECK_EQ(kafka_napis, 30);
    CHECK(kafka_api_find(12345) == NULL);
    const kafka_api_t *fetch = kafka_api_find(KAFKA_API_FETCH);
    CHECK_EQ(kafka_request_header_version(fetch, 11), 1);
    CHECK_EQ(kafka_request_header_version(fetch, 12), 2);
    CHECK_EQ(kafka_response_header_version(fetch, 12), 1);
    CHECK_EQ(kafka_response_header_version(kafka_api_find(KAFKA_API_API_VERSIONS), 3), 0);
    CHECK_EQ(kafka_request_header_version(kafka_api_find(KAFKA_API_DESCRIBE_CLUSTER), 0), 2);
}

/* Typed access: a field's enum is its row in the struct's table; a field
 * picked at run time (kv_ref_t) reaches the same slot; a value of another
 * struct is refused, fatally. */
static void test_kafka_typed_fields(void)
{
    CHECK_STR(kafka_struct_ProduceRequest.fields[ProduceRequest_Acks].name, "Acks");
    CHECK_EQ(kafka_struct_ProduceRequest.nfields, ProduceRequest_nfields);
    CHECK(kafka_api_find(KAFKA_API_PRODUCE)->request == &kafka_struct_ProduceRequest);
    CHECK_EQ((int)ProduceRequest_Acks_type, (int)KT_INT16);

    kafka_arena_t a;
    kafka_arena_init(&a, 0);
    kafka_value_t *req = KV_NEW(&a, ProduceRequest);
    KV_SET_INT(req, ProduceRequest, Acks, -1);
    static const kv_ref_t acks = KV_REF(ProduceRequest, Acks);
    CHECK_EQ(KV_REF_INT(req, acks), -1);
    CHECK_EQ(KV_GET(req, ProduceRequest, Acks), &req->u.items[ProduceRequest_Acks]);
    CHECK(KV_STR(req, ProduceRequest, TransactionalId) == NULL);   /* its default: null */

    /* Asking a FetchRequest field of a ProduceRequest is a programming error. */
    pid_t pid = fork();
    if (pid == 0) {
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0)
            dup2(devnull, 2);
        (void)KV_INT(req, FetchRequest, MaxWaitMs);
        _exit(0);
    }
    int status = 0;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
    kafka_arena_free(&a);
}

/* Records left out of a response (sent with sendfile): the frame size counts
 * them, the encoder notes where they go, and splicing the bytes in at that
 * place gives exactly the frame an inline encode produces. */
static void test_kafka_external_records(void)
{
    const kafka_api_t *api = kafka_api_find(KAFKA_API_FETCH);
    static const uint8_t recs[] = "0123456789abcdefghij";
    for (int16_t v = 4; v <= 12; v++) {
        kafka_arena_t a;
        kafka_arena_init(&a, 0);
        buf_t inline_out, ext_out;
        buf_init(&inline_out);
        buf_init(&ext_out);
        buf_append(&ext_out, "junk", 4);   /* offsets count from the read cursor */
        buf_consume(&ext_out, 4);
        kafka_value_t *resp = kv_new_struct(&a, api->response);
        kafka_value_t *topics = KV_SET_ARRAY(&a, resp, FetchResponse, Responses, 1);
        KV_SET_STR(&a, kv_at(topics, 0), FetchableTopicResponse, Topic, "t");
        kafka_value_t *parts = KV_SET_ARRAY(&a, kv_at(topics, 0), FetchableTopicResponse, Partitions, 2);
        KV_SET_INT(kv_at(parts, 0), FetchPartitionData, PartitionIndex, 0);
        KV_SET_INT(kv_at(parts, 1), FetchPartitionData, PartitionIndex, 1);
        KV_SET_BYTES(kv_at(parts, 0), FetchPartitionData, Records, recs, 20);
        KV_SET_BYTES(kv_at(parts, 1), FetchPartitionData, Records, recs + 5, 7);
        CHECK_EQ(kafka_response_encode(&inline_out, api, v, 42, resp), KAFKA_OK);
        kafka_ext_records_t e0 = {.len = 20}, e1 = {.len = 7};
        KV_SET_EXTERNAL_RECORDS(kv_at(parts, 0), FetchPartitionData, Records, &e0);
        KV_SET_EXTERNAL_RECORDS(kv_at(parts, 1), FetchPartitionData, Records, &e1);
        CHECK_EQ(kafka_response_encode(&ext_out, api, v, 42, resp), KAFKA_OK);
        CHECK(e0.encoded && e1.encoded);
        CHECK_EQ(buf_unread(&ext_out) + 27, buf_unread(&inline_out));
        CHECK(e0.out_offset < e1.out_offset && e1.out_offset <= buf_unread(&ext_out));
        /* Splice the bytes in where the encoder said. */
        buf_t spliced;
        buf_init(&spliced);
        const uint8_t *p = buf_read_ptr(&ext_out);
        buf_append(&spliced, p, e0.out_offset);
        buf_append(&spliced, recs, 20);
        buf_append(&spliced, p + e0.out_offset, e1.out_offset - e0.out_offset);
        buf_append(&spliced, recs + 5, 7);
        buf_append(&spliced, p + e1.out_offset, buf_unread(&ext_out) - e1.out_offset);
        CHECK_EQ(buf_unread(&spliced), buf_unread(&inline_out));
        CHECK(memcmp(buf_read_ptr(&spliced), buf_read_ptr(&inline_out), buf_unread(&spliced)) == 0);
        /* A length that disagrees with the value is refused. */
        e1.len = 8;
        CHECK_EQ(kafka_response_encode(&ext_out, api, v, 42, resp), KAFKA_EINVAL);
        buf_free(&spliced);
        buf_free(&inline_out);
        buf_free(&ext_out);
        kafka_arena_free(&a);
    }
}

/* ---- the decode budget ---- */

/* What decoding a request built as real clients build it takes from the
 * arena, per byte of its frame; and that it fits kafka_decode_budget. */
static double decode_cost(const kafka_value_t *body, int16_t key, int16_t v, const char *what)
{
    buf_t out;
    buf_init(&out);
    const kafka_api_t *api = kafka_api_find(key);
    CHECK_EQ(kafka_request_encode(&out, api, v, 1, "consumer-1", body), KAFKA_OK);
    size_t n = buf_unread(&out) - 4;
    kafka_arena_t a;
    kafka_request_t req;
    kafka_arena_init(&a, kafka_decode_budget(n));
    int rc = kafka_request_decode(buf_read_ptr(&out) + 4, n, &a, &req);
    CHECK_EQ(rc, KAFKA_OK);
    double ratio = (double)a.used / (double)n;
    if (getenv("UNIT_VERBOSE") || rc != KAFKA_OK)
        fprintf(stderr, "  %-44s v%-2d %8zu bytes, arena %9zu (%.1f per byte)\n", what, v, n, a.used, ratio);
    kafka_arena_free(&a);
    buf_free(&out);
    return ratio;
}

static void name_at(char *out, size_t cap, const char *prefix, uint32_t i)
{
    snprintf(out, cap, "%s%05u", prefix, i);
}

static double cost_produce(kafka_arena_t *a, int16_t v, uint32_t nparts)
{
    static uint8_t batch[91];   /* one small record, as a batch v2 takes it */
    kafka_value_t *r = KV_NEW(a, ProduceRequest);
    KV_SET_INT(r, ProduceRequest, Acks, -1);
    kafka_value_t *t = KV_SET_ARRAY(a, r, ProduceRequest, TopicData, 1);
    KV_SET_STR(a, kv_at(t, 0), TopicProduceData, Name, "events");
    kafka_value_t *ps = KV_SET_ARRAY(a, kv_at(t, 0), TopicProduceData, PartitionData, nparts);
    for (uint32_t i = 0; i < nparts; i++) {
        KV_SET_INT(kv_at(ps, i), PartitionProduceData, Index, i);
        KV_SET_BYTES(kv_at(ps, i), PartitionProduceData, Records, batch, sizeof(batch));
    }
    return decode_cost(r, KAFKA_API_PRODUCE, v, "Produce, 1 topic, partitions of 1 record");
}

static double cost_metadata(kafka_arena_t *a, int16_t v, uint32_t ntopics, const char *prefix)
{
    kafka_value_t *r = KV_NEW(a, MetadataRequest);
    kafka_value_t *t = KV_SET_ARRAY(a, r, MetadataRequest, Topics, ntopics);
    char name[32];
    for (uint32_t i = 0; i < ntopics; i++) {
        name_at(name, sizeof(name), prefix, i);
        KV_SET_STR(a, kv_at(t, i), MetadataRequestTopic, Name, name);
    }
    return decode_cost(r, KAFKA_API_METADATA, v, "Metadata, topics by name");
}

static double cost_offset_commit(kafka_arena_t *a, int16_t v, uint32_t ntopics, uint32_t nparts)
{
    kafka_value_t *r = KV_NEW(a, OffsetCommitRequest);
    KV_SET_STR(a, r, OffsetCommitRequest, GroupId, "group");
    KV_SET_STR(a, r, OffsetCommitRequest, MemberId, "consumer-1-5f0c1a52-3f3e-4a8e-9f59-6d5c0a8b1e2f");
    kafka_value_t *ts = KV_SET_ARRAY(a, r, OffsetCommitRequest, Topics, ntopics);
    char name[32];
    for (uint32_t k = 0; k < ntopics; k++) {
        name_at(name, sizeof(name), "topic-", k);
        KV_SET_STR(a, kv_at(ts, k), OffsetCommitRequestTopic, Name, name);
        kafka_value_t *ps = KV_SET_ARRAY(a, kv_at(ts, k), OffsetCommitRequestTopic, Partitions, nparts);
        for (uint32_t i = 0; i < nparts; i++) {
            KV_SET_INT(kv_at(ps, i), OffsetCommitRequestPartition, PartitionIndex, i);
            KV_SET_INT(kv_at(ps, i), OffsetCommitRequestPartition, CommittedOffset, 123456789);
            KV_SET_STR(a, kv_at(ps, i), OffsetCommitRequestPartition, CommittedMetadata, "");
        }
    }
    return decode_cost(r, KAFKA_API_OFFSET_COMMIT, v, "OffsetCommit, empty metadata");
}

static double cost_fetch(kafka_arena_t *a, int16_t v, uint32_t ntopics, uint32_t nparts)
{
    kafka_value_t *r = KV_NEW(a, FetchRequest);
    kafka_value_t *ts = KV_SET_ARRAY(a, r, FetchRequest, Topics, ntopics);
    char name[32];
    for (uint32_t k = 0; k < ntopics; k++) {
        name_at(name, sizeof(name), "topic-", k);
        KV_SET_STR(a, kv_at(ts, k), FetchTopic, Topic, name);
        kafka_value_t *ps = KV_SET_ARRAY(a, kv_at(ts, k), FetchTopic, Partitions, nparts);
        for (uint32_t i = 0; i < nparts; i++) {
            KV_SET_INT(kv_at(ps, i), FetchPartition, Partition, i);
            KV_SET_INT(kv_at(ps, i), FetchPartition, FetchOffset, 1000);
            KV_SET_INT(kv_at(ps, i), FetchPartition, PartitionMaxBytes, 1048576);
        }
    }
    return decode_cost(r, KAFKA_API_FETCH, v, "Fetch");
}

static double cost_list_offsets(kafka_arena_t *a, int16_t v, uint32_t nparts)
{
    kafka_value_t *r = KV_NEW(a, ListOffsetsRequest);
    kafka_value_t *ts = KV_SET_ARRAY(a, r, ListOffsetsRequest, Topics, 1);
    KV_SET_STR(a, kv_at(ts, 0), ListOffsetsTopic, Name, "events");
    kafka_value_t *ps = KV_SET_ARRAY(a, kv_at(ts, 0), ListOffsetsTopic, Partitions, nparts);
    for (uint32_t i = 0; i < nparts; i++) {
        KV_SET_INT(kv_at(ps, i), ListOffsetsPartition, PartitionIndex, i);
        KV_SET_INT(kv_at(ps, i), ListOffsetsPartition, Timestamp, -1);
    }
    return decode_cost(r, KAFKA_API_LIST_OFFSETS, v, "ListOffsets");
}

static double cost_offset_fetch(kafka_arena_t *a, int16_t v, uint32_t nparts)
{
    kafka_value_t *r = KV_NEW(a, OffsetFetchRequest);
    KV_SET_STR(a, r, OffsetFetchRequest, GroupId, "group");
    kafka_value_t *ts = KV_SET_ARRAY(a, r, OffsetFetchRequest, Topics, 1);
    KV_SET_STR(a, kv_at(ts, 0), OffsetFetchRequestTopic, Name, "events");
    kafka_value_t *ps = KV_SET_ARRAY(a, kv_at(ts, 0), OffsetFetchRequestTopic, PartitionIndexes, nparts);
    for (uint32_t i = 0; i < nparts; i++)
        kv_at(ps, i)->u.i = i;
    return decode_cost(r, KAFKA_API_OFFSET_FETCH, v, "OffsetFetch");
}

static double cost_describe_groups(kafka_arena_t *a, int16_t v, uint32_t ngroups)
{
    kafka_value_t *r = KV_NEW(a, DescribeGroupsRequest);
    kafka_value_t *gs = KV_SET_ARRAY(a, r, DescribeGroupsRequest, Groups, ngroups);
    for (uint32_t i = 0; i < ngroups; i++) {
        char *id = kafka_arena_alloc(a, 16);
        name_at(id, 16, "group-", i);
        kv_at(gs, i)->u.s = id;
        kv_at(gs, i)->n = (uint32_t)strlen(id);
    }
    return decode_cost(r, KAFKA_API_DESCRIBE_GROUPS, v, "DescribeGroups");
}

/* The replica fetcher decodes its leader's answers under the same budget:
 * a Fetch v11 answer of partitions without data is its densest. */
static double cost_fetch_answer(kafka_arena_t *a, int16_t v, uint32_t nparts)
{
    const kafka_api_t *api = kafka_api_find(KAFKA_API_FETCH);
    kafka_value_t *r = kv_new_struct(a, api->response);
    kafka_value_t *ts = KV_SET_ARRAY(a, r, FetchResponse, Responses, 1);
    KV_SET_STR(a, kv_at(ts, 0), FetchableTopicResponse, Topic, "events");
    kafka_value_t *ps = KV_SET_ARRAY(a, kv_at(ts, 0), FetchableTopicResponse, Partitions, nparts);
    for (uint32_t i = 0; i < nparts; i++) {
        KV_SET_INT(kv_at(ps, i), FetchPartitionData, PartitionIndex, i);
        KV_SET_BYTES(kv_at(ps, i), FetchPartitionData, Records, "", 0);
    }
    buf_t out;
    buf_init(&out);
    CHECK_EQ(kafka_response_encode(&out, api, v, 1, r), KAFKA_OK);
    size_t n = buf_unread(&out) - 4;
    kafka_arena_t da;
    kafka_arena_init(&da, kafka_answer_decode_budget(n));
    int32_t corr;
    kafka_value_t *body;
    CHECK_EQ(kafka_response_decode(buf_read_ptr(&out) + 4, n, api, v, &da, &corr, &body), KAFKA_OK);
    double ratio = (double)da.used / (double)n;
    if (getenv("UNIT_VERBOSE"))
        fprintf(stderr, "  %-44s v%-2d %8zu bytes, arena %9zu (%.1f per byte)\n", "Fetch answer, empty partitions", v,
                n, da.used, ratio);
    kafka_arena_free(&da);
    buf_free(&out);
    return ratio;
}

/* The budget is a small multiple of the frame: enough for what clients send
 * (Produce, Fetch, Metadata with many topics, OffsetCommit with many
 * partitions, in old and flexible versions) and for the leader's answers a
 * replica fetcher decodes, measured here; a frame made of the smallest
 * possible elements (empty topic names) is refused. */
static void test_kafka_decode_budget(void)
{
    kafka_arena_t a;
    kafka_arena_init(&a, 0);
    double worst = 0, r;
    int16_t versions[] = {3, 8, 9};
    for (int i = 0; i < 3; i++)
        if ((r = cost_produce(&a, versions[i], 2000)) > worst)
            worst = r;
    int16_t mversions[] = {1, 4, 9, 12};
    for (int i = 0; i < 4; i++) {
        if ((r = cost_metadata(&a, mversions[i], 20000, "topic-")) > worst)
            worst = r;
        if ((r = cost_metadata(&a, mversions[i], 20000, "t")) > worst)
            worst = r;
    }
    int16_t cversions[] = {2, 6, 8};
    for (int i = 0; i < 3; i++) {
        if ((r = cost_offset_commit(&a, cversions[i], 1, 20000)) > worst)
            worst = r;
        if ((r = cost_offset_commit(&a, cversions[i], 200, 100)) > worst)
            worst = r;
    }
    int16_t fversions[] = {4, 11, 12};
    for (int i = 0; i < 3; i++) {
        if ((r = cost_fetch(&a, fversions[i], 1, 5000)) > worst)
            worst = r;
        if ((r = cost_fetch(&a, fversions[i], 1000, 5)) > worst)
            worst = r;
    }
    if ((r = cost_list_offsets(&a, 1, 5000)) > worst)
        worst = r;
    if ((r = cost_list_offsets(&a, 7, 5000)) > worst)
        worst = r;
    if ((r = cost_offset_fetch(&a, 1, 20000)) > worst)
        worst = r;
    if ((r = cost_describe_groups(&a, 0, 5000)) > worst)
        worst = r;
    if ((r = cost_fetch_answer(&a, 11, 20000)) > worst)
        worst = r;
    if (getenv("UNIT_VERBOSE"))
        fprintf(stderr, "  worst: %.1f arena bytes per frame byte\n", worst);
    CHECK(worst <= KAFKA_DECODE_PER_BYTE);
    kafka_arena_free(&a);

    /* 1 MiB of empty topic names (Metadata v1) would take 48 MiB of nodes:
     * refused as over budget, having taken no more than the budget. */
    size_t n = 1 << 20;
    uint8_t *frame = calloc(1, n);
    size_t hdr = (size_t)from_hex("0003 0001 00000007 0000", frame, 16);   /* Metadata v1, corr 7, client "" */
    uint32_t count = (uint32_t)((n - hdr - 4) / 2);
    be32_put(frame + hdr, count);   /* then count int16 zero lengths: "" each */
    kafka_arena_t da;
    kafka_request_t req;
    kafka_arena_init(&da, kafka_decode_budget(n));
    CHECK_EQ(kafka_request_decode(frame, n, &da, &req), KAFKA_EBUDGET);
    CHECK(da.used <= kafka_decode_budget(n));
    kafka_arena_free(&da);
    /* The same names, a few of them, decode fine. */
    kafka_arena_init(&da, kafka_decode_budget(hdr + 4 + 200));
    be32_put(frame + hdr, 100);
    CHECK_EQ(kafka_request_decode(frame, hdr + 4 + 200, &da, &req), KAFKA_OK);
    CHECK_EQ(KV_GET(req.body, MetadataRequest, Topics)->n, 100);
    kafka_arena_free(&da);
    free(frame);
    /* The budget: a small multiple of the frame, and capped whatever the frame. */
    CHECK_EQ(kafka_decode_budget(1000), 16 * 1000 + 65536);
    CHECK_EQ(kafka_decode_budget((size_t)100 << 20), KAFKA_DECODE_MAX);
    CHECK(kafka_decode_budget(((size_t)1 << 20) - 4096) <= KAFKA_DECODE_MAX);
}

/* Group APIs as the clients put them on the wire. JoinGroup v5 as librdkafka
 * 2.0 sends a new member's first join: empty member id, no instance id (a
 * null int16 string), one "range" protocol with 4 bytes of metadata. */
static void test_kafka_known_join_group_v5_request(void)
{
    uint8_t frame[128];
    size_t n = from_hex("0001 67"                    /* GroupId "g" */
                        "00001770 000493e0"          /* session 6000, rebalance 300000 */
                        "0000"                       /* MemberId "" */
                        "ffff"                       /* GroupInstanceId null */
                        "0008 636f6e73756d6572"      /* "consumer" */
                        "00000001 0005 72616e6765 00000004 00010203",
                        frame, sizeof(frame));
    const kafka_api_t *api = kafka_api_find(KAFKA_API_JOIN_GROUP);
    kafka_arena_t a;
    kafka_arena_init(&a, kafka_decode_budget(n));
    kafka_value_t *body = NULL;
    CHECK_EQ(kafka_decode(frame, n, api->request, 5, 0, &a, &body), KAFKA_OK);
    CHECK_STR(KV_STR(body, JoinGroupRequest, GroupId), "g");
    CHECK_EQ(KV_INT(body, JoinGroupRequest, SessionTimeoutMs), 6000);
    CHECK_EQ(KV_INT(body, JoinGroupRequest, RebalanceTimeoutMs), 300000);
    CHECK_STR(KV_STR(body, JoinGroupRequest, MemberId), "");
    CHECK(KV_STR(body, JoinGroupRequest, GroupInstanceId) == NULL);
    CHECK(KV_STR(body, JoinGroupRequest, Reason) == NULL);   /* v8+ only: its default */
    const kafka_value_t *protos = KV_GET(body, JoinGroupRequest, Protocols);
    CHECK_EQ(protos->n, 1u);
    CHECK_STR(KV_STR(kv_at(protos, 0), JoinGroupRequestProtocol, Name), "range");
    const kafka_value_t *md = KV_GET(kv_at(protos, 0), JoinGroupRequestProtocol, Metadata);
    CHECK(md->n == 4 && memcmp(md->u.b, "\x00\x01\x02\x03", 4) == 0);
    buf_t b;
    buf_init(&b);
    CHECK_EQ(kafka_encode(&b, api->request, 5, 0, body), KAFKA_OK);
    CHECK(b.len == n && memcmp(b.data, frame, n) == 0);
    buf_free(&b);
    kafka_arena_free(&a);
}

/* FindCoordinator v0's answer as kafka-python 2.0.2 reads it, and v4's
 * batch form (flexible: compact strings and arrays, tag buffers). */
static void test_kafka_known_find_coordinator_responses(void)
{
    const kafka_api_t *api = kafka_api_find(KAFKA_API_FIND_COORDINATOR);
    kafka_arena_t a;
    kafka_arena_init(&a, 0);
    kafka_value_t *r = kv_new_struct(&a, api->response);
    KV_SET_INT(r, FindCoordinatorResponse, NodeId, 1);
    KV_SET_STR(&a, r, FindCoordinatorResponse, Host, "127.0.0.1");
    KV_SET_INT(r, FindCoordinatorResponse, Port, 9092);
    buf_t b;
    buf_init(&b);
    CHECK_EQ(kafka_encode(&b, api->response, 0, 0, r), KAFKA_OK);
    uint8_t want[64];
    size_t n = from_hex("0000 00000001 0009 3132372e302e302e31 00002384", want, sizeof(want));
    CHECK(b.len == n && memcmp(b.data, want, n) == 0);

    kafka_value_t *r4 = kv_new_struct(&a, api->response);
    kafka_value_t *cs = KV_SET_ARRAY(&a, r4, FindCoordinatorResponse, Coordinators, 1);
    KV_SET_STR(&a, kv_at(cs, 0), Coordinator, Key, "g");
    KV_SET_INT(kv_at(cs, 0), Coordinator, NodeId, -1);
    KV_SET_INT(kv_at(cs, 0), Coordinator, Port, -1);
    KV_SET_INT(kv_at(cs, 0), Coordinator, ErrorCode, KERR_COORDINATOR_NOT_AVAILABLE);
    KV_SET_STR(&a, kv_at(cs, 0), Coordinator, ErrorMessage, NULL);
    buf_clear(&b);
    CHECK_EQ(kafka_encode(&b, api->response, 4, 1, r4), KAFKA_OK);
    n = from_hex("00000000"            /* throttle */
                 "02"                  /* one coordinator */
                 "02 67 ffffffff 01 ffffffff 000f 00 00"   /* key "g", node -1, host "", port -1, error 15, null message, tags */
                 "00",                 /* response tags */
                 want, sizeof(want));
    CHECK(b.len == n && memcmp(b.data, want, n) == 0);
    buf_free(&b);
    kafka_arena_free(&a);
}

/* OffsetFetch v8 (flexible, batched): one group, null topics (every
 * committed offset), RequireStable as librdkafka's read_committed sets it. */
static void test_kafka_known_offset_fetch_v8_request(void)
{
    uint8_t frame[32];
    size_t n = from_hex("02"            /* one group */
                        "03 6731"       /* "g1" */
                        "00"            /* Topics null */
                        "00"            /* group tags */
                        "01"            /* RequireStable */
                        "00",           /* tags */
                        frame, sizeof(frame));
    const kafka_api_t *api = kafka_api_find(KAFKA_API_OFFSET_FETCH);
    kafka_arena_t a;
    kafka_arena_init(&a, kafka_decode_budget(n));
    kafka_value_t *body = NULL;
    CHECK_EQ(kafka_decode(frame, n, api->request, 8, 1, &a, &body), KAFKA_OK);
    const kafka_value_t *groups = KV_GET(body, OffsetFetchRequest, Groups);
    CHECK_EQ(groups->n, 1u);
    CHECK_STR(KV_STR(kv_at(groups, 0), OffsetFetchRequestGroup, GroupId), "g1");
    CHECK(KV_GET(kv_at(groups, 0), OffsetFetchRequestGroup, Topics)->is_null);
    CHECK_EQ(KV_INT(body, OffsetFetchRequest, RequireStable), 1);
    buf_t b;
    buf_init(&b);
    CHECK_EQ(kafka_encode(&b, api->request, 8, 1, body), KAFKA_OK);
    CHECK(b.len == n && memcmp(b.data, frame, n) == 0);
    buf_free(&b);
    kafka_arena_free(&a);
}

/* Bytes after a complete request body are ignored, as Kafka ignores them;
 * these are the frames librdkafka 2.0.2 sends (captured from
 * rd_kafka_ListConsumerGroups and rd_kafka_ListConsumerGroupOffsets). A
 * body cut short, or a known tagged field longer than its value
 * (test_kafka_tagged_fields), is still refused; so are trailing bytes after
 * a response, or a body decoded on its own (kafka_decode). */
static void test_kafka_request_trailing_bytes(void)
{
    kafka_arena_t a;
    kafka_request_t r;
    /* ListGroups v4: StatesFilter [], tags, then one byte more */
    CHECK_EQ(decode_req("0010 0004 00000003 0007 72646b61666b61 00"
                        "01 00"
                        "00",
                        &a, &r),
             KAFKA_OK);
    CHECK_EQ(r.correlation_id, 3);
    CHECK_EQ(KV_GET(r.body, ListGroupsRequest, StatesFilter)->n, 0u);
    kafka_arena_free(&a);
    /* OffsetFetch v7 of every topic: GroupId "g1", a 4-byte array-count
     * placeholder whose first byte is read as Topics (null), then
     * RequireStable and tags from the placeholder; 3 bytes are left */
    CHECK_EQ(decode_req("0009 0007 00000007 0007 72646b61666b61 00"
                        "03 6731 00 00 00"
                        "00 00 00",
                        &a, &r),
             KAFKA_OK);
    CHECK_STR(KV_STR(r.body, OffsetFetchRequest, GroupId), "g1");
    CHECK(KV_GET(r.body, OffsetFetchRequest, Topics)->is_null);
    CHECK_EQ(KV_INT(r.body, OffsetFetchRequest, RequireStable), 0);
    kafka_arena_free(&a);
    /* A non-flexible one (Metadata v0 of every topic) with a trailing byte */
    CHECK_EQ(decode_req("0003 0000 00000001 ffff 00000000 00", &a, &r), KAFKA_OK);
    CHECK_EQ(KV_GET(r.body, MetadataRequest, Topics)->n, 0u);
    kafka_arena_free(&a);
    /* ... but not a body cut short */
    CHECK_EQ(decode_req("0009 0007 00000007 0007 72646b61666b61 00 03 6731 00 00", &a, &r), KAFKA_EMALFORMED);
    kafka_arena_free(&a);
    /* A body alone must be consumed whole. */
    uint8_t frame[8];
    size_t n = from_hex("01 00 00", frame, sizeof(frame));
    kafka_value_t *body;
    kafka_arena_init(&a, kafka_decode_budget(n));
    CHECK_EQ(kafka_decode(frame, n, kafka_api_find(KAFKA_API_LIST_GROUPS)->request, 4, 1, &a, &body),
             KAFKA_EMALFORMED);
    kafka_arena_free(&a);
}

void suite_kafka_codec(void)
{
    RUN(test_kafka_request_trailing_bytes);
    RUN(test_kafka_known_join_group_v5_request);
    RUN(test_kafka_known_find_coordinator_responses);
    RUN(test_kafka_known_offset_fetch_v8_request);
    RUN(test_kafka_external_records);
    RUN(test_kafka_decode_budget);
    RUN(test_kafka_schema_tables);
    RUN(test_kafka_typed_fields);
    RUN(test_kafka_roundtrip_every_version);
    RUN(test_kafka_frames_every_version);
    RUN(test_kafka_known_api_versions_v3_request);
    RUN(test_kafka_known_metadata_v0_request);
    RUN(test_kafka_known_api_versions_responses);
    RUN(test_kafka_api_versions_fallback);
    RUN(test_kafka_hostile_lengths);
    RUN(test_kafka_tagged_fields);
    RUN(test_kafka_primitives);
    RUN(test_kafka_encode_refuses);
    RUN(test_kafka_garbage);
}
