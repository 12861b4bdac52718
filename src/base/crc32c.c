/* crc32c.c -- see crc32c.h. ISA-L works on the un-inverted register, so the
 * standard pre- and post-inversion happen here. */
#include "crc32c.h"

#include <isa-l/crc.h>
#include <limits.h>

uint32_t crc32c(uint32_t crc, const void *data, size_t len)
{
    const unsigned char *p = data;
    uint32_t reg = ~crc;
    while (len > 0) {   /* ISA-L takes an int length */
        size_t chunk = len > (size_t)INT_MAX ? (size_t)INT_MAX : len;
        reg = crc32_iscsi((unsigned char *)p, (int)chunk, reg);
        p += chunk;
        len -= chunk;
    }
    return ~reg;
}
