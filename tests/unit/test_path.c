/* test_path.c -- znode path validation (ZooKeeper's PathUtils.validatePath). */
#include <stdio.h>
#include <string.h>

#include "keeper/data/path.h"
#include "suites.h"
#include "unit.h"

typedef struct {
    const char *path;
    int sequential;
    int valid;
} path_case_t;

static const path_case_t cases[] = {
    /* shape */
    {"/", 0, 1},
    {"/a", 0, 1},
    {"/a/b/c", 0, 1},
    {"/zookeeper/quota", 0, 1},
    {"", 0, 0},
    {"a", 0, 0},
    {"a/b", 0, 0},
    {"//", 0, 0},
    {"//a", 0, 0},
    {"/a/", 0, 0},
    {"/a//b", 0, 0},
    /* dots: only whole "." and ".." segments are refused */
    {"/.", 0, 0},
    {"/..", 0, 0},
    {"/a/.", 0, 0},
    {"/a/..", 0, 0},
    {"/a/./b", 0, 0},
    {"/a/../b", 0, 0},
    {"/./a", 0, 0},
    {"/../a", 0, 0},
    {"/...", 0, 1},
    {"/a/...", 0, 1},
    {"/.a", 0, 1},
    {"/a.", 0, 1},
    {"/..a", 0, 1},
    {"/a..", 0, 1},
    {"/a/.b/..c", 0, 1},
    /* ASCII: controls and DEL refused; space and the rest allowed */
    {"/a b", 0, 1},
    {"/~!@#$%^&*()", 0, 1},
    {"/\x01", 0, 0},
    {"/a\x1f", 0, 0},
    {"/\t", 0, 0},
    {"/\x7f", 0, 0},
    {"/\x20", 0, 1},
    /* two-byte UTF-8: U+0080-U+009F refused */
    {"/\xc2\x80", 0, 0},
    {"/\xc2\x9f", 0, 0},
    {"/\xc2\xa0", 0, 1},        /* U+00A0 */
    {"/\xc3\xa4", 0, 1},        /* U+00E4 */
    {"/\xdf\xbf", 0, 1},        /* U+07FF */
    /* three-byte UTF-8: U+D800-U+F8FF and U+FFF0-U+FFFF refused */
    {"/\xe0\xa0\x80", 0, 1},    /* U+0800 */
    {"/\xe2\x82\xac", 0, 1},    /* U+20AC euro */
    {"/\xed\x9f\xbf", 0, 1},    /* U+D7FF */
    {"/\xed\xa0\x80", 0, 0},    /* U+D800, an encoded surrogate */
    {"/\xed\xbf\xbf", 0, 0},    /* U+DFFF */
    {"/\xee\x80\x80", 0, 0},    /* U+E000 private use */
    {"/\xef\xa3\xbf", 0, 0},    /* U+F8FF */
    {"/\xef\xa4\x80", 0, 1},    /* U+F900 */
    {"/\xef\xbf\xaf", 0, 1},    /* U+FFEF */
    {"/\xef\xbf\xb0", 0, 0},    /* U+FFF0 */
    {"/\xef\xbf\xbd", 0, 0},    /* U+FFFD, what Java makes of malformed input */
    {"/\xef\xbf\xbf", 0, 0},    /* U+FFFF */
    /* four-byte UTF-8: a surrogate pair in Java, so always refused */
    {"/\xf0\x90\x80\x80", 0, 0},
    {"/\xf0\x9f\x98\x80", 0, 0},
    {"/\xf4\x8f\xbf\xbf", 0, 0},
    /* malformed UTF-8 */
    {"/\x80", 0, 0},            /* stray continuation */
    {"/a\xbf", 0, 0},
    {"/\xc0\xaf", 0, 0},        /* overlong '/' */
    {"/\xc0\x80", 0, 0},        /* overlong NUL */
    {"/\xc1\xbf", 0, 0},
    {"/\xe0\x80\xaf", 0, 0},    /* overlong three-byte */
    {"/\xe0\x9f\xbf", 0, 0},
    {"/\xc3", 0, 0},            /* truncated */
    {"/\xe2\x82", 0, 0},
    {"/\xe2\x82/", 0, 0},
    {"/\xc3/a", 0, 0},
    {"/\xc3\xc3", 0, 0},
    {"/\xf5\x80\x80\x80", 0, 0},
    {"/\xf8\x88\x80\x80\x80", 0, 0},
    {"/\xfe", 0, 0},
    {"/\xff", 0, 0},
    /* sequential: checked as path + "1" */
    {"/", 1, 1},
    {"/a/", 1, 1},
    {"/a/b-", 1, 1},
    {"/a/.", 1, 1},
    {"/a/..", 1, 1},
    {"", 1, 0},
    {"a", 1, 0},
    {"/a//", 1, 0},
    {"/a/./", 1, 0},
    {"/a/../", 1, 0},
    {"/\x01", 1, 0},
    {"/\xc3", 1, 0},
};

static void test_path_validate_table(void)
{
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int got = path_validate(cases[i].path, cases[i].sequential) == 0;
        if (got != cases[i].valid) {
            char what[96];
            snprintf(what, sizeof(what), "case %zu should be %s", i, cases[i].valid ? "valid" : "invalid");
            unit_fail(__FILE__, __LINE__, what);
        }
    }
    CHECK_EQ(path_validate(NULL, 0), -1);
}

static void test_path_long_and_deep(void)
{
    enum { N = 1 << 16 };
    static char p[N + 1];
    for (int i = 0; i < N; i += 2) {
        p[i] = '/';
        p[i + 1] = 'x';
    }
    p[N] = 0;
    CHECK_EQ(path_validate(p, 0), 0);
    p[N - 1] = '.';   /* ".../." */
    CHECK_EQ(path_validate(p, 0), -1);
    CHECK_EQ(path_validate(p, 1), 0);
}

static void test_path_parent_and_basename(void)
{
    CHECK_EQ(path_parent_len("/"), 0);
    CHECK_EQ(path_parent_len("/a"), 1);
    CHECK_EQ(path_parent_len("/a/b"), 2);
    CHECK_EQ(path_parent_len("/abc/def/g"), 8);
    CHECK_EQ(path_parent_len("abc"), 0);
    CHECK_STR(path_basename("/a/b"), "b");
    CHECK_STR(path_basename("/a"), "a");
    CHECK_STR(path_basename("/"), "");
    CHECK_STR(path_basename("/a/"), "");
    CHECK_STR(path_basename("abc"), "abc");
}

void suite_path(void)
{
    RUN(test_path_validate_table);
    RUN(test_path_long_and_deep);
    RUN(test_path_parent_and_basename);
}
