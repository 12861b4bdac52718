/* varint.h -- Kafka's zigzag varints and varlongs written into byte
 * buffers (ByteUtils.writeVarint/writeVarlong: the value zigzag-encoded,
 * then 7 bits a byte, low bits first, the top bit set on every byte but
 * the last). A varint of an int32 takes at most 5 bytes, a varlong 10:
 * callers size their buffers with VARLONG_MAX. Header-only and pure. */
#ifndef KIPPER_BASE_VARINT_H
#define KIPPER_BASE_VARINT_H

#include <stddef.h>
#include <stdint.h>

#define VARLONG_MAX 10

/* v as a zigzag varlong at p (at least VARLONG_MAX bytes); its length. */
static inline size_t varlong_put(uint8_t *p, int64_t v)
{
    uint64_t z = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
    size_t n = 0;
    while (z >= 0x80) {
        p[n++] = (uint8_t)(z | 0x80);
        z >>= 7;
    }
    p[n++] = (uint8_t)z;
    return n;
}

/* The length varlong_put gives v. */
static inline size_t varlong_size(int64_t v)
{
    uint64_t z = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
    size_t n = 1;
    while (z >= 0x80) {
        z >>= 7;
        n++;
    }
    return n;
}

#endif
