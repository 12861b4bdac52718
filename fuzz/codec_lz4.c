/* codec_lz4.c -- the records of lz4-compressed v2 batches (codec.h). */
#define FUZZ_CODEC COMPRESSION_LZ4
#include "codec.h"
