/* test_ensemble_config.c -- an ensemble's membership: server.N lines, the text
 * of /zookeeper/config and zoo.cfg.dynamic files, and the reconfig request's
 * two forms with ZooKeeper 3.8's answer to each bad argument. */
#include "keeper/zab/ensemble_config.h"
#include "keeper/data/proto.h"
#include "suites.h"
#include "unit.h"

#include <stdio.h>
#include <string.h>

static const char THREE[] =
    "server.1=127.0.0.1:2888:3888:participant;0.0.0.0:2181\n"
    "server.2=127.0.0.1:2889:3889:participant;0.0.0.0:2182\n"
    "server.3=127.0.0.1:2890:3890:participant;0.0.0.0:2183\n"
    "version=100000000";

static void parse3(ensemble_config_t *c)
{
    char err[256];
    CHECK_EQ(ensemble_config_parse(c, THREE, strlen(THREE), err, sizeof(err)), 0);
}

static void test_member_parse_forms(void)
{
    ensemble_member_t m;
    char err[256];
    char out[600];
    /* zoo.cfg's usual line: no role, no client part. */
    CHECK_EQ(ensemble_member_parse(&m, 1, "zk1.example:2888:3888", err, sizeof(err)), 0);
    CHECK(m.id == 1 && strcmp(m.host, "zk1.example") == 0 && m.quorum_port == 2888 && m.election_port == 3888);
    CHECK(!m.observer && m.client_addr[0] == '\0' && m.client_port == 0);
    ensemble_member_format(&m, out, sizeof(out));
    CHECK_STR(out, "zk1.example:2888:3888:participant");   /* no client part: none written */
    /* A bare client port means every address, as ZooKeeper reads it. */
    CHECK_EQ(ensemble_member_parse(&m, 4, "10.0.0.4:2888:3888:observer;2181", err, sizeof(err)), 0);
    CHECK(m.observer && strcmp(m.client_addr, "0.0.0.0") == 0 && m.client_port == 2181);
    ensemble_member_format(&m, out, sizeof(out));
    CHECK_STR(out, "10.0.0.4:2888:3888:observer;0.0.0.0:2181");
    /* The role is read without regard to case or blanks. */
    CHECK_EQ(ensemble_member_parse(&m, 4, "h:1:2: Observer ;127.0.0.1:5", err, sizeof(err)), 0);
    CHECK(m.observer && strcmp(m.client_addr, "127.0.0.1") == 0 && m.client_port == 5);
    /* IPv6 in brackets, written back in brackets. */
    CHECK_EQ(ensemble_member_parse(&m, 2, "[::1]:2888:3888:participant;[::1]:2181", err, sizeof(err)), 0);
    CHECK(strcmp(m.host, "::1") == 0 && strcmp(m.client_addr, "::1") == 0);
    ensemble_member_format(&m, out, sizeof(out));
    CHECK_STR(out, "[::1]:2888:3888:participant;[::1]:2181");
    /* A trailing ';' is a line without a client part (Java's split). */
    CHECK_EQ(ensemble_member_parse(&m, 2, "h:1:2;", err, sizeof(err)), 0);
    CHECK(m.client_port == 0 && m.client_addr[0] == '\0');
}

