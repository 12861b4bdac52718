/* partitioner.h -- where Kafka 3.x's producer puts a record that names no
 * partition (its BuiltInPartitioner, the default since KIP-794):
 *
 * - a record with a key (an empty key is a key; only a null one is not):
 *   toPositive(murmur2(key)) % numPartitions over all of the topic's
 *   partitions, murmur2 being Kafka's Utils.murmur2 (MurmurHash2 with seed
 *   0x9747b28c, the key's bytes read as little-endian 32-bit words) and
 *   toPositive clearing the sign bit. Any Kafka client using Kafka's
 *   partitioner (Java's default, librdkafka's murmur2_random) agrees.
 * - a record without one: "sticky" -- every keyless record goes to the same
 *   partition until batch.size bytes (16384, Kafka's default) of them have
 *   gone there, then another partition is drawn at random. Kafka weighs the
 *   draw by each partition's queue (adaptive partitioning); a console tool
 *   with one batch in flight has no queues to weigh, so the draw is uniform.
 *
 * Pure: no I/O, no global state; the caller owns the sticky state. */
#ifndef KIPPER_CLI_PARTITIONER_H
#define KIPPER_CLI_PARTITIONER_H

#include <stddef.h>
#include <stdint.h>

#define PARTITIONER_STICKY_BYTES 16384   /* Kafka's batch.size default */

/* Kafka's Utils.murmur2 of data[0..len), as the same 32 bits. */
uint32_t partitioner_murmur2(const void *data, size_t len);

/* The partition (0..num_partitions) of a record with this key. */
int32_t partitioner_keyed(const void *key, size_t len, int32_t num_partitions);

typedef struct {
    int32_t partition;   /* -1: none chosen yet */
    size_t bytes;        /* sent to it since it was chosen */
    uint64_t rng;        /* xorshift64 state, never 0 */
} partitioner_sticky_t;

/* A sticky state whose random draws start from seed. */
void partitioner_sticky_init(partitioner_sticky_t *s, uint64_t seed);

/* The partition of a keyless record of record_bytes (key, value and
 * headers) among num_partitions (>= 1); it is counted against the sticky
 * partition. */
int32_t partitioner_sticky(partitioner_sticky_t *s, int32_t num_partitions, size_t record_bytes);

#endif
