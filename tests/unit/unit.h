/* unit.h -- a minimal unit-test harness: CHECK macros that record failures
 * and keep going, RUN() to run one test function, one suite function per
 * file (declared in suites.h, called from main.c). */
#ifndef KIPPER_TESTS_UNIT_H
#define KIPPER_TESTS_UNIT_H

#include <stdint.h>
#include <string.h>

void unit_fail(const char *file, int line, const char *what);
void unit_run(const char *name, void (*fn)(void));

#define RUN(fn) unit_run(#fn, fn)
#define CHECK(cond)                                  \
    do {                                             \
        if (!(cond))                                 \
            unit_fail(__FILE__, __LINE__, #cond);    \
    } while (0)
#define CHECK_EQ(a, b) CHECK((a) == (b))
#define CHECK_STR(a, b) CHECK((a) != NULL && (b) != NULL && strcmp((a), (b)) == 0)

#endif
