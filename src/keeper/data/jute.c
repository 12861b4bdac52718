/* jute.c -- see jute.h. */
#include "jute.h"

#include "base/endian.h"

#include <stdlib.h>
#include <string.h>

void jute_in_init(jute_in_t *in, const void *data, size_t len)
{
    in->data = data;
    in->len = len;
    in->pos = 0;
    in->error = 0;
    in->nul_in_string = 0;
}

static const uint8_t *take(jute_in_t *in, size_t n)
{
    if (in->error || in->len - in->pos < n) {
        in->error = 1;
        return NULL;
    }
    const uint8_t *p = in->data + in->pos;
    in->pos += n;
    return p;
}

int32_t jute_get_int(jute_in_t *in)
{
    const uint8_t *p = take(in, 4);
    if (!p)
        return 0;
    return (int32_t)be32_get(p);
}

int64_t jute_get_long(jute_in_t *in)
{
    const uint8_t *p = take(in, 8);
    if (!p)
        return 0;
    return (int64_t)be64_get(p);
}

int jute_get_bool(jute_in_t *in)
{
    const uint8_t *p = take(in, 1);
    return p ? p[0] != 0 : 0;
}

int jute_get_buffer(jute_in_t *in, const uint8_t **data, int32_t *len)
{
    int32_t n = jute_get_int(in);
    *data = NULL;
    *len = -1;
    if (in->error)
        return -1;
    if (n == -1)   /* null */
        return 0;
    if (n < 0) {   /* Java's checkLength refuses other negative lengths */
        in->error = 1;
        return -1;
    }
    const uint8_t *p = take(in, (size_t)n);
    if (!p)
        return -1;
    *data = p;
    *len = n;
    return 0;
}

char *jute_get_string(jute_in_t *in)
{
    const uint8_t *p;
    int32_t n;
    if (jute_get_buffer(in, &p, &n) < 0 || n < 0)
        return NULL;
    if (memchr(p, 0, (size_t)n)) {
        in->nul_in_string = 1;
        return NULL;
    }
    char *s = malloc((size_t)n + 1);
    if (!s) {
        in->error = 1;
        return NULL;
    }
    memcpy(s, p, (size_t)n);
    s[n] = 0;
    return s;
}

int32_t jute_get_vector_count(jute_in_t *in, size_t min_element_size)
{
    int32_t n = jute_get_int(in);
    if (in->error)
        return -1;
    if (n < 0)
        return -1;
    if (min_element_size && (size_t)n > (in->len - in->pos) / min_element_size) {
        in->error = 1;
        return -1;
    }
    return n;
}

void jute_get_stat(jute_in_t *in, zstat_t *st)
{
    st->czxid = jute_get_long(in);
    st->mzxid = jute_get_long(in);
    st->ctime = jute_get_long(in);
    st->mtime = jute_get_long(in);
    st->version = jute_get_int(in);
    st->cversion = jute_get_int(in);
    st->aversion = jute_get_int(in);
    st->ephemeral_owner = jute_get_long(in);
    st->data_length = jute_get_int(in);
    st->num_children = jute_get_int(in);
    st->pzxid = jute_get_long(in);
}

void jute_get_stat_persisted(jute_in_t *in, zstat_t *st)
{
    memset(st, 0, sizeof(*st));
    st->czxid = jute_get_long(in);
    st->mzxid = jute_get_long(in);
    st->ctime = jute_get_long(in);
    st->mtime = jute_get_long(in);
    st->version = jute_get_int(in);
    st->cversion = jute_get_int(in);
    st->aversion = jute_get_int(in);
    st->ephemeral_owner = jute_get_long(in);
    st->pzxid = jute_get_long(in);
}

