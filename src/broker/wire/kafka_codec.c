/* kafka_codec.c -- see kafka_codec.h.  The encoder and decoder walk the
 * message tables; nothing here knows any particular message. */
#include "kafka_codec.h"
#include "kafka_messages.h"

#include <stdlib.h>
#include <string.h>

#include "base/logging.h"
#include "base/endian.h"

/* ---- arena ---- */

struct kafka_chunk {
    kafka_chunk_t *next;
    size_t used, cap;
    max_align_t data[];
};

#define CHUNK_MIN 4096
#define CHUNK_MAX (256 * 1024)

void kafka_arena_init(kafka_arena_t *a, size_t limit)
{
    a->head = NULL;
    a->used = 0;
    a->limit = limit;
    a->exhausted = 0;
}

void kafka_arena_free(kafka_arena_t *a)
{
    while (a->head) {
        kafka_chunk_t *next = a->head->next;
        free(a->head);
        a->head = next;
    }
    a->used = 0;
}

void *kafka_arena_alloc(kafka_arena_t *a, size_t n)
{
    n = n ? (n + 15) & ~(size_t)15 : 16;
    if (n > SIZE_MAX / 4 || (a->limit && (n > a->limit || a->used > a->limit - n))) {
        a->exhausted = 1;
        return NULL;
    }
    kafka_chunk_t *c = a->head;
    if (!c || c->cap - c->used < n) {
        /* Chunks double up to CHUNK_MAX so small frames cost one malloc. */
        size_t cap = c ? c->cap * 2 : CHUNK_MIN;
        if (cap > CHUNK_MAX)
            cap = CHUNK_MAX;
        if (cap < n)
            cap = n;
        c = malloc(sizeof(*c) + cap);
        if (!c)
            return NULL;
        c->next = a->head;
        c->used = 0;
        c->cap = cap;
        a->head = c;
    }
    void *p = (unsigned char *)c->data + c->used;
    c->used += n;
    a->used += n;
    memset(p, 0, n);
    return p;
}

/* ---- schema helpers ---- */

static int in_version(const kafka_field_t *f, int16_t v)
{
    return v >= f->vmin && v <= f->vmax;
}

static int null_ok(const kafka_field_t *f, int16_t v)
{
    return f->nullable && v >= f->nmin;
}

/* The element of an array, as a field of its own: never nullable. */
static kafka_field_t elem_field(const kafka_field_t *f)
{
    kafka_field_t e = {0};
    e.name = f->name;
    e.type = f->elem;
    e.sub = f->sub;
    e.vmax = KAFKA_VMAX;
    return e;
}

/* Fewest bytes a value can take on the wire: a count or length is rejected
 * unless the bytes left could hold that many of the smallest element. */
static size_t min_size(const kafka_field_t *f, int16_t v, int flex)
{
    int compact = flex && !f->noflex;
    switch (f->type) {
    case KT_BOOL: case KT_INT8: case KT_VARINT: case KT_VARLONG: return 1;
    case KT_INT16: case KT_UINT16: return 2;
    case KT_INT32: return 4;
    case KT_INT64: case KT_FLOAT64: return 8;
    case KT_UUID: return 16;
    case KT_STRING: return compact ? 1 : 2;
    case KT_BYTES: case KT_RECORDS: case KT_ARRAY: return compact ? 1 : 4;
    case KT_STRUCT: {
        size_t n = flex ? 1 : 0;
        for (int i = 0; i < f->sub->nfields; i++) {
            const kafka_field_t *c = &f->sub->fields[i];
            if (in_version(c, v) && !(flex && c->tagged))
                n += min_size(c, v, flex);
        }
        return n;
    }
    }
    return 1;
}

/* ---- defaults ---- */

static int init_struct(kafka_arena_t *a, const kafka_struct_t *s, kafka_value_t *out);

