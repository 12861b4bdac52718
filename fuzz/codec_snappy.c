/* codec_snappy.c -- the records of snappy-compressed v2 batches (codec.h). */
#define FUZZ_CODEC COMPRESSION_SNAPPY
#include "codec.h"
