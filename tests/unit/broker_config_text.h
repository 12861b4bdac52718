/* broker_config_text.h -- server.properties text read as the broker reads
 * its file, for the unit tests of broker_config.c and broker_config_defs.c
 * (defined in test_broker_config.c). */
#ifndef KIPPER_TESTS_BROKER_CONFIG_TEXT_H
#define KIPPER_TESTS_BROKER_CONFIG_TEXT_H

#include <stddef.h>

#include "broker/core/broker_config.h"

/* 0, or -1 with err filled. */
int unit_broker_config_parse(const char *text, broker_config_t *bc, char *err, size_t errlen);

#endif
