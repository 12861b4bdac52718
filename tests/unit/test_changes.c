/* test_changes.c -- the prepared changes prep checks writes against
 * (src/keeper/server/changes.c): the newest record of each path, through
 * applying from the front and rolling back from the end, checked against a
 * plain array that scans, under the sanitizers. */
#include "keeper/server/changes.h"
#include "suites.h"
#include "unit.h"

#include <stdio.h>
#include <stdlib.h>

static change_record_t *add(change_list_t *cl, const char *path, int64_t zxid, int exists, int32_t version)
{
    zstat_t st;
    memset(&st, 0, sizeof(st));
    st.version = version;
    acl_t world = {31, "world", "anyone"};
    acl_list_t acl = {&world, 1};
    return changes_add(cl, path, zxid, exists, &st, 0, &acl);
}

static void test_changes_latest_is_the_newest_of_its_path(void)
{
    change_list_t cl;
    changes_init(&cl);
    add(&cl, "/a", 1, 1, 0);
    add(&cl, "/b", 2, 1, 0);
    change_record_t *deleted = add(&cl, "/a", 3, 0, 0);
    CHECK(changes_latest(&cl, "/a") == deleted);
    CHECK(!changes_latest(&cl, "/a")->exists);
    CHECK_EQ(changes_latest(&cl, "/b")->zxid, 2);
    CHECK(changes_latest(&cl, "/c") == NULL);
    CHECK(changes_latest(&cl, "/a/b") == NULL);
    CHECK_EQ(cl.count, 3u);
    changes_destroy(&cl);
}

/* A multi that fails after its first op gives back that op's records: the
 * path's older record is its newest again. Applying the older one then
 * leaves no record of the path. */
static void test_changes_rollback_and_apply_keep_the_index(void)
{
    change_list_t cl;
    changes_init(&cl);
    add(&cl, "/n", 5, 1, 1);
    size_t mark = cl.count;
    add(&cl, "/n", 6, 1, 2);
    add(&cl, "/m", 6, 1, 0);
    CHECK_EQ(changes_latest(&cl, "/n")->stat.version, 2);
    changes_drop_newest(&cl, mark);
    CHECK_EQ(changes_latest(&cl, "/n")->stat.version, 1);
    CHECK(changes_latest(&cl, "/m") == NULL);
    add(&cl, "/n", 6, 1, 3);
    changes_applied(&cl, 5);   /* the older record goes, the newer stays found */
    CHECK_EQ(changes_latest(&cl, "/n")->stat.version, 3);
    CHECK_EQ(cl.count, 1u);
    CHECK(cl.oldest == cl.newest);
    changes_drop_from_zxid(&cl, 6);   /* a failed log write from zxid 6 on */
    CHECK(changes_latest(&cl, "/n") == NULL);
    CHECK_EQ(cl.count, 0u);
    CHECK(cl.oldest == NULL && cl.newest == NULL);
    add(&cl, "/n", 6, 0, 0);   /* usable again */
    CHECK(changes_latest(&cl, "/n") != NULL);
    changes_destroy(&cl);
}

/* Random adds, applies and rollbacks over a few paths, checked after every
 * step against an array scanned from the newest end (what prep did before
 * the index). */
typedef struct {
    int path;
    int64_t zxid;
    int exists;
    int32_t version;
} model_record_t;

static void check_against_model(const change_list_t *cl, const model_record_t *m, size_t n, int npaths)
{
    CHECK_EQ(cl->count, n);
    size_t i = 0;
    for (const change_record_t *cr = cl->oldest; cr; cr = cr->newer, i++)
        CHECK(i < n && cr->zxid == m[i].zxid && cr->stat.version == m[i].version);
    CHECK_EQ(i, n);
    for (int p = 0; p < npaths; p++) {
        char path[16];
        snprintf(path, sizeof(path), "/p%d", p);
        const model_record_t *want = NULL;
        for (size_t j = n; j-- > 0;)
            if (m[j].path == p) {
                want = &m[j];
                break;
            }
        const change_record_t *got = changes_latest(cl, path);
        CHECK((want == NULL) == (got == NULL));
        if (want && got)
            CHECK(got->zxid == want->zxid && got->exists == want->exists && got->stat.version == want->version &&
                  (!got->exists || (got->acl.count == 1 && strcmp(got->acl.items[0].id, "anyone") == 0)));
    }
}

static void test_changes_match_a_scanned_array(void)
{
    enum { STEPS = 20000, NPATHS = 7, CAP = 4096 };
    model_record_t *m = calloc(CAP, sizeof(*m));
    CHECK(m != NULL);
    size_t n = 0;
    int64_t zxid = 1;
    uint32_t seed = 12345;
    change_list_t cl;
    changes_init(&cl);
    for (int step = 0; step < STEPS && m; step++) {
        seed = seed * 1103515245u + 12345u;
        uint32_t r = seed >> 8;
        uint32_t what = r % 10;
        if (what < 6 && n < CAP) {   /* a transaction of one or two records */
            int records = 1 + (int)(r >> 4) % 2;
            for (int i = 0; i < records && n < CAP; i++) {
                int path = (int)((r >> (8 + 3 * i)) % NPATHS);
                char name[16];
                snprintf(name, sizeof(name), "/p%d", path);
                int exists = (r >> 20) % 4 != 0;
                m[n] = (model_record_t){path, zxid, exists, exists ? (int32_t)step : 0};
                add(&cl, name, zxid, exists, m[n].version);
                n++;
            }
            zxid++;
        } else if (what < 8 && n > 0) {   /* apply up to some zxid */
            int64_t upto = m[(r >> 4) % n].zxid;
            size_t k = 0;
            while (k < n && m[k].zxid <= upto)
                k++;
            memmove(m, m + k, (n - k) * sizeof(*m));
            n -= k;
            changes_applied(&cl, upto);
        } else if (what == 8) {   /* roll a multi back to a mark */
            size_t mark = n ? (r >> 4) % (n + 1) : 0;
            n = mark;
            changes_drop_newest(&cl, mark);
        } else if (n > 0) {   /* a failed log write from some zxid on */
            int64_t from = m[(r >> 4) % n].zxid;
            while (n > 0 && m[n - 1].zxid >= from)
                n--;
            changes_drop_from_zxid(&cl, from);
        }
        check_against_model(&cl, m, n, NPATHS);
    }
    changes_destroy(&cl);
    free(m);
}

void suite_changes(void)
{
    RUN(test_changes_latest_is_the_newest_of_its_path);
    RUN(test_changes_rollback_and_apply_keep_the_index);
    RUN(test_changes_match_a_scanned_array);
}
