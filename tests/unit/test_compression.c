/* test_compression.c -- placeholder until the suite lands. */
#include "suites.h"
#include "unit.h"

void suite_compression(void)
{
}
