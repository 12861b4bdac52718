/* test_producer_state.c -- placeholder until the suite lands. */
#include "suites.h"
#include "unit.h"

void suite_producer_state(void)
{
}
