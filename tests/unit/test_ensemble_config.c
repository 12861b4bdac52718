/* test_ensemble_config.c -- an ensemble's membership: server.N lines, the text
 * of /zookeeper/config and zoo.cfg.dynamic files, and the reconfig request's
 * two forms with ZooKeeper 3.8's answer to each bad argument. */
#define _GNU_SOURCE
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
    /* ZooKeeper lists the members in its HashMap's order: the copy of 3
     * members has 8 buckets, so 9 lands with 1 (seen on ZooKeeper 3.8:
     * tests/integration/zk_reconfig_facts.py), and stays there in the next
     * reconfig's copy. */
    CHECK_EQ(ensemble_config_incremental(&cur, "server.9=127.0.0.1:2909:3909;2199", NULL, &next, err, sizeof(err)),
             0);
    ensemble_config_format(&next, out, sizeof(out));
    CHECK(strncmp(out, "server.1=", 9) == 0 && strstr(out, "2181\nserver.9=") && strstr(out, "2199\nserver.2="));
    CHECK_EQ(ensemble_config_incremental(&next, NULL, "2", &after, err, sizeof(err)), 0);
    ensemble_config_format(&after, out, sizeof(out));
    CHECK(strstr(out, "2181\nserver.9=") && strstr(out, "2199\nserver.3="));
    /* The file is sorted as text whatever the map's order. */
    ensemble_config_format_file(&after, 0, out, sizeof(out));
    CHECK(strstr(out, "server.3=127.0.0.1:2890:3890:participant;0.0.0.0:2183\nserver.9=") != NULL);
    /* Five members: still 8 buckets (5 / 0.75 + 1 = 7), so 100 comes between 4 and 5. */
    ensemble_config_t five;
    const char five_text[] = "server.1=a:1:2\nserver.2=b:1:2\nserver.3=c:1:2\nserver.4=d:1:2\nserver.5=e:1:2";
    CHECK_EQ(ensemble_config_parse(&five, five_text, strlen(five_text), err, sizeof(err)), 0);
    CHECK_EQ(ensemble_config_incremental(&five, "server.100=f:1:2:observer;3", NULL, &next, err, sizeof(err)), 0);
    ensemble_config_format(&next, out, sizeof(out));
    CHECK(strstr(out, "server.4=d:1:2:participant\nserver.100=f:1:2:observer;0.0.0.0:3\nserver.5=") != NULL);
    CHECK_EQ(next.hash_cap, 8);
    /* Joiners past three quarters of the table double it, as HashMap resizes. */
    CHECK_EQ(ensemble_config_incremental(&five, "server.6=g:1:2;3,server.7=h:1:2;3", NULL, &next, err, sizeof(err)),
             0);
    CHECK_EQ(next.hash_cap, 16);
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
        {NULL, "1,2,3", ZBADARGUMENTS},                             /* no voter left: "at least 1 follower" */
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
    /* One voter left is a configuration; prep.c adds ZooKeeper's "at least 2"
     * under standaloneEnabled=true. */
    CHECK_EQ(ensemble_config_incremental(&cur, NULL, "1,2", &next, err, sizeof(err)), 0);
    CHECK_EQ(ensemble_config_voters(&next), 1);
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
        {"", ZBADARGUMENTS},                                        /* at least 1 follower */
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


/* ---- the keeper side: zoo.cfg with dynamic files, the files written, prep's checks ---- */