int jute_get_acl_list(jute_in_t *in, acl_list_t *out)
{
    out->items = NULL;
    out->count = 0;
    int32_t n = jute_get_vector_count(in, 12);   /* perms + two string lengths */
    if (in->error)
        return -1;
    if (n <= 0)
        return 0;
    out->items = calloc((size_t)n, sizeof(acl_t));
    if (!out->items) {
        in->error = 1;
        return -1;
    }
    for (int32_t i = 0; i < n; i++) {
        acl_t *a = &out->items[i];
        a->perms = jute_get_int(in);
        a->scheme = jute_get_string(in);
        a->id = jute_get_string(in);
        out->count = i + 1;
        /* Java clients send null for ids they leave unset (the "auth"
         * scheme's id): read null as "", which ACL validation then judges. */
        if (!in->error && !a->scheme)
            a->scheme = strdup("");
        if (!in->error && !a->id)
            a->id = strdup("");
        if (in->error || !a->scheme || !a->id) {
            in->error = 1;
            acl_list_free(out);
            return -1;
        }
    }
    return 0;
}

int jute_put_int(buf_t *b, int32_t v)
{
    uint8_t p[4];
    be32_put(p, (uint32_t)v);
    return buf_append(b, p, 4);
}

int jute_put_long(buf_t *b, int64_t v)
{
    uint8_t p[8];
    be64_put(p, (uint64_t)v);
    return buf_append(b, p, 8);
}

int jute_put_bool(buf_t *b, int v)
{
    uint8_t c = v ? 1 : 0;
    return buf_append(b, &c, 1);
}

int jute_put_buffer(buf_t *b, const void *data, int32_t len)
{
    if (!data && len > 0)
        len = -1;
    if (jute_put_int(b, len) < 0)
        return -1;
    return len > 0 ? buf_append(b, data, (size_t)len) : 0;
}

int jute_put_string(buf_t *b, const char *s)
{
    return jute_put_buffer(b, s, s ? (int32_t)strlen(s) : -1);
}

int jute_put_stat(buf_t *b, const zstat_t *st)
{
    int rc = 0;
    rc |= jute_put_long(b, st->czxid);
    rc |= jute_put_long(b, st->mzxid);
    rc |= jute_put_long(b, st->ctime);
    rc |= jute_put_long(b, st->mtime);
    rc |= jute_put_int(b, st->version);
    rc |= jute_put_int(b, st->cversion);
    rc |= jute_put_int(b, st->aversion);
    rc |= jute_put_long(b, st->ephemeral_owner);
    rc |= jute_put_int(b, st->data_length);
    rc |= jute_put_int(b, st->num_children);
    rc |= jute_put_long(b, st->pzxid);
    return rc;
}

int jute_put_acl_list(buf_t *b, const acl_list_t *acl)
{
    int rc = jute_put_int(b, acl->count);
    for (int32_t i = 0; i < acl->count; i++) {
        rc |= jute_put_int(b, acl->items[i].perms);
        rc |= jute_put_string(b, acl->items[i].scheme);
        rc |= jute_put_string(b, acl->items[i].id);
    }
    return rc;
}

void jute_patch_int(buf_t *b, size_t offset, int32_t v)
{
    be32_put(b->data + offset, (uint32_t)v);
}

/* ---- ACL list helpers shared by every part of the keeper ---- */

void acl_list_free(acl_list_t *list)
{
    for (int32_t i = 0; i < list->count; i++) {
        free(list->items[i].scheme);
        free(list->items[i].id);
    }
    free(list->items);
    list->items = NULL;
    list->count = 0;
}

int acl_list_copy(acl_list_t *dst, const acl_list_t *src)
{
    dst->items = NULL;
    dst->count = 0;
    if (src->count <= 0)
        return 0;
    dst->items = calloc((size_t)src->count, sizeof(acl_t));
    if (!dst->items)
        return -1;
    for (int32_t i = 0; i < src->count; i++) {
        dst->items[i].perms = src->items[i].perms;
        dst->items[i].scheme = strdup(src->items[i].scheme);
        dst->items[i].id = strdup(src->items[i].id);
        dst->count = i + 1;
        if (!dst->items[i].scheme || !dst->items[i].id) {
            acl_list_free(dst);
            return -1;
        }
    }
    return 0;
}

int acl_list_equal(const acl_list_t *a, const acl_list_t *b)
{
    if (a->count != b->count)
        return 0;
    for (int32_t i = 0; i < a->count; i++)
        if (a->items[i].perms != b->items[i].perms || strcmp(a->items[i].scheme, b->items[i].scheme) != 0 ||
            strcmp(a->items[i].id, b->items[i].id) != 0)
            return 0;
    return 1;
}