static int init_default(kafka_arena_t *a, const kafka_field_t *f, kafka_value_t *out)
{
    memset(out, 0, sizeof(*out));
    out->type = f->type;
    switch (f->type) {
    case KT_STRUCT:
        return init_struct(a, f->sub, out);
    case KT_STRING:
        out->is_null = f->defnull;
        out->u.s = f->defnull ? NULL : "";
        return 0;
    case KT_BYTES: case KT_RECORDS:
        out->is_null = f->defnull;
        return 0;
    case KT_ARRAY:
        out->is_null = f->defnull;
        out->schema = f->sub;
        return 0;
    case KT_FLOAT64:
        out->u.f = (double)f->def;
        return 0;
    case KT_UUID:
        return 0;
    default:
        out->u.i = f->def;
        return 0;
    }
}

static int init_struct(kafka_arena_t *a, const kafka_struct_t *s, kafka_value_t *out)
{
    out->type = KT_STRUCT;
    out->schema = s;
    out->n = (uint32_t)s->nfields;
    out->u.items = kafka_arena_alloc(a, sizeof(kafka_value_t) * (size_t)s->nfields);
    if (!out->u.items)
        return -1;
    for (int i = 0; i < s->nfields; i++)
        if (init_default(a, &s->fields[i], &out->u.items[i]) < 0)
            return -1;
    return 0;
}

kafka_value_t *kv_new_struct(kafka_arena_t *a, const kafka_struct_t *s)
{
    kafka_value_t *v = kafka_arena_alloc(a, sizeof(*v));
    if (!v || init_struct(a, s, v) < 0)
        return NULL;
    return v;
}

/* ---- fields ---- */

void kv_wrong_struct(const kafka_value_t *st, const kafka_struct_t *s, int i)
{
    log_error("kafka codec: field %s.%s asked of %s %s", s->name, s->fields[i].name,
              st->type == KT_STRUCT ? "a" : "a non-struct", st->type == KT_STRUCT ? st->schema->name : "value");
    abort();
}

void kv_set_str_at(kafka_arena_t *a, kafka_value_t *st, const kafka_struct_t *s, int i, const char *str)
{
    kafka_value_t *v = kv_field(st, s, i);
    v->is_null = str == NULL;
    v->n = str ? (uint32_t)strlen(str) : 0;
    v->u.s = NULL;
    if (str) {
        char *c = kafka_arena_alloc(a, v->n + 1);
        if (c)
            memcpy(c, str, v->n + 1);
        v->u.s = c ? c : "";
        v->n = c ? v->n : 0;
    }
}

void kv_set_external_records_at(kafka_value_t *st, const kafka_struct_t *s, int i, kafka_ext_records_t *ext)
{
    kafka_value_t *v = kv_field(st, s, i);
    v->is_null = 0;
    v->external = 1;
    v->n = ext->len;
    v->u.ext = ext;
    ext->encoded = 0;
}

void kv_set_bytes_at(kafka_value_t *st, const kafka_struct_t *s, int i, const void *p, uint32_t len)
{
    kafka_value_t *v = kv_field(st, s, i);
    v->is_null = p == NULL;
    v->n = p ? len : 0;
    v->u.b = p;
}

kafka_value_t *kv_set_array_at(kafka_arena_t *a, kafka_value_t *st, const kafka_struct_t *s, int i, uint32_t n)
{
    kafka_value_t *arr = kv_field(st, s, i);
    kafka_value_t *items = kafka_arena_alloc(a, sizeof(kafka_value_t) * (size_t)n);
    if (!items)
        return NULL;
    kafka_field_t e = elem_field(&s->fields[i]);
    for (uint32_t k = 0; k < n; k++)
        if (init_default(a, &e, &items[k]) < 0)
            return NULL;
    arr->is_null = 0;
    arr->n = n;
    arr->u.items = items;
    return arr;
}

/* ---- decoding ---- */

