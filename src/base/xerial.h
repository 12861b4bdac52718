/* xerial.h -- the framing of snappy-java's SnappyOutputStream ("xerial"),
 * in which Kafka's Java client writes snappy batches and ZooKeeper writes
 * snappy snapshots (zookeeper.snapshot.compression.method=snappy): a
 * 16-byte header (magic "\x82SNAPPY\0", int32 version, int32 compatible
 * version), then blocks of [int32 length][raw snappy]. Another stream may
 * follow (its header where a length would be), as snappy-java's
 * SnappyInputStream reads them. Only the framing is here; the caller
 * decodes each block with libsnappy, under its own bound. */
#ifndef KIPPER_BASE_XERIAL_H
#define KIPPER_BASE_XERIAL_H

#include <stddef.h>
#include <stdint.h>

#define XERIAL_HEADER_LEN 16

/* 1 when p[0..n) begins with a xerial header's magic, else 0. */
int xerial_is_stream(const uint8_t *p, size_t n);

/* The next block of the stream p[0..n), from *pos (0 at the start, where
 * the header is checked): 1 with block[0..*len) and *pos past it, 0 at the
 * end of the input, -1 with a reason in why ("xerial block of 100000
 * bytes, 12 left"). */
int xerial_next_block(const uint8_t *p, size_t n, size_t *pos, const uint8_t **block, size_t *len, char *why,
                      size_t whylen);

#endif
