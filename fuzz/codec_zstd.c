/* codec_zstd.c -- the records of zstd-compressed v2 batches (codec.h). */
#define FUZZ_CODEC COMPRESSION_ZSTD
#include "codec.h"