typedef struct {
    const uint8_t *p, *end;
    kafka_arena_t *a;
} rd_t;

static size_t rd_left(const rd_t *r)
{
    return (size_t)(r->end - r->p);
}

static int rd_be(rd_t *r, int n, uint64_t *out)
{
    if (rd_left(r) < (size_t)n)
        return -1;
    *out = be_get(r->p, (size_t)n);
    r->p += n;
    return 0;
}

/* Unsigned varint of at most `bits` bits; longer or larger is malformed. */
static int rd_uvarint(rd_t *r, int bits, uint64_t *out)
{
    uint64_t v = 0;
    for (int shift = 0; shift < bits + 7; shift += 7) {
        if (r->p == r->end)
            return -1;
        uint8_t b = *r->p++;
        if (shift >= 63 && (b & 0x7f) > 1)
            return -1;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return bits < 64 && (v >> bits) ? -1 : (*out = v, 0);
    }
    return -1;
}

/* A length or count: int16/int32 (-1 null) or, compact, uvarint N+1 (0 null).
 * Returns -1 malformed, 0 null, 1 with *n set. */
static int rd_len(rd_t *r, int compact, int wide, uint64_t *n)
{
    uint64_t v;
    if (compact) {
        if (rd_uvarint(r, 32, &v) < 0)
            return -1;
        *n = v - 1;
        return v ? 1 : 0;
    }
    if (rd_be(r, wide ? 4 : 2, &v) < 0)
        return -1;
    int64_t s = wide ? (int64_t)(int32_t)(uint32_t)v : (int64_t)(int16_t)(uint16_t)v;
    if (s == -1)
        return 0;
    *n = (uint64_t)s;
    return s < 0 ? -1 : 1;
}

static int dec_value(rd_t *r, const kafka_field_t *f, int16_t v, int flex, kafka_value_t *out);
static int dec_struct(rd_t *r, const kafka_struct_t *s, int16_t v, int flex, kafka_value_t *out);

static int dec_fixed(rd_t *r, const kafka_field_t *f, kafka_value_t *out)
{
    static const int width[] = {[KT_BOOL] = 1, [KT_INT8] = 1, [KT_INT16] = 2, [KT_UINT16] = 2,
                                [KT_INT32] = 4, [KT_INT64] = 8, [KT_FLOAT64] = 8};
    uint64_t u;
    if (rd_be(r, width[f->type], &u) < 0)
        return -1;
    switch (f->type) {
    case KT_BOOL: out->u.i = u != 0; break;
    case KT_INT8: out->u.i = (int8_t)(uint8_t)u; break;
    case KT_INT16: out->u.i = (int16_t)(uint16_t)u; break;
    case KT_UINT16: out->u.i = (int64_t)u; break;
    case KT_INT32: out->u.i = (int32_t)(uint32_t)u; break;
    case KT_INT64: out->u.i = (int64_t)u; break;
    default: memcpy(&out->u.f, &u, sizeof(u)); break;
    }
    return 0;
}