static void test_member_parse_refusals(void)
{
    ensemble_member_t m;
    char err[256];
    /* ConfigException in ZooKeeper: ZBADARGUMENTS. */
    CHECK_EQ(ensemble_member_parse(&m, 1, "h:1:2:leader", err, sizeof(err)), ZBADARGUMENTS);
    CHECK(strstr(err, "leader") != NULL);
    CHECK_EQ(ensemble_member_parse(&m, 1, "h:1", err, sizeof(err)), ZBADARGUMENTS);
    CHECK_EQ(ensemble_member_parse(&m, 1, "h:1:2:observer:x", err, sizeof(err)), ZBADARGUMENTS);
    CHECK_EQ(ensemble_member_parse(&m, 1, "h:x:2", err, sizeof(err)), ZBADARGUMENTS);
    CHECK_EQ(ensemble_member_parse(&m, 1, "h:2888:2888", err, sizeof(err)), ZBADARGUMENTS);
    CHECK_EQ(ensemble_member_parse(&m, 1, "h:1:2;a:b:3", err, sizeof(err)), ZBADARGUMENTS);
    CHECK_EQ(ensemble_member_parse(&m, 1, "h:1:2;3;4", err, sizeof(err)), ZBADARGUMENTS);
    CHECK_EQ(ensemble_member_parse(&m, 1, "h:1:2;port", err, sizeof(err)), ZBADARGUMENTS);
    CHECK_EQ(ensemble_member_parse(&m, 1, "a:1:2|b:3:4", err, sizeof(err)), ZBADARGUMENTS);
    CHECK_EQ(ensemble_member_parse(&m, 1, "[::1:2888:3888", err, sizeof(err)), ZBADARGUMENTS);
    CHECK_EQ(ensemble_member_parse(&m, 1, "", err, sizeof(err)), ZBADARGUMENTS);
    /* InetSocketAddress's IllegalArgumentException in ZooKeeper, which its
     * PrepRequestProcessor answers with ZMARSHALLINGERROR. */
    CHECK_EQ(ensemble_member_parse(&m, 1, "h:70000:2", err, sizeof(err)), ZMARSHALLINGERROR);
    CHECK(strstr(err, "70000") != NULL);
    CHECK_EQ(ensemble_member_parse(&m, 1, "h:1:-1", err, sizeof(err)), ZMARSHALLINGERROR);
    CHECK_EQ(ensemble_member_parse(&m, 1, "h:1:2;65536", err, sizeof(err)), ZMARSHALLINGERROR);
    CHECK_EQ(ensemble_member_parse(&m, 1, "h:99999999999999999999:2", err, sizeof(err)), ZBADARGUMENTS);
    /* A host longer than the struct holds is refused, not cut. */
    char big[400];
    memset(big, 'a', 300);
    snprintf(big + 300, sizeof(big) - 300, ":1:2");
    CHECK_EQ(ensemble_member_parse(&m, 1, big, err, sizeof(err)), ZBADARGUMENTS);
}

static void test_config_round_trip_exact_bytes(void)
{
    ensemble_config_t c;
    char out[2048];
    parse3(&c);
    CHECK_EQ(c.n, 3);
    CHECK_EQ(c.version, 0x100000000LL);
    CHECK_EQ(ensemble_config_voters(&c), 3);
    /* QuorumMaj.toString: one line per member with '\n', the version in
     * lower-case hex without 0x and with no newline after it. */
    size_t len = ensemble_config_format(&c, out, sizeof(out));
    CHECK_EQ(len, strlen(THREE));
    CHECK_STR(out, THREE);
    /* zoo.cfg.dynamic.<version>: lines sorted as strings, no version, no
     * newline at the end; zoo.cfg.dynamic.next keeps the version line. */
    len = ensemble_config_format_file(&c, 0, out, sizeof(out));
    CHECK_STR(out, "server.1=127.0.0.1:2888:3888:participant;0.0.0.0:2181\n"
                   "server.2=127.0.0.1:2889:3889:participant;0.0.0.0:2182\n"
                   "server.3=127.0.0.1:2890:3890:participant;0.0.0.0:2183");
    CHECK_EQ(len, strlen(out));
    ensemble_config_format_file(&c, 1, out, sizeof(out));
    CHECK(strstr(out, "0.0.0.0:2183\nversion=100000000") != NULL);
    /* String order puts server.10 before server.2 in the file, while
     * /zookeeper/config lists members by id. */
    const char ten[] = "server.2=h:1:2\nserver.10=h:3:4:observer\n";
    char err[256];
    CHECK_EQ(ensemble_config_parse(&c, ten, strlen(ten), err, sizeof(err)), 0);
    CHECK_EQ(c.version, 0);
    ensemble_config_format_file(&c, 0, out, sizeof(out));
    CHECK_STR(out, "server.10=h:3:4:observer\nserver.2=h:1:2:participant");
    ensemble_config_format(&c, out, sizeof(out));
    CHECK_STR(out, "server.2=h:1:2:participant\nserver.10=h:3:4:observer\nversion=0");
    /* The file ZooKeeper writes reads back to the same configuration. */
    ensemble_config_t back;
    ensemble_config_format_file(&c, 0, out, sizeof(out));
    CHECK_EQ(ensemble_config_parse(&back, out, strlen(out), err, sizeof(err)), 0);
    CHECK(ensemble_config_same_members(&c, &back));
    /* A short buffer: the full length is still returned, the text cut and terminated. */
    parse3(&c);
    char small[10];
    CHECK_EQ(ensemble_config_format(&c, small, sizeof(small)), strlen(THREE));
    CHECK_EQ(strlen(small), sizeof(small) - 1);
    /* Blank lines, comments, CRLF, blanks around '=' are read as Properties reads them. */
    const char loose[] = "# written by hand\r\n\r\n  server.3 = h:5:6\r\n!x\nserver.1=h:1:2;2181\nversion=1a\n";
    CHECK_EQ(ensemble_config_parse(&c, loose, strlen(loose), err, sizeof(err)), 0);
    CHECK(c.n == 2 && c.members[0].id == 1 && c.members[1].id == 3 && c.version == 0x1a);
    /* Negative versions print as Java's Long.toHexString does. */
    c.version = -1;
    ensemble_config_format(&c, out, sizeof(out));
    CHECK(strstr(out, "version=ffffffffffffffff") != NULL);
}

