/* codec_gzip.c -- the records of gzip-compressed v2 batches (codec.h). */
#define FUZZ_CODEC COMPRESSION_GZIP
#include "codec.h"