static int dec_varint(rd_t *r, const kafka_field_t *f, kafka_value_t *out)
{
    uint64_t u;
    if (rd_uvarint(r, f->type == KT_VARINT ? 32 : 64, &u) < 0)
        return -1;
    out->u.i = (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
    return 0;
}

/* Strings are copied, NUL-terminated, so callers can use them as C strings;
 * bytes and records are left in the frame. */
static int dec_blob(rd_t *r, const kafka_field_t *f, int16_t v, int compact, kafka_value_t *out)
{
    uint64_t n;
    int rc = rd_len(r, compact, f->type != KT_STRING, &n);
    if (rc < 0 || (rc == 0 && !null_ok(f, v)))
        return -1;
    if (rc == 0) {
        out->is_null = 1;
        out->u.b = NULL;
        return 0;
    }
    if (n > rd_left(r))
        return -1;
    out->n = (uint32_t)n;
    if (f->type != KT_STRING) {
        out->u.b = r->p;
    } else if (n == 0) {
        out->u.s = "";
    } else {
        char *s = kafka_arena_alloc(r->a, (size_t)n + 1);
        if (!s)
            return -1;
        memcpy(s, r->p, (size_t)n);
        out->u.s = s;
    }
    r->p += n;
    return 0;
}

static int dec_array(rd_t *r, const kafka_field_t *f, int16_t v, int flex, kafka_value_t *out)
{
    uint64_t n;
    int rc = rd_len(r, flex, 1, &n);
    out->schema = f->sub;
    if (rc < 0 || (rc == 0 && !null_ok(f, v)))
        return -1;
    if (rc == 0) {
        out->is_null = 1;
        return 0;
    }
    /* The count must be backed by bytes before we allocate for it. */
    kafka_field_t e = elem_field(f);
    size_t each = min_size(&e, v, flex);
    if (n > rd_left(r) / (each ? each : 1))
        return -1;
    out->n = (uint32_t)n;
    out->u.items = kafka_arena_alloc(r->a, sizeof(kafka_value_t) * (size_t)n);
    if (!out->u.items)
        return -1;
    for (uint32_t i = 0; i < out->n; i++) {
        out->u.items[i].type = e.type;
        if (dec_value(r, &e, v, flex, &out->u.items[i]) < 0)
            return -1;
    }
    return 0;
}

static int dec_value(rd_t *r, const kafka_field_t *f, int16_t v, int flex, kafka_value_t *out)
{
    /* out may hold the field's default (is_null set, a default struct). */
    *out = (kafka_value_t){.type = f->type};
    switch (f->type) {
    case KT_VARINT: case KT_VARLONG:
        return dec_varint(r, f, out);
    case KT_UUID:
        if (rd_left(r) < 16)
            return -1;
        memcpy(out->u.uuid, r->p, 16);
        r->p += 16;
        return 0;
    case KT_STRING: case KT_BYTES: case KT_RECORDS:
        return dec_blob(r, f, v, flex && !f->noflex, out);
    case KT_ARRAY:
        return dec_array(r, f, v, flex, out);
    case KT_STRUCT:
        return dec_struct(r, f->sub, v, flex, out);
    default:
        return dec_fixed(r, f, out);
    }
}

/* The tagged-field section of a flexible struct.  Tags we do not know (or
 * that do not exist in this version) are skipped, as Kafka does. */
static int dec_tagged(rd_t *r, const kafka_struct_t *s, int16_t v, kafka_value_t *out)
{
    uint64_t count, tag, size;
    if (rd_uvarint(r, 32, &count) < 0)
        return -1;
    for (uint64_t k = 0; k < count; k++) {
        if (rd_uvarint(r, 32, &tag) < 0 || rd_uvarint(r, 32, &size) < 0 || size > rd_left(r))
            return -1;
        rd_t sub = {r->p, r->p + size, r->a};
        for (int i = 0; i < s->nfields; i++) {
            const kafka_field_t *f = &s->fields[i];
            if (!f->tagged || f->tag != (int16_t)tag || tag > 0x7fff || !in_version(f, v))
                continue;
            if (dec_value(&sub, f, v, 1, &out->u.items[i]) < 0 || sub.p != sub.end)
                return -1;
        }
        r->p += size;
    }
    return 0;
}

static int dec_struct(rd_t *r, const kafka_struct_t *s, int16_t v, int flex, kafka_value_t *out)
{
    if (init_struct(r->a, s, out) < 0)
        return -1;
    for (int i = 0; i < s->nfields; i++) {
        const kafka_field_t *f = &s->fields[i];
        if (!in_version(f, v) || (flex && f->tagged))
            continue;
        if (dec_value(r, f, v, flex, &out->u.items[i]) < 0)
            return -1;
    }
    return flex ? dec_tagged(r, s, v, out) : 0;
}

int kafka_decode(const uint8_t *p, size_t n, const kafka_struct_t *s, int16_t version, int flexible,
                 kafka_arena_t *a, kafka_value_t **out)
{
    rd_t r = {p, p + n, a};
    kafka_value_t *v = kafka_arena_alloc(a, sizeof(*v));
    if (!v || dec_struct(&r, s, version, flexible, v) < 0 || r.p != r.end)
        return KAFKA_EMALFORMED;
    *out = v;
    return KAFKA_OK;
}

/* ---- encoding ---- */

static void put_be(buf_t *b, uint64_t v, int n)
{
    uint8_t tmp[8];
    be_put(tmp, v, (size_t)n);
    buf_append(b, tmp, (size_t)n);
}

static void put_uvarint(buf_t *b, uint64_t v)
{
    uint8_t tmp[10];
    int n = 0;
    for (; v >= 0x80; v >>= 7)
        tmp[n++] = (uint8_t)(v | 0x80);
    tmp[n++] = (uint8_t)v;
    buf_append(b, tmp, (size_t)n);
}

/* Length prefix; len < 0 is null. */
static void put_len(buf_t *b, int compact, int wide, int64_t len)
{
    if (compact)
        put_uvarint(b, (uint64_t)(len + 1));
    else
        put_be(b, (uint64_t)len, wide ? 4 : 2);
}

static int enc_value(buf_t *b, const kafka_field_t *f, int16_t v, int flex, const kafka_value_t *val);
static int enc_struct(buf_t *b, const kafka_struct_t *s, int16_t v, int flex, const kafka_value_t *val);

static int enc_fixed(buf_t *b, const kafka_field_t *f, const kafka_value_t *val)
{
    uint64_t u = (uint64_t)val->u.i;
    switch (f->type) {
    case KT_BOOL: put_be(b, val->u.i != 0, 1); return 0;
    case KT_INT8: put_be(b, u, 1); return 0;
    case KT_INT16: case KT_UINT16: put_be(b, u, 2); return 0;
    case KT_INT32: put_be(b, u, 4); return 0;
    case KT_INT64: put_be(b, u, 8); return 0;
    case KT_FLOAT64: memcpy(&u, &val->u.f, sizeof(u)); put_be(b, u, 8); return 0;
    case KT_VARINT: put_uvarint(b, (uint32_t)(((uint32_t)val->u.i << 1) ^ (uint32_t)((int32_t)val->u.i >> 31))); return 0;
    case KT_VARLONG: put_uvarint(b, (u << 1) ^ (uint64_t)(val->u.i >> 63)); return 0;
    case KT_UUID: buf_append(b, val->u.uuid, 16); return 0;
    }
    return KAFKA_EINVAL;
}

static int enc_blob(buf_t *b, const kafka_field_t *f, int16_t v, int flex, const kafka_value_t *val)
{
    int compact = flex && !f->noflex, wide = f->type != KT_STRING;
    if (val->is_null) {
        if (!null_ok(f, v))
            return KAFKA_EINVAL;
        put_len(b, compact, wide, -1);
        return 0;
    }
    if (!compact && !wide && val->n > 0x7fff)
        return KAFKA_EINVAL;
    if (val->n > 0x7ffffffe)
        return KAFKA_EINVAL;
    put_len(b, compact, wide, val->n);
    if (val->external) {
        if (f->type != KT_RECORDS || !val->u.ext || val->u.ext->len != val->n)
            return KAFKA_EINVAL;
        val->u.ext->out_offset = buf_unread(b);
        val->u.ext->encoded = 1;
        return 0;
    }
    buf_append(b, f->type == KT_STRING ? (const void *)val->u.s : (const void *)val->u.b, val->n);
    return 0;
}

static int enc_array(buf_t *b, const kafka_field_t *f, int16_t v, int flex, const kafka_value_t *val)
{
    if (val->is_null) {
        if (!null_ok(f, v))
            return KAFKA_EINVAL;
        put_len(b, flex, 1, -1);
        return 0;
    }
    if (val->n > 0x7ffffffe)
        return KAFKA_EINVAL;
    put_len(b, flex, 1, val->n);
    kafka_field_t e = elem_field(f);
    for (uint32_t i = 0; i < val->n; i++) {
        int rc = enc_value(b, &e, v, flex, &val->u.items[i]);
        if (rc < 0)
            return rc;
    }
    return 0;
}

static int enc_value(buf_t *b, const kafka_field_t *f, int16_t v, int flex, const kafka_value_t *val)
{
    if (val->type != f->type)
        return KAFKA_EINVAL;
    switch (f->type) {
    case KT_STRING: case KT_BYTES: case KT_RECORDS:
        return enc_blob(b, f, v, flex, val);
    case KT_ARRAY:
        return enc_array(b, f, v, flex, val);
    case KT_STRUCT:
        return enc_struct(b, f->sub, v, flex, val);
    default:
        return enc_fixed(b, f, val);
    }
}

/* Tagged fields are written only when they differ from their default, as in
 * Kafka, so an all-default value costs one byte. */
static int is_default(const kafka_field_t *f, const kafka_value_t *val)
{
    switch (f->type) {
    case KT_STRING: case KT_BYTES: case KT_RECORDS: case KT_ARRAY:
        return f->defnull ? val->is_null : (!val->is_null && val->n == 0);
    case KT_FLOAT64:
        return val->u.f == (double)f->def;
    case KT_UUID:
        for (int i = 0; i < 16; i++)
            if (val->u.uuid[i])
                return 0;
        return 1;
    case KT_STRUCT:
        for (int i = 0; i < f->sub->nfields; i++)
            if (!is_default(&f->sub->fields[i], &val->u.items[i]))
                return 0;
        return 1;
    default:
        return val->u.i == f->def;
    }
}

/* Tables list tagged fields in ascending tag order, which is the wire order. */
static int enc_tagged(buf_t *b, const kafka_struct_t *s, int16_t v, const kafka_value_t *val)
{
    uint64_t count = 0;
    for (int i = 0; i < s->nfields; i++)
        if (s->fields[i].tagged && in_version(&s->fields[i], v) && !is_default(&s->fields[i], &val->u.items[i]))
            count++;
    put_uvarint(b, count);
    if (!count)
        return 0;
    buf_t tmp;
    buf_init(&tmp);
    int rc = 0;
    for (int i = 0; i < s->nfields && rc == 0; i++) {
        const kafka_field_t *f = &s->fields[i];
        if (!f->tagged || !in_version(f, v) || is_default(f, &val->u.items[i]))
            continue;
        buf_clear(&tmp);
        rc = enc_value(&tmp, f, v, 1, &val->u.items[i]);
        put_uvarint(b, (uint64_t)f->tag);
        put_uvarint(b, buf_unread(&tmp));
        buf_append(b, buf_read_ptr(&tmp), buf_unread(&tmp));
    }
    buf_free(&tmp);
    return rc;
}

static int enc_struct(buf_t *b, const kafka_struct_t *s, int16_t v, int flex, const kafka_value_t *val)
{
    if (val->type != KT_STRUCT || val->schema != s || val->n != (uint32_t)s->nfields)
        return KAFKA_EINVAL;
    for (int i = 0; i < s->nfields; i++) {
        const kafka_field_t *f = &s->fields[i];
        if (!in_version(f, v) || (flex && f->tagged))
            continue;
        int rc = enc_value(b, f, v, flex, &val->u.items[i]);
        if (rc < 0)
            return rc;
    }
    return flex ? enc_tagged(b, s, v, val) : 0;
}

/* On failure the output is cut back to where it was. */
int kafka_encode(buf_t *out, const kafka_struct_t *s, int16_t version, int flexible, const kafka_value_t *v)
{
    size_t start = buf_unread(out);
    int rc = enc_struct(out, s, version, flexible, v);
    if (rc < 0)
        out->len = out->pos + start;
    return rc;
}

/* ---- headers and frames ---- */

int kafka_request_header_version(const kafka_api_t *api, int16_t version)
{
    return kafka_api_flexible(api, version) ? 2 : 1;
}

int kafka_response_header_version(const kafka_api_t *api, int16_t version)
{
    if (api->key == KAFKA_API_API_VERSIONS)
        return 0;
    return kafka_api_flexible(api, version) ? 1 : 0;
}

int16_t kafka_api_versions_response_version(int16_t requested)
{
    const kafka_api_t *api = kafka_api_find(KAFKA_API_API_VERSIONS);
    return kafka_api_supports(api, requested) ? requested : 0;
}

const kafka_api_t *kafka_api_find(int16_t key)
{
    for (int i = 0; i < kafka_napis; i++)
        if (kafka_apis[i].key == key)
            return &kafka_apis[i];
    return NULL;
}

int kafka_request_decode(const uint8_t *p, size_t n, kafka_arena_t *a, kafka_request_t *out)
{
    memset(out, 0, sizeof(*out));
    rd_t r = {p, p + n, a};
    uint64_t key, ver, corr;
    if (rd_be(&r, 2, &key) < 0 || rd_be(&r, 2, &ver) < 0 || rd_be(&r, 4, &corr) < 0)
        return KAFKA_EMALFORMED;
    out->api_key = (int16_t)(uint16_t)key;
    out->api_version = (int16_t)(uint16_t)ver;
    out->correlation_id = (int32_t)(uint32_t)corr;
    out->api = kafka_api_find(out->api_key);
    /* An unknown key's header is read as v1: key, version, id, client id. */
    int hv = out->api ? kafka_request_header_version(out->api, out->api_version) : 1;
    kafka_value_t hdr;
    r.p = p;
    if (dec_struct(&r, &kafka_struct_RequestHeader, (int16_t)hv, hv >= 2, &hdr) < 0)
        return KAFKA_EMALFORMED;
    out->client_id = KV_STR(&hdr, RequestHeader, ClientId);
    if (!out->api || !kafka_api_supports(out->api, out->api_version))
        return KAFKA_EUNSUPPORTED;
    kafka_value_t *body = kafka_arena_alloc(a, sizeof(*body));
    int flex = kafka_api_flexible(out->api, out->api_version);
    /* Bytes left after a complete body are ignored, as Kafka ignores them:
     * its broker parses the header, then hands the rest of the frame to the
     * body's generated reader, which reads the fields it knows (in flexible
     * versions ending with the body's tagged-field section) and stops,
     * never asking whether anything remains; the request is then handled as
     * it was read. Only that top-level tail is ignored. Inside the body
     * every length still has to be backed and a known tagged field has to
     * fill its declared size exactly (dec_tagged), where a difference would
     * shift what the following bytes mean. librdkafka 2.0.2 relies on it:
     * its ListGroups v4 ends with one tagged-field byte too many, and its
     * OffsetFetch v7 for every topic with three (a 4-byte array-count
     * placeholder of which only the first byte, null, is the field). */
    if (!body || dec_struct(&r, out->api->request, out->api_version, flex, body) < 0)
        return a->exhausted ? KAFKA_EBUDGET : KAFKA_EMALFORMED;
    out->body = body;
    return KAFKA_OK;
}

/* Bytes of external records the encoder placed in v (they belong to the
 * frame but are not in the buffer). */
static uint64_t external_bytes(const kafka_value_t *v)
{
    if (v->type == KT_RECORDS)
        return v->external && v->u.ext->encoded ? v->n : 0;
    if ((v->type != KT_STRUCT && v->type != KT_ARRAY) || v->is_null || !v->u.items)
        return 0;
    uint64_t total = 0;
    for (uint32_t i = 0; i < v->n; i++)
        total += external_bytes(&v->u.items[i]);
    return total;
}

/* Size prefix, header, body.  Offsets are kept relative to the read cursor
 * because buf_reserve may slide the unread bytes to the front. */
static int encode_frame(buf_t *out, const kafka_struct_t *hs, int hv, const kafka_value_t *hdr,
                        const kafka_api_t *api, const kafka_struct_t *bs, int16_t version, const kafka_value_t *body)
{
    size_t start = buf_unread(out);
    put_be(out, 0, 4);
    int rc = enc_struct(out, hs, (int16_t)hv, hs == &kafka_struct_RequestHeader ? hv >= 2 : hv >= 1, hdr);
    if (rc == 0)
        rc = enc_struct(out, bs, version, kafka_api_flexible(api, version), body);
    uint64_t size = buf_unread(out) - start - 4 + (rc == 0 ? external_bytes(body) : 0);
    if (rc == 0 && size > INT32_MAX)
        rc = KAFKA_EINVAL;
    if (rc < 0) {
        out->len = out->pos + start;
        return rc;
    }
    be32_put(buf_read_ptr(out) + start, (uint32_t)size);
    return 0;
}

int kafka_request_encode(buf_t *out, const kafka_api_t *api, int16_t version, int32_t correlation_id,
                         const char *client_id, const kafka_value_t *body)
{
    const kafka_struct_t *hs = &kafka_struct_RequestHeader;
    kafka_value_t items[RequestHeader_nfields] = {{0}};
    kafka_value_t hdr = {.type = KT_STRUCT, .n = RequestHeader_nfields, .u.items = items, .schema = hs};
    for (int i = 0; i < RequestHeader_nfields; i++)
        items[i].type = hs->fields[i].type;
    items[RequestHeader_RequestApiKey].u.i = api->key;
    items[RequestHeader_RequestApiVersion].u.i = version;
    items[RequestHeader_CorrelationId].u.i = correlation_id;
    items[RequestHeader_ClientId].is_null = client_id == NULL;
    items[RequestHeader_ClientId].u.s = client_id;
    items[RequestHeader_ClientId].n = client_id ? (uint32_t)strlen(client_id) : 0;
    return encode_frame(out, hs, kafka_request_header_version(api, version), &hdr, api,
                        api->request, version, body);
}

int kafka_response_encode(buf_t *out, const kafka_api_t *api, int16_t version, int32_t correlation_id,
                          const kafka_value_t *body)
{
    const kafka_struct_t *hs = &kafka_struct_ResponseHeader;
    kafka_value_t item = {.type = KT_INT32, .u.i = correlation_id};
    kafka_value_t hdr = {.type = KT_STRUCT, .n = ResponseHeader_nfields, .u.items = &item, .schema = hs};
    return encode_frame(out, hs, kafka_response_header_version(api, version), &hdr, api,
                        api->response, version, body);
}

int kafka_response_decode(const uint8_t *p, size_t n, const kafka_api_t *api, int16_t version, kafka_arena_t *a,
                          int32_t *correlation_id, kafka_value_t **body)
{
    rd_t r = {p, p + n, a};
    kafka_value_t hdr, *b = kafka_arena_alloc(a, sizeof(*b));
    int hv = kafka_response_header_version(api, version);
    if (!b || dec_struct(&r, &kafka_struct_ResponseHeader, (int16_t)hv, hv >= 1, &hdr) < 0)
        return KAFKA_EMALFORMED;
    if (dec_struct(&r, api->response, version, kafka_api_flexible(api, version), b) < 0 || r.p != r.end)
        return KAFKA_EMALFORMED;
    *correlation_id = (int32_t)KV_INT(&hdr, ResponseHeader, CorrelationId);
    *body = b;
    return KAFKA_OK;
}