static void test_config_parse_refusals(void)
{
    ensemble_config_t c;
    char err[256];
    const char *bad[] = {
        "server.1=h:1:2\nclientPort=2181",   /* ZooKeeper: Unrecognised parameter */
        "server.x=h:1:2",
        "server.1=h:1:2:bogus",
        "server.1=h:1:2\nversion=zz",
        "server.1=h:1:2\nversion=-1",
        "group.1=1:2:3",                     /* hierarchical quorums: not in kipper */
        "server.-1=h:1:2",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err[0] = '\0';
        CHECK_EQ(ensemble_config_parse(&c, bad[i], strlen(bad[i]), err, sizeof(err)), -1);
        CHECK(err[0] != '\0');
    }
    /* A NUL inside the text is refused, not read as an end. */
    CHECK_EQ(ensemble_config_parse(&c, "server.1=h:1:2\0x", 16, err, sizeof(err)), -1);
    /* Two lines with one id: the last wins, as with java.util.Properties. */
    const char dup[] = "server.1=a:1:2\nserver.1=b:3:4\n";
    CHECK_EQ(ensemble_config_parse(&c, dup, strlen(dup), err, sizeof(err)), 0);
    CHECK(c.n == 1 && strcmp(c.members[0].host, "b") == 0);
    /* More members than the keeper holds. */
    char many[4096];
    size_t at = 0;
    for (int i = 1; i <= ENSEMBLE_MAX_MEMBERS + 1; i++)
        at += (size_t)snprintf(many + at, sizeof(many) - at, "server.%d=h:%d:%d\n", i, 2 * i, 2 * i + 1);
    CHECK_EQ(ensemble_config_parse(&c, many, at, err, sizeof(err)), -1);
}

