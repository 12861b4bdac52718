/* endian.h -- big-endian integers in byte buffers.
 *
 * Every format kipper speaks or stores (Kafka's wire and log, ZooKeeper's jute,
 * quorum and election packets, snapshots and transaction logs) is big-endian,
 * and none promises alignment, so integers are always assembled byte by byte
 * here (compilers turn these into one load or store and a byte swap).
 * Unsigned only: a caller wanting int32_t converts the result, which is what
 * Java's readInt and Kafka's getInt do with the same bits. */
#ifndef KIPPER_BASE_ENDIAN_H
#define KIPPER_BASE_ENDIAN_H

#include <stddef.h>
#include <stdint.h>

static inline uint16_t be16_get(const uint8_t *p)
{
    return (uint16_t)((uint16_t)p[0] << 8 | p[1]);
}

static inline uint32_t be32_get(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline uint64_t be64_get(const uint8_t *p)
{
    return (uint64_t)be32_get(p) << 32 | be32_get(p + 4);
}

static inline void be16_put(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static inline void be32_put(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static inline void be64_put(uint8_t *p, uint64_t v)
{
    be32_put(p, (uint32_t)(v >> 32));
    be32_put(p + 4, (uint32_t)v);
}

/* Width chosen at run time (1, 2, 4 or 8 bytes), for table-driven codecs. */
static inline uint64_t be_get(const uint8_t *p, size_t width)
{
    switch (width) {
    case 1: return p[0];
    case 2: return be16_get(p);
    case 4: return be32_get(p);
    default: return be64_get(p);
    }
}

static inline void be_put(uint8_t *p, uint64_t v, size_t width)
{
    switch (width) {
    case 1: p[0] = (uint8_t)v; break;
    case 2: be16_put(p, (uint16_t)v); break;
    case 4: be32_put(p, (uint32_t)v); break;
    default: be64_put(p, v); break;
    }
}

#endif
