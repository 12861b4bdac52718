/* test_coord_data.c -- placeholder until the suite lands. */
#include "suites.h"
#include "unit.h"

void suite_coord_data(void)
{
}
