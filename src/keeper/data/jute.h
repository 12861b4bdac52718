/* jute.h -- ZooKeeper's jute binary encoding: big-endian int/long, one-byte
 * boolean, int-length-prefixed buffers and strings (length -1 = null),
 * int-count-prefixed vectors.
 *
 * Reading never trusts a length: every read is checked against the bytes
 * left, and a failed read latches in->error so a whole record can be decoded
 * and checked once at the end. */
#ifndef KIPPER_KEEPER_JUTE_H
#define KIPPER_KEEPER_JUTE_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "proto.h"

typedef struct {
    const uint8_t *data;
    size_t len;
    size_t pos;
    int error;   /* latched: once set, every get returns 0/NULL */
    int nul_in_string;   /* a string held a NUL byte: it read as NULL, not as an error */
} jute_in_t;

void jute_in_init(jute_in_t *in, const void *data, size_t len);
static inline size_t jute_remaining(const jute_in_t *in) { return in->error ? 0 : in->len - in->pos; }

int32_t jute_get_int(jute_in_t *in);
int64_t jute_get_long(jute_in_t *in);
int jute_get_bool(jute_in_t *in);
/* A buffer as a view into the input: *len = -1 for null. Returns 0 or -1. */
int jute_get_buffer(jute_in_t *in, const uint8_t **data, int32_t *len);
/* A string copied into a new NUL-terminated malloc'd string (NULL for a null
 * string). A string with an embedded NUL byte cannot be a C string: it reads
 * as NULL and sets nul_in_string, so callers can answer as ZooKeeper does
 * for such a path (BADARGUMENTS or NONODE) rather than fail the record. */
char *jute_get_string(jute_in_t *in);
/* Vector count, checked against the bytes left given each element's minimum
 * encoded size (so a hostile count cannot make us allocate). -1 = null vector. */
int32_t jute_get_vector_count(jute_in_t *in, size_t min_element_size);
/* Decode Stat / a vector of ACL into out (owned strings). */
void jute_get_stat(jute_in_t *in, zstat_t *out);
int jute_get_acl_list(jute_in_t *in, acl_list_t *out);   /* 0 or -1 */
/* StatPersisted, the stat as snapshots store it: no dataLength or
 * numChildren (those two are left 0 in out). */
void jute_get_stat_persisted(jute_in_t *in, zstat_t *out);

/* Writers append to a buf_t; they return 0 or -1 when out of memory. */
int jute_put_int(buf_t *b, int32_t v);
int jute_put_long(buf_t *b, int64_t v);
int jute_put_bool(buf_t *b, int v);
int jute_put_buffer(buf_t *b, const void *data, int32_t len);   /* len -1 = null */
int jute_put_string(buf_t *b, const char *s);                   /* NULL = null */
int jute_put_stat(buf_t *b, const zstat_t *st);
int jute_put_acl_list(buf_t *b, const acl_list_t *acl);
/* Overwrite a 4-byte big-endian int at an absolute offset (length prefixes). */
void jute_patch_int(buf_t *b, size_t offset, int32_t v);

#endif