static void test_incremental(void)
{
    ensemble_config_t cur, next;
    char err[256];
    char out[2048];
    parse3(&cur);
    /* kazoo's test_add_remove_observer: add an observer, then remove it. */
    CHECK_EQ(ensemble_config_incremental(&cur, "server.100=127.0.0.1:2900:3900:observer;0.0.0.0:2190", NULL, &next,
                                         err, sizeof(err)), 0);
    CHECK_EQ(next.n, 4);
    CHECK_EQ(ensemble_config_voters(&next), 3);
    CHECK(ensemble_config_find(&next, 100) && ensemble_config_find(&next, 100)->observer);
    CHECK_EQ(next.version, cur.version);   /* the caller gives it the txn's zxid */
    next.version = 0x100000005LL;
    ensemble_config_format(&next, out, sizeof(out));
    CHECK(strstr(out, "server.3=127.0.0.1:2890:3890:participant;0.0.0.0:2183\n"
                      "server.100=127.0.0.1:2900:3900:observer;0.0.0.0:2190\nversion=100000005") != NULL);
    ensemble_config_t after;
    CHECK_EQ(ensemble_config_incremental(&next, "", "100", &after, err, sizeof(err)), 0);
    after.version = cur.version;
    CHECK(ensemble_config_same_members(&after, &cur));
    /* Several of each, blanks and empty elements dropped; leaving goes first,
     * so one request can replace a member. */
    CHECK_EQ(ensemble_config_incremental(&cur, " server.2=127.0.0.1:2989:3989;2199 , ,server.4=h4:1:2;3", "2, ,3",
                                         &next, err, sizeof(err)), 0);
    CHECK(next.n == 3 && ensemble_config_find(&next, 2)->quorum_port == 2989 && !ensemble_config_find(&next, 3));
    /* A joiner with the id of a member replaces it. */
    CHECK_EQ(ensemble_config_incremental(&cur, "server.3=127.0.0.1:2890:3890:observer;2183", NULL, &next, err,
                                         sizeof(err)), 0);
    CHECK(ensemble_config_find(&next, 3)->observer && next.n == 3);
    /* Removing an id that is not a member: ZooKeeper says nothing. */
    CHECK_EQ(ensemble_config_incremental(&cur, NULL, "42", &next, err, sizeof(err)), 0);
    CHECK(ensemble_config_same_members(&cur, &next));
    /* ZooKeeper reads the id after the key's last '.', whatever precedes it. */
    CHECK_EQ(ensemble_config_incremental(&cur, "participant.7=h7:1:2;3", NULL, &next, err, sizeof(err)), 0);
    CHECK(ensemble_config_find(&next, 7) != NULL);
}

static void test_incremental_refusals(void)
{
    ensemble_config_t cur, next;
    char err[256];
    parse3(&cur);
    struct { const char *joining, *leaving; int code; } cases[] = {
        {"server.5=h:1:2:leader;3", NULL, ZBADARGUMENTS},           /* unknown role */
        {"server.5=h:1:2", NULL, ZBADARGUMENTS},                    /* no client port: "3 ports" */
        {"server.5", NULL, ZBADARGUMENTS},                          /* "Wrong format of server string" */
        {"server.5=h:1:2;3=4", NULL, ZBADARGUMENTS},
        {"server.5=h:1:1;3", NULL, ZBADARGUMENTS},                  /* quorum port = election port */
        {"server.5=h:x:2;3", NULL, ZBADARGUMENTS},
        {"server.5=h:1:2;70000", NULL, ZMARSHALLINGERROR},          /* port out of range */
        {"server.5=h:100000:2;3", NULL, ZMARSHALLINGERROR},
        {"server.five=h:1:2;3", NULL, ZMARSHALLINGERROR},           /* Long.parseLong of the id */
        {NULL, "two", ZMARSHALLINGERROR},
        {NULL, "1,2", ZBADARGUMENTS},                               /* one voter left: "at least 2 followers" */
        {NULL, "1,2,3", ZBADARGUMENTS},
        /* A routable address one member already uses. */
        {"server.5=10.1.1.1:2888:3888;2181,server.6=10.1.1.1:2888:3999;2182", NULL, ZBADARGUMENTS},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        err[0] = '\0';
        int rc = ensemble_config_incremental(&cur, cases[i].joining, cases[i].leaving, &next, err, sizeof(err));
        if (rc != cases[i].code)
            fprintf(stderr, "case %zu: %d (%s)\n", i, rc, err);
        CHECK_EQ(rc, cases[i].code);
        CHECK(err[0] != '\0');
    }
    CHECK(strstr(err, "conflicts") != NULL);
    /* Loopback and wildcard addresses never conflict (every test ensemble shares 127.0.0.1). */
    CHECK_EQ(ensemble_config_incremental(&cur, "server.5=127.0.0.1:2888:3888;0.0.0.0:2181", NULL, &next, err,
                                         sizeof(err)), 0);
    /* An element too long to be a server string. */
    char huge[3000];
    memset(huge, 'a', sizeof(huge) - 1);
    huge[sizeof(huge) - 1] = '\0';
    CHECK_EQ(ensemble_config_incremental(&cur, huge, NULL, &next, err, sizeof(err)), ZBADARGUMENTS);
}

