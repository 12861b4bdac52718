/* xerial.c -- see xerial.h. */
#include "xerial.h"
#include "endian.h"

#include <stdio.h>
#include <string.h>

static const uint8_t XERIAL_MAGIC[8] = {0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0};
#define XERIAL_MIN_VERSION 1

int xerial_is_stream(const uint8_t *p, size_t n)
{
    return n >= sizeof(XERIAL_MAGIC) && memcmp(p, XERIAL_MAGIC, sizeof(XERIAL_MAGIC)) == 0;
}

/* A header at p (n bytes there): the magic and a version we read. */
static int check_header(const uint8_t *p, size_t n, char *why, size_t whylen)
{
    if (n < XERIAL_HEADER_LEN || !xerial_is_stream(p, n)) {
        snprintf(why, whylen, "bad xerial stream header");
        return -1;
    }
    int32_t version = (int32_t)be32_get(p + 8);
    if (version < XERIAL_MIN_VERSION) {
        snprintf(why, whylen, "xerial version %d", (int)version);
        return -1;
    }
    return 0;
}

int xerial_next_block(const uint8_t *p, size_t n, size_t *pos, const uint8_t **block, size_t *len, char *why,
                      size_t whylen)
{
    const uint32_t concatenated = be32_get(XERIAL_MAGIC);
    if (*pos == 0) {
        if (check_header(p, n, why, whylen) < 0)
            return -1;
        *pos = XERIAL_HEADER_LEN;
    }
    for (;;) {
        size_t left = n - *pos;
        const uint8_t *at = p + *pos;
        if (left == 0)
            return 0;
        if (left < 4) {
            snprintf(why, whylen, "%zu stray bytes after the last block", left);
            return -1;
        }
        uint32_t size = be32_get(at);
        if (size == concatenated) {
            if (check_header(at, left, why, whylen) < 0)
                return -1;
            *pos += XERIAL_HEADER_LEN;
            continue;
        }
        if (size > left - 4) {
            snprintf(why, whylen, "xerial block of %u bytes, %zu left", (unsigned)size, left - 4);
            return -1;
        }
        *block = at + 4;
        *len = size;
        *pos += 4 + (size_t)size;
        return 1;
    }
}
