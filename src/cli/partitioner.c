/* partitioner.c -- see partitioner.h. */
#include "partitioner.h"

#define MURMUR2_SEED 0x9747b28cu
#define MURMUR2_M 0x5bd1e995u
#define MURMUR2_R 24

uint32_t partitioner_murmur2(const void *data, size_t len)
{
    const uint8_t *p = data;
    /* Java's int length: keys are far below 2 GiB (bounded by the line). */
    uint32_t h = MURMUR2_SEED ^ (uint32_t)len;
    size_t words = len / 4;
    for (size_t i = 0; i < words; i++, p += 4) {
        uint32_t k = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
        k *= MURMUR2_M;
        k ^= k >> MURMUR2_R;
        k *= MURMUR2_M;
        h *= MURMUR2_M;
        h ^= k;
    }
    switch (len % 4) {   /* the last 1 to 3 bytes, as Kafka's switch falls through */
    case 3: h ^= (uint32_t)p[2] << 16; /* fall through */
    case 2: h ^= (uint32_t)p[1] << 8;  /* fall through */
    case 1:
        h ^= p[0];
        h *= MURMUR2_M;
        break;
    default: break;
    }
    h ^= h >> 13;
    h *= MURMUR2_M;
    h ^= h >> 15;
    return h;
}

int32_t partitioner_keyed(const void *key, size_t len, int32_t num_partitions)
{
    uint32_t positive = partitioner_murmur2(key, len) & 0x7fffffffu;   /* Utils.toPositive */
    return (int32_t)(positive % (uint32_t)num_partitions);
}

void partitioner_sticky_init(partitioner_sticky_t *s, uint64_t seed)
{
    *s = (partitioner_sticky_t){.partition = -1, .rng = seed ? seed : 0x2545f4914f6cdd1dull};
}

static uint64_t next_random(partitioner_sticky_t *s)
{
    s->rng ^= s->rng << 13;
    s->rng ^= s->rng >> 7;
    s->rng ^= s->rng << 17;
    return s->rng;
}

int32_t partitioner_sticky(partitioner_sticky_t *s, int32_t num_partitions, size_t record_bytes)
{
    if (s->partition < 0 || s->partition >= num_partitions || s->bytes >= PARTITIONER_STICKY_BYTES) {
        s->partition = (int32_t)(next_random(s) % (uint64_t)num_partitions);
        s->bytes = 0;
    }
    s->bytes += record_bytes;
    return s->partition;
}
