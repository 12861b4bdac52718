/* main.c -- runs every unit suite and ends with "N passed, N failed". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/logging.h"
#include "suites.h"
#include "unit.h"

static int tests_passed, tests_failed, current_failures;
static const char *only;   /* run just the tests whose name contains this */

void unit_fail(const char *file, int line, const char *what)
{
    fprintf(stderr, "  FAIL %s:%d: %s\n", file, line, what);
    current_failures++;
}

void unit_run(const char *name, void (*fn)(void))
{
    if (only && !strstr(name, only))
        return;
    current_failures = 0;
    fn();
    if (current_failures) {
        tests_failed++;
        fprintf(stderr, "FAILED %s\n", name);
    } else {
        tests_passed++;
        printf("ok %s\n", name);
    }
}

int main(int argc, char **argv)
{
    if (argc > 1)
        only = argv[1];
    /* The code under test logs what it does; show it only when asked. */
    if (!getenv("UNIT_VERBOSE"))
        log_set_level(LOG_LEVEL_ERROR);
    suite_base();
    suite_jute();
    suite_path();
    suite_tree();
    suite_acl();
    suite_watch();
    suite_session();
    suite_readonly();
    suite_local_sessions();
    suite_snapshot();
    suite_txnlog();
    suite_changes();
    suite_election();
    suite_quorum();
    suite_ensemble_config();
    suite_partition_log();
    suite_kafka_codec();
    suite_broker_config();
    suite_broker_config_defs();
    suite_coord_data();
    suite_coord_moves();
    suite_coord_config();
    suite_compression();
    suite_batch_validate();
    suite_message_convert();
    suite_producer_state();
    suite_group();
    suite_repl();
    suite_cli_reassign();
    suite_cli_consumer_groups();
    suite_cli_console();
    suite_cli_partitioner();
    suite_cli_topic_admin();
    printf("unit: %d passed, %d failed\n", tests_passed, tests_failed);
    return tests_failed ? 1 : 0;
}
