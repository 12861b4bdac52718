/* crc32c.h -- CRC-32C (Castagnoli), as Kafka record batches use it.
 * Backed by ISA-L's crc32_iscsi, which picks SSE4.2/PCLMUL code at run time. */
#ifndef KIPPER_BASE_CRC32C_H
#define KIPPER_BASE_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* Extend crc (0 to start) over len bytes. crc32c(0, "123456789", 9) == 0xE3069283. */
uint32_t crc32c(uint32_t crc, const void *data, size_t len);

#endif