static void test_nonincremental(void)
{
    ensemble_config_t next;
    char err[256];
    /* Commas or newlines between members; a member may lack a client part
     * here (ZooKeeper checks that only for joiners). */
    CHECK_EQ(ensemble_config_nonincremental("server.1=127.0.0.1:2888:3888:participant;0.0.0.0:2181,"
                                            "server.2=127.0.0.1:2889:3889\nserver.9=127.0.0.1:2899:3899:observer",
                                            &next, err, sizeof(err)), 0);
    CHECK(next.n == 3 && ensemble_config_voters(&next) == 2 && next.version == 0);
    /* A version line is read and then replaced by the txn's zxid. */
    CHECK_EQ(ensemble_config_nonincremental("server.1=a:1:2,server.2=b:1:2,version=5", &next, err, sizeof(err)), 0);
    CHECK_EQ(next.version, 0);
    /* Duplicate ids: the last wins, as java.util.Properties keeps it. */
    CHECK_EQ(ensemble_config_nonincremental("server.1=a:1:2,server.2=b:1:2,server.1=c:1:2", &next, err, sizeof(err)),
             0);
    CHECK(next.n == 2 && strcmp(ensemble_config_find(&next, 1)->host, "c") == 0);
    struct { const char *members; int code; } cases[] = {
        {"server.1=a:1:2,clientPort=2181", ZBADARGUMENTS},          /* Unrecognised parameter */
        {"server.1=a:1:2,server.2=b:1:2:leader", ZBADARGUMENTS},
        {"server.1=a:1:2", ZBADARGUMENTS},                          /* at least 2 followers */
        {"", ZBADARGUMENTS},
        {"server.1=a:1:2:observer,server.2=b:1:2:observer", ZMARSHALLINGERROR},   /* observers w/o participants */
        {"server.1=a:1:2,server.2=b:1:2:observer", ZMARSHALLINGERROR},            /* observers w/o quorum */
        {"server.1=a:1:2,server.2=b:1:77777", ZMARSHALLINGERROR},
        {"server.x=a:1:2,server.2=b:1:2", ZMARSHALLINGERROR},
        {"server.1=a:1:2,server.2=b:1:2,version=xyz", ZMARSHALLINGERROR},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        err[0] = '\0';
        int rc = ensemble_config_nonincremental(cases[i].members, &next, err, sizeof(err));
        if (rc != cases[i].code)
            fprintf(stderr, "case %zu: %d (%s)\n", i, rc, err);
        CHECK_EQ(rc, cases[i].code);
        CHECK(err[0] != '\0');
    }
}

static void test_put_remove_same(void)
{
    ensemble_config_t a, b;
    parse3(&a);
    b = a;
    b.version = 7;
    CHECK(ensemble_config_same_members(&a, &b));   /* the version is not membership */
    ensemble_member_t m = a.members[1];
    m.observer = 1;
    CHECK_EQ(ensemble_config_put(&b, &m), 0);
    CHECK(!ensemble_config_same_members(&a, &b));
    CHECK_EQ(ensemble_config_remove(&b, 2), 0);
    CHECK_EQ(ensemble_config_remove(&b, 2), -1);
    CHECK(b.n == 2 && b.members[0].id == 1 && b.members[1].id == 3);
    m.id = 0;
    CHECK_EQ(ensemble_config_put(&b, &m), 0);
    CHECK(b.members[0].id == 0 && b.n == 3);
    ensemble_config_t full = {0};
    for (int i = 0; i < ENSEMBLE_MAX_MEMBERS; i++) {
        m.id = i;
        CHECK_EQ(ensemble_config_put(&full, &m), 0);
    }
    m.id = 1000;
    CHECK_EQ(ensemble_config_put(&full, &m), -1);
}

void suite_ensemble_config(void)
{
    RUN(test_member_parse_forms);
    RUN(test_member_parse_refusals);
    RUN(test_config_round_trip_exact_bytes);
    RUN(test_config_parse_refusals);
    RUN(test_incremental);
    RUN(test_incremental_refusals);
    RUN(test_nonincremental);
    RUN(test_put_remove_same);
}
