/* snapshot_codec.h -- ZooKeeper's compressed snapshot files, read whole
 * into memory. ZooKeeper 3.6+ writes its snapshots through the stream that
 * zookeeper.snapshot.compression.method names (SnapStream): "gz" (a gzip
 * stream, file snapshot.<zxid>.gz), "snappy" (snappy-java's xerial framing,
 * snapshot.<zxid>.snappy), or none (snapshot.<zxid>); it reads all three
 * whatever the setting, and so does kipper, so that a data folder of such
 * a ZooKeeper can be taken over. What is inside, once decompressed, is
 * the plain layout snapshot.h reads (its Adler-32 included). kipper itself
 * writes plain snapshots only. */
#ifndef KIPPER_KEEPER_SNAPSHOT_CODEC_H
#define KIPPER_KEEPER_SNAPSHOT_CODEC_H

#include <stddef.h>
#include <stdint.h>

typedef enum { SNAPSHOT_PLAIN = 0, SNAPSHOT_GZIP, SNAPSHOT_SNAPPY } snapshot_codec_t;

/* Decompressed snapshots larger than this are refused: a bound on what a
 * damaged or hostile file can make the keeper allocate (ZooKeeper's
 * jute.maxbuffer bounds each node, not the whole). */
#define SNAPSHOT_MAX_DECOMPRESSED ((size_t)1 << 36)

/* The codec a file name's suffix after the zxid says: "" plain, ".gz",
 * ".snappy"; -1 for anything else. */
int snapshot_codec_of_suffix(const char *suffix);
/* The suffix of codec c ("", ".gz", ".snappy"). */
const char *snapshot_codec_suffix(snapshot_codec_t c);

/* in[0..len), a whole file in codec c (not SNAPSHOT_PLAIN), decompressed
 * into a new buffer of at most max bytes: 0 with *out (malloc'd) and
 * *out_len, or -1 with a reason in err and nothing allocated. */
int snapshot_decompress(snapshot_codec_t c, const uint8_t *in, size_t len, size_t max, uint8_t **out,
                        size_t *out_len, char *err, size_t errlen);

#endif