#include "base/fsutil.h"
#include "keeper/data/jute.h"
#include "keeper/server/keeper_impl.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static void write_text(const char *dir, const char *name, const char *text)
{
    char path[600];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static char *read_back(const char *dir, const char *name)
{
    static char buf[8192];
    char path[600];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

static int load_cfg(keeper_config_t *kc, const char *dir, char *err, size_t errlen)
{
    char path[600];
    snprintf(path, sizeof(path), "%s/zoo.cfg", dir);
    return keeper_config_load(kc, path, err, errlen);
}

static void test_zoo_cfg_dynamic_file(void)
{
    char dir[] = "/tmp/kipper-unit-dyncfg-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char text[2048], err[512] = "";
    write_text(dir, "myid", "2\n");
    keeper_config_t *kc = calloc(1, sizeof(*kc));
    /* The static form with client parts: the member's own line says where to listen. */
    snprintf(text, sizeof(text), "tickTime=2000\ndataDir=%s\nreconfigEnabled=true\nskipACL=yes\n"
             "server.1=127.0.0.1:2888:3888:participant;127.0.0.1:2181\n"
             "server.2=127.0.0.1:2889:3889:participant;127.0.0.1:2182\n"
             "server.3=127.0.0.1:2890:3890:observer;2183\n", dir);
    write_text(dir, "zoo.cfg", text);
    CHECK_EQ(load_cfg(kc, dir, err, sizeof(err)), 0);
    CHECK(kc->reconfig_enabled && kc->skip_acl && kc->npeers == 3 && kc->peers_version == 0);
    CHECK(kc->client_port == 2182 && strcmp(kc->client_port_address, "127.0.0.1") == 0);
    CHECK(kc->peers[2].observer && strcmp(kc->peers[2].client_addr, "0.0.0.0") == 0);
    /* A clientPort that disagrees with the member's own line is refused, as by ZooKeeper. */
    snprintf(text, sizeof(text), "dataDir=%s\nclientPort=2999\nserver.1=127.0.0.1:2888:3888;2181\n"
             "server.2=127.0.0.1:2889:3889;2182\n", dir);
    write_text(dir, "zoo.cfg", text);
    CHECK_EQ(load_cfg(kc, dir, err, sizeof(err)), -1);
    CHECK(strstr(err, "client address") != NULL);
    /* dynamicConfigFile: the lines come from there, the version from its name. */
    snprintf(text, sizeof(text), "dataDir=%s\nreconfigEnabled=true\ndynamicConfigFile=%s/zoo.cfg.dynamic.30000000a\n",
             dir, dir);
    write_text(dir, "zoo.cfg", text);
    write_text(dir, "zoo.cfg.dynamic.30000000a", "server.1=127.0.0.1:2888:3888:participant;127.0.0.1:2181\n"
                                                 "server.2=127.0.0.1:2889:3889:participant;127.0.0.1:2182");
    CHECK_EQ(load_cfg(kc, dir, err, sizeof(err)), 0);
    CHECK(kc->npeers == 2 && kc->peers_version == 0x30000000aLL && kc->client_port == 2182);
    CHECK(!kc->has_next_ensemble);
    /* zoo.cfg.dynamic.next: a proposal, read as last seen. */
    write_text(dir, "zoo.cfg.dynamic.next", "server.1=127.0.0.1:2888:3888:participant;127.0.0.1:2181\n"
                                            "server.2=127.0.0.1:2889:3889:participant;127.0.0.1:2182\n"
                                            "server.4=127.0.0.1:2891:3891:observer;127.0.0.1:2184\nversion=30000000c");
    CHECK_EQ(load_cfg(kc, dir, err, sizeof(err)), 0);
    CHECK(kc->has_next_ensemble && kc->next_ensemble.n == 3 && kc->next_ensemble.version == 0x30000000cLL);
    /* Refused as ZooKeeper refuses them: a version inside the file, server lines in both. */
    write_text(dir, "zoo.cfg.dynamic.30000000a", "server.1=127.0.0.1:2888:3888\nserver.2=127.0.0.1:2889:3889\n"
                                                 "version=30000000a");
    CHECK_EQ(load_cfg(kc, dir, err, sizeof(err)), -1);
    CHECK(strstr(err, "version inside") != NULL);
    snprintf(text, sizeof(text), "dataDir=%s\ndynamicConfigFile=%s/zoo.cfg.dynamic.30000000a\n"
             "server.1=127.0.0.1:2888:3888\n", dir, dir);
    write_text(dir, "zoo.cfg", text);
    CHECK_EQ(load_cfg(kc, dir, err, sizeof(err)), -1);
    CHECK(strstr(err, "separate dynamic config file") != NULL);
    snprintf(text, sizeof(text), "dataDir=%s\ndynamicConfigFile=%s/missing\n", dir, dir);
    write_text(dir, "zoo.cfg", text);
    CHECK_EQ(load_cfg(kc, dir, err, sizeof(err)), -1);
    free(kc);
    CHECK_EQ(fs_remove_tree(dir), 0);
}

static void test_config_store_files(void)
{
    char dir[] = "/tmp/kipper-unit-dynstore-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    keeper_t *k = calloc(1, sizeof(*k));
    char text[1024];
    snprintf(k->cfg.path, sizeof(k->cfg.path), "%s/zoo.cfg", dir);
    snprintf(text, sizeof(text), "# comment\ntickTime=2000\nclientPort=2182\npeerType=participant\n"
             "server.1=127.0.0.1:2888:3888;2181\nserver.2=127.0.0.1:2889:3889;2182\ninitLimit=5\ninitLimit=10\n");
    write_text(dir, "zoo.cfg", text);
    k->cfg.server_id = 2;
    ensemble_config_t c;
    parse3(&c);
    c.members[1].id = 2;
    /* Off: ZooKeeper writes no dynamic file. */
    CHECK_EQ(keeper_config_store(k, &c, 1), 0);
    CHECK(read_back(dir, "zoo.cfg.dynamic.100000000") == NULL);
    k->cfg.reconfig_enabled = 1;
    k->config = k->last_seen = c;
    ensemble_config_t next = c;
    next.version = 0x100000007LL;
    CHECK_EQ(keeper_config_store(k, &next, 0), 0);
    CHECK_STR(read_back(dir, "zoo.cfg.dynamic.next"),
              "server.1=127.0.0.1:2888:3888:participant;0.0.0.0:2181\n"
              "server.2=127.0.0.1:2889:3889:participant;0.0.0.0:2182\n"
              "server.3=127.0.0.1:2890:3890:participant;0.0.0.0:2183\nversion=100000007");
    k->last_seen = next;
    k->config = next;
    CHECK_EQ(keeper_config_store(k, &next, 1), 0);
    CHECK_STR(read_back(dir, "zoo.cfg.dynamic.100000007"),
              "server.1=127.0.0.1:2888:3888:participant;0.0.0.0:2181\n"
              "server.2=127.0.0.1:2889:3889:participant;0.0.0.0:2182\n"
              "server.3=127.0.0.1:2890:3890:participant;0.0.0.0:2183");
    CHECK(read_back(dir, "zoo.cfg.dynamic.next") == NULL);   /* committed: nothing newer proposed */
    /* zoo.cfg: no membership or client port keys, the last of a repeated key, the pointer at the end. */
    char want[1024];
    char real[600];
    CHECK(realpath(dir, real) != NULL);
    snprintf(want, sizeof(want), "tickTime=2000\ninitLimit=10\ndynamicConfigFile=%s/zoo.cfg.dynamic.100000007\n", real);
    CHECK_STR(read_back(dir, "zoo.cfg"), want);
    CHECK_EQ(k->config.n, 3);   /* the active configuration (cfg.peers stay as read at start) */
    /* The rewritten zoo.cfg and its file load back to the same membership. */
    keeper_config_t *kc = calloc(1, sizeof(*kc));
    char err[512] = "";
    write_text(dir, "myid", "2");
    FILE *f = fopen(k->cfg.path, "a");
    if (f) {
        fprintf(f, "dataDir=%s\nreconfigEnabled=true\n", dir);
        fclose(f);
    }
    CHECK_EQ(keeper_config_load(kc, k->cfg.path, err, sizeof(err)), 0);
    ensemble_config_t back;
    keeper_config_ensemble(kc, &back);
    CHECK(ensemble_config_same_members(&back, &next) && back.version == next.version);
    CHECK_EQ(kc->client_port, 2182);
    free(kc);
    free(k);
    CHECK_EQ(fs_remove_tree(dir), 0);
}

static void no_watch(void *watcher, int32_t event_type, const char *path, void *ctx)
{
    (void)watcher;
    (void)event_type;
    (void)path;
    (void)ctx;
}

/* A reconfig request's record: ReconfigRequest {joining, leaving, newMembers, curConfigId}. */
static int32_t prep_reconfig_answer(keeper_t *k, int64_t session, const char *joining, const char *leaving,
                                    const char *members, int64_t from)
{
    buf_t b;
    buf_init(&b);
    jute_put_string(&b, joining);
    jute_put_string(&b, leaving);
    jute_put_string(&b, members);
    jute_put_long(&b, from);
    jute_in_t in;
    jute_in_init(&in, b.data, b.len);
    prep_origin_t o = {session, NULL, "unit"};
    txn_header_t hdr;
    txn_t txn;
    prep_write(k, &o, OP_RECONFIG, 1, &in, &hdr, &txn);
    int32_t err = hdr.type == OP_ERROR ? txn.err : ZOK;
    txn_free(&txn);
    buf_free(&b);
    return err;
}

static void test_prep_reconfig_checks_in_zookeepers_order(void)
{
    keeper_t *k = calloc(1, sizeof(*k));
    k->watches = watch_manager_create(no_watch, NULL);
    k->tree = tree_create(k->watches);
    k->sessions = session_tracker_create(1, 2000, 0);
    k->next_zxid = 0x100000001LL;
    int64_t sid = 0x0100000000000001LL;
    session_add(k->sessions, sid, 10000, 0);
    parse3(&k->config);
    k->last_seen = k->config;
    k->cfg.server_id = 1;
    const char *obs = "server.100=127.0.0.1:2900:3900:observer;2190";
    /* reconfigEnabled off comes first, before the session or anything else. */
    CHECK_EQ(prep_reconfig_answer(k, 42, obs, NULL, NULL, -1), ZRECONFIGDISABLED);
    k->reconfig_enabled = 1;
    k->cfg.reconfig_enabled = 1;
    CHECK_EQ(prep_reconfig_answer(k, 42, obs, NULL, NULL, -1), ZSESSIONEXPIRED);
    /* Not leading (standalone here): ZooKeeper's UnimplementedException. */
    CHECK_EQ(prep_reconfig_answer(k, sid, obs, NULL, NULL, -1), ZUNIMPLEMENTED);
    k->role = ROLE_LEADING;
    /* A proposal not yet active. */
    k->last_seen.version = 0x100000005LL;
    CHECK_EQ(prep_reconfig_answer(k, sid, "bad", NULL, NULL, 12345), ZRECONFIGINPROGRESS);
    k->last_seen = k->config;
    /* curConfigId: -1 or the last seen version. */
    CHECK_EQ(prep_reconfig_answer(k, sid, obs, NULL, NULL, 0x100000001LL), ZBADVERSION);
    /* Bad strings after the version check, then the new config's quorum (no
     * leader here: none is synced). */
    CHECK_EQ(prep_reconfig_answer(k, sid, "server.5=h:1:2:leader;3", NULL, NULL, 0x100000000LL), ZBADARGUMENTS);
    CHECK_EQ(prep_reconfig_answer(k, sid, "server.x=h:1:2;3", NULL, NULL, -1), ZMARSHALLINGERROR);
    /* kipper's bound on server ids (a difference from ZooKeeper: it could not
     * restart with one) comes after all of ZooKeeper's checks, the quorum's
     * here (test_keeper_reconfig.py has it after the caller's right). */
    CHECK_EQ(prep_reconfig_answer(k, sid, "server.256=h:1:2;3", NULL, NULL, -1), ZNEWCONFIGNOQUORUM);
    k->cfg.standalone_enabled = 1;   /* ZooKeeper's default: at least 2 voters */
    CHECK_EQ(prep_reconfig_answer(k, sid, NULL, "1,2", NULL, -1), ZBADARGUMENTS);
    k->cfg.standalone_enabled = 0;   /* then 1 is enough, and the quorum check answers */
    CHECK_EQ(prep_reconfig_answer(k, sid, NULL, "1,2", NULL, -1), ZNEWCONFIGNOQUORUM);
    CHECK_EQ(prep_reconfig_answer(k, sid, NULL, "1,2,3", NULL, -1), ZBADARGUMENTS);
    CHECK_EQ(prep_reconfig_answer(k, sid, obs, NULL, NULL, 0x100000000LL), ZNEWCONFIGNOQUORUM);
    /* Nothing was proposed by the refusals. */
    CHECK_EQ(k->last_seen.version, k->config.version);
    /* A truncated record. */
    uint8_t half[3] = {0, 0, 0};
    jute_in_t in;
    jute_in_init(&in, half, sizeof(half));
    prep_origin_t o = {sid, NULL, "unit"};
    txn_header_t hdr;
    txn_t txn;
    prep_write(k, &o, OP_RECONFIG, 1, &in, &hdr, &txn);
    CHECK(hdr.type == OP_ERROR && txn.err == ZMARSHALLINGERROR);
    txn_free(&txn);
    /* /zookeeper/config at start: the configuration's text, version -1, mzxid its version. */
    keeper_config_node_set(k, &k->config, 1234);
    const znode_t *n = tree_lookup(k->tree, "/zookeeper/config");
    CHECK(n && n->data_len == (int32_t)strlen(THREE) && memcmp(n->data, THREE, strlen(THREE)) == 0);
    CHECK(n && n->version == -1 && n->mzxid == 0x100000000LL && n->mtime == 1234 && n->aversion == -1);
    CHECK_EQ(tree_last_zxid(k->tree), 0);   /* not a transaction */
    tree_destroy(k->tree);
    session_tracker_destroy(k->sessions);
    watch_manager_destroy(k->watches);
    changes_destroy(&k->changes);
    free(k);
}

/* At start: zoo.cfg.bak as ZooKeeper writes it, a reconfig the log holds
 * beyond the files taken as pending (not as committed: the log may hold it
 * uncommitted), /zookeeper/config set from the committed configuration. */
static void test_ensemble_start(void)
{
    char dir[] = "/tmp/kipper-unit-dynstart-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char text[2048], err[512] = "";
    write_text(dir, "myid", "1\n");
    snprintf(text, sizeof(text), "dataDir=%s\nreconfigEnabled=true\n"
             "server.1=127.0.0.1:2888:3888:participant;0.0.0.0:2181\n"
             "server.2=127.0.0.1:2889:3889:participant;0.0.0.0:2182\n"
             "server.3=127.0.0.1:2890:3890:participant;0.0.0.0:2183\n", dir);
    write_text(dir, "zoo.cfg", text);
    keeper_t *k = calloc(1, sizeof(*k));
    CHECK_EQ(load_cfg(&k->cfg, dir, err, sizeof(err)), 0);
    k->watches = watch_manager_create(no_watch, NULL);
    k->tree = tree_create(k->watches);
    /* The log left a 4-member configuration in the tree. */
    ensemble_config_t logged;
    parse3(&logged);
    ensemble_member_t m = logged.members[2];
    m.id = 4;
    m.quorum_port = 2891;
    ensemble_config_put(&logged, &m);
    logged.version = 0x100000009LL;
    keeper_config_node_set(k, &logged, 1);
    keeper_ensemble_start(k);
    CHECK(k->config.n == 3 && k->config.version == 0 && k->reconfig_enabled);
    CHECK(k->last_seen.n == 4 && k->last_seen.version == 0x100000009LL);
    CHECK_STR(read_back(dir, "zoo.cfg.bak"), text);
    char *next = read_back(dir, "zoo.cfg.dynamic.next");
    CHECK(next && strstr(next, "server.4=") && strstr(next, "version=100000009"));
    const znode_t *n = tree_lookup(k->tree, "/zookeeper/config");
    CHECK(n && n->mzxid == 0 && n->version == -1 && n->data_len > 0 &&
          memmem(n->data, (size_t)n->data_len, "version=0", 9) != NULL);
    CHECK(read_back(dir, "zoo.cfg.dynamic.0") == NULL);   /* committed files come with the first leader */
    tree_destroy(k->tree);
    watch_manager_destroy(k->watches);
    free(k);
    CHECK_EQ(fs_remove_tree(dir), 0);
}

static int32_t prep_set_data_answer(keeper_t *k, int64_t session, const char *path)
{
    buf_t b;
    buf_init(&b);
    jute_put_string(&b, path);
    jute_put_buffer(&b, "v", 1);
    jute_put_int(&b, -1);
    jute_in_t in;
    jute_in_init(&in, b.data, b.len);
    prep_origin_t o = {session, NULL, "unit"};
    txn_header_t hdr;
    txn_t txn;
    prep_write(k, &o, OP_SET_DATA, 1, &in, &hdr, &txn);
    int32_t err = hdr.type == OP_ERROR ? txn.err : ZOK;
    txn_free(&txn);
    buf_free(&b);
    prep_rollback(k, hdr.zxid);   /* forget the change record: each call starts from the tree */
    return err;
}

/* skipACL=yes (ZooKeeper's zookeeper.skipACL): no ACL is checked. */
static void test_skip_acl(void)
{
    keeper_t *k = calloc(1, sizeof(*k));
    k->watches = watch_manager_create(no_watch, NULL);
    k->tree = tree_create(k->watches);
    k->sessions = session_tracker_create(1, 2000, 0);
    k->next_zxid = 1;
    int64_t sid = 0x0100000000000001LL;
    session_add(k->sessions, sid, 10000, 0);
    CHECK_EQ(prep_set_data_answer(k, sid, "/zookeeper/config"), ZNOAUTH);   /* world may only read it */
    k->cfg.skip_acl = 1;
    CHECK_EQ(prep_set_data_answer(k, sid, "/zookeeper/config"), ZOK);
    tree_destroy(k->tree);
    session_tracker_destroy(k->sessions);
    watch_manager_destroy(k->watches);
    changes_destroy(&k->changes);
    free(k);
}

static int config_events;

static void count_config_events(void *watcher, int32_t event_type, const char *path, void *ctx)
{
    (void)watcher;
    (void)ctx;
    if (event_type == EVENT_NODE_DATA_CHANGED && strcmp(path, "/zookeeper/config") == 0)
        config_events++;
}

/* A reconfig txn as the log holds it (TxnHeader type 16 + SetDataTxn), read
 * back and applied: /zookeeper/config gets the new text with ZooKeeper's stat,
 * a getData/getConfig watch on it fires, and the configuration reads back
 * from the txn with the txn's zxid as its version. */
static void test_reconfig_txn_log_form_and_apply(void)
{
    watch_manager_t *wm = watch_manager_create(count_config_events, NULL);
    tree_t *tree = tree_create(wm);
    ensemble_config_t next;
    parse3(&next);
    next.version = 0x100000009LL;
    char text[2048];
    size_t len = ensemble_config_format(&next, text, sizeof(text));
    txn_header_t hdr = {0x0100000000000001LL, 7, 0x100000009LL, 1700000000000LL, OP_RECONFIG};
    txn_t txn;
    txn_init(&txn, OP_RECONFIG);
    txn.path = strdup("/zookeeper/config");
    txn.data = malloc(len);
    memcpy(txn.data, text, len);
    txn.data_len = (int32_t)len;
    txn.version = -1;
    buf_t b;
    buf_init(&b);
    CHECK_EQ(txn_header_write(&b, &hdr), 0);
    CHECK_EQ(txn_body_write(&b, &txn), 0);
    /* type 16, then path, data, version -1 */
    CHECK(b.len > 32 && b.data[31] == 16);   /* TxnHeader: clientId cxid zxid time type */
    CHECK(memcmp(b.data + b.len - 4, "\xff\xff\xff\xff", 4) == 0);
    jute_in_t in;
    jute_in_init(&in, b.data, b.len);
    txn_header_t h2;
    txn_t t2;
    CHECK_EQ(txn_header_read(&in, &h2), 0);
    CHECK_EQ(txn_body_read(&in, h2.type, &t2), 0);
    CHECK(h2.type == OP_RECONFIG && t2.version == -1 && t2.data_len == (int32_t)len);
    ensemble_config_t back;
    CHECK_EQ(keeper_config_from_txn(&h2, &t2, &back), 0);
    CHECK(ensemble_config_same_members(&back, &next) && back.version == 0x100000009LL);
    int dummy;
    CHECK_EQ(watch_add(wm, WATCH_TABLE_DATA, "/zookeeper/config", &dummy, WATCH_MODE_STANDARD), 0);
    txn_result_t r;
    CHECK_EQ(tree_apply(tree, &h2, &t2, &r), ZOK);
    CHECK(r.has_stat && r.stat.version == -1 && r.stat.mzxid == 0x100000009LL && r.stat.aversion == -1 &&
          r.stat.czxid == 0 && r.stat.data_length == (int32_t)len);
    txn_result_free(&r);
    CHECK_EQ(config_events, 1);
    const znode_t *n = tree_lookup(tree, "/zookeeper/config");
    CHECK(n && n->data_len == (int32_t)len && memcmp(n->data, text, len) == 0);
    /* Another txn type with that path is not a configuration. */
    h2.type = OP_SET_DATA;
    CHECK_EQ(keeper_config_from_txn(&h2, &t2, &back), -1);
    txn_free(&t2);
    txn_free(&txn);
    buf_free(&b);
    tree_destroy(tree);
    watch_manager_destroy(wm);
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
    RUN(test_zoo_cfg_dynamic_file);
    RUN(test_config_store_files);
    RUN(test_prep_reconfig_checks_in_zookeepers_order);
    RUN(test_reconfig_txn_log_form_and_apply);
    RUN(test_ensemble_start);
    RUN(test_skip_acl);
}
