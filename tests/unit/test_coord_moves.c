/* test_coord_moves.c -- the documents of partition moves and asked-for
 * elections (src/broker/coord/coord_reassign.c, coord_elect.c): Kafka's plan
 * format parsed, refused and written back; a move's replicas, adding and
 * removing sets; election lists; repeated partitions found in long lists.
 * What touches the coordinator is covered by
 * tests/integration/test_reassignment.py and test_elections.py. */
#include "suites.h"
#include "unit.h"

#include "broker/coord/coord_elect.h"
#include "broker/coord/coord_reassign.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

static char err[512];

#define DOC(s) (s), strlen(s)

static void test_plan_parse(void)
{
    coord_plan_t plan;
    const char *ok = "{\"version\":1,\"partitions\":[{\"topic\":\"a\",\"partition\":0,\"replicas\":[3,1,2],"
                     "\"log_dirs\":[\"any\",\"any\",\"any\"]},{\"topic\":\"b\",\"partition\":7,\"replicas\":[4]}]}";
    CHECK_EQ(coord_plan_parse(DOC(ok), &plan, err, sizeof(err)), 0);
    CHECK_EQ(plan.n, 2);
    CHECK_STR(plan.moves[0].topic, "a");
    CHECK_EQ(plan.moves[0].nreplicas, 3);
    CHECK_EQ(plan.moves[0].replicas[0], 3);
    CHECK_EQ(plan.moves[1].partition, 7);
    /* Written back, it reads the same. */
    char *text = coord_plan_format(&plan);
    coord_plan_t again;
    CHECK(text != NULL);
    CHECK_EQ(coord_plan_parse(text, strlen(text), &again, err, sizeof(err)), 0);
    CHECK_EQ(again.n, 2);
    CHECK(memcmp(again.moves, plan.moves, sizeof(*plan.moves) * 2) == 0);
    free(text);
    coord_plan_free(&again);
    coord_plan_free(&plan);
}

static void test_plan_refusals(void)
{
    static const struct {
        const char *doc, *says;
    } bad[] = {
        {"{\"partitions\":[", "not valid JSON"},
        {"[1,2]", "expected"},
        {"{\"version\":2,\"partitions\":[]}", "expected"},
        {"{\"version\":1,\"partitions\":[]}", "1 to"},
        {"{\"partitions\":[{\"topic\":\"a\",\"partition\":0,\"replicas\":[]}]}", "must list 1 to"},
        {"{\"partitions\":[{\"topic\":\"a\",\"partition\":0,\"replicas\":[1,1]}]}", "listed twice"},
        {"{\"partitions\":[{\"topic\":\"a\",\"partition\":0,\"replicas\":[-1]}]}", "broker ids"},
        {"{\"partitions\":[{\"topic\":\"a\",\"partition\":-1,\"replicas\":[1]}]}", "partition"},
        {"{\"partitions\":[{\"topic\":\"a/b\",\"partition\":0,\"replicas\":[1]}]}", "partitions[0]"},
        {"{\"partitions\":[{\"topic\":\"a\",\"partition\":0,\"replicas\":[1],\"log_dirs\":[\"/x\"]}]}", "any"},
        {"{\"partitions\":[{\"topic\":\"a\",\"partition\":0,\"replicas\":[1,2],\"log_dirs\":[\"any\"]}]}",
         "one entry per replica"},
        {"{\"partitions\":[{\"topic\":\"a\",\"partition\":0,\"replicas\":[1]},"
         "{\"topic\":\"b\",\"partition\":0,\"replicas\":[1]},{\"topic\":\"a\",\"partition\":0,\"replicas\":[2]}]}",
         "a-0 is named twice"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        coord_plan_t plan;
        err[0] = 0;
        CHECK_EQ(coord_plan_parse(DOC(bad[i].doc), &plan, err, sizeof(err)), -1);
        CHECK(strstr(err, bad[i].says) != NULL);
        CHECK(plan.moves == NULL && plan.n == 0);
    }
}

static void test_move_sets(void)
{
    coord_move_sets_t m;
    int32_t current[] = {1, 2, 3}, target[] = {4, 2, 3};
    coord_move_sets(current, 3, target, 3, &m);
    CHECK_EQ(m.nreplicas, 4);
    CHECK(m.replicas[0] == 4 && m.replicas[1] == 2 && m.replicas[2] == 3 && m.replicas[3] == 1);
    CHECK(m.nadding == 1 && m.adding[0] == 4);
    CHECK(m.nremoving == 1 && m.removing[0] == 1);
    /* A new order of the same brokers adds and removes nothing. */
    int32_t reordered[] = {3, 1, 2};
    coord_move_sets(current, 3, reordered, 3, &m);
    CHECK(m.nreplicas == 3 && m.nadding == 0 && m.nremoving == 0 && m.replicas[0] == 3);
    /* Shrinking to one broker. */
    int32_t one[] = {5};
    coord_move_sets(current, 3, one, 1, &m);
    CHECK(m.nreplicas == 4 && m.nadding == 1 && m.nremoving == 3 && m.replicas[3] == 3);
}

static void test_election_lists(void)
{
    coord_tp_t tps[2] = {{"t", 0}, {"u", 3}}, *back = NULL;
    int n = 0;
    char *doc = coord_tp_list_format(tps, 2);
    CHECK(doc != NULL);
    CHECK_EQ(coord_tp_list_parse(doc, strlen(doc), &back, &n, err, sizeof(err)), 0);
    CHECK(n == 2 && strcmp(back[1].topic, "u") == 0 && back[1].partition == 3);
    free(back);
    free(doc);
    static const char *bad[] = {
        "nope",
        "{\"partitions\":3}",
        "{\"partitions\":[{\"topic\":\"t\"}]}",
        "{\"partitions\":[{\"topic\":\"..\",\"partition\":0}]}",
        "{\"partitions\":[{\"topic\":\"t\",\"partition\":0},{\"topic\":\"t\",\"partition\":0}]}",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        back = NULL;
        CHECK_EQ(coord_tp_list_parse(DOC(bad[i]), &back, &n, err, sizeof(err)), -1);
        CHECK(back == NULL && n == 0);
    }
    CHECK(strstr(err, "t-0 is named twice") != NULL);
}

static void test_repeated_in_a_long_list(void)
{
    enum { N = 100000 };
    coord_tp_t *tps = calloc(N, sizeof(*tps));
    CHECK(tps != NULL);
    if (!tps)
        return;
    for (int i = 0; i < N; i++) {
        snprintf(tps[i].topic, sizeof(tps[i].topic), "topic-%d", i % 100);
        tps[i].partition = i / 100;
    }
    size_t at = offsetof(coord_tp_t, partition);
    CHECK_EQ(coord_partition_repeated(tps, N, sizeof(*tps), at), -1);
    tps[N - 1] = tps[12345];   /* the later of the two is reported */
    CHECK_EQ(coord_partition_repeated(tps, N, sizeof(*tps), at), N - 1);
    CHECK_EQ(coord_partition_repeated(tps, 1, sizeof(*tps), at), -1);
    CHECK_EQ(coord_partition_repeated(tps, 0, sizeof(*tps), at), -1);
    free(tps);
}

void suite_coord_moves(void)
{
    RUN(test_plan_parse);
    RUN(test_plan_refusals);
    RUN(test_move_sets);
    RUN(test_election_lists);
    RUN(test_repeated_in_a_long_list);
}
