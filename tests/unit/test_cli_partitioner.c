/* test_cli_partitioner.c -- src/cli/partitioner.c: murmur2 against values
 * of Kafka's Utils.murmur2 (Java's int results as their 32 bits), on keys of
 * every length modulo 4 and at every alignment; the keyed partition as
 * toPositive(murmur2) % n; the sticky choice for keyless records, held for
 * PARTITIONER_STICKY_BYTES and then drawn again. */
#include "suites.h"
#include "unit.h"

#include "cli/partitioner.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_murmur2_vectors(void)
{
    static const struct {
        const char *key;
        uint32_t hash;
    } v[] = {
        {"kafka", 0xd067cf64u},
        {"giberish123456789", 0x8f552b0cu},
        {"1234", 0x9fc97b14u},
        {"234", 0xe7c009cau},
        {"34", 0x873930dau},
        {"4", 0x5a4b5ca1u},
        {"PreAmbleWillBeRemoved,ThePrePartThatIs", 0x78424f1cu},
        {"", 0x106e08d9u},
        {"21", (uint32_t)-973932308},
        {"foobar", (uint32_t)-790332482},
        {"a-little-bit-long-string", (uint32_t)-985981536},
        {"a-little-bit-longer-string", (uint32_t)-1486304829},
        {"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", (uint32_t)-58897971},
        {"abc", 479470107u},
    };
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
        CHECK_EQ(partitioner_murmur2(v[i].key, strlen(v[i].key)), v[i].hash);
    /* The same bytes at every alignment hash the same (read byte by byte). */
    static const char text[] = "PreAmbleWillBeRemoved,ThePrePartThatIs";
    static const uint32_t shifted[] = {0x4a62b377u, 0xe0e4e09eu, 0x62b8b43fu};
    char *copy = malloc(sizeof(text) + 8);
    for (int skip = 1; copy && skip <= 3; skip++)
        for (int align = 0; align < 4; align++) {
            memcpy(copy + align, text + skip, sizeof(text) - (size_t)skip);
            CHECK_EQ(partitioner_murmur2(copy + align, strlen(text) - (size_t)skip), shifted[skip - 1]);
        }
    free(copy);
}

static void test_keyed_partition(void)
{
    /* toPositive clears the sign bit: 0xd067cf64 -> 0x5067cf64 = 1348980580 */
    CHECK_EQ(partitioner_keyed("kafka", 5, 1), 0);
    CHECK_EQ(partitioner_keyed("kafka", 5, 3), (int32_t)(1348980580u % 3));
    CHECK_EQ(partitioner_keyed("kafka", 5, 1000), 580);
    CHECK_EQ(partitioner_keyed("", 0, 7), (int32_t)(0x106e08d9u % 7));
    /* every key lands within the partitions */
    char key[16];
    for (int i = 0; i < 1000; i++) {
        int n = snprintf(key, sizeof(key), "k%d", i);
        int32_t p = partitioner_keyed(key, (size_t)n, 6);
        CHECK(p >= 0 && p < 6);
    }
}

static void test_sticky_partition(void)
{
    partitioner_sticky_t s;
    partitioner_sticky_init(&s, 42);
    int32_t first = partitioner_sticky(&s, 8, 100);
    CHECK(first >= 0 && first < 8);
    /* held until PARTITIONER_STICKY_BYTES went to it */
    size_t sent = 100;
    while (sent < PARTITIONER_STICKY_BYTES) {
        CHECK_EQ(partitioner_sticky(&s, 8, 1000), first);
        sent += 1000;
    }
    /* then drawn again; over many draws every partition is chosen */
    int seen[8] = {0}, distinct = 0;
    for (int i = 0; i < 400; i++)
        seen[partitioner_sticky(&s, 8, PARTITIONER_STICKY_BYTES)] = 1;
    for (int i = 0; i < 8; i++)
        distinct += seen[i];
    CHECK_EQ(distinct, 8);
    /* one partition: always it; fewer partitions than the one held: drawn again */
    partitioner_sticky_init(&s, 0);
    CHECK_EQ(partitioner_sticky(&s, 1, 10), 0);
    s.partition = 5;
    CHECK(partitioner_sticky(&s, 2, 10) < 2);
}

void suite_cli_partitioner(void)
{
    RUN(test_murmur2_vectors);
    RUN(test_keyed_partition);
    RUN(test_sticky_partition);
}
