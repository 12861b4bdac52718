/* test_acl.c -- ACL checks, fixupACL, digest identities, ip matching. */
#include <stdlib.h>
#include <string.h>

#include "keeper/data/acl.h"
#include "keeper/data/proto.h"
#include "suites.h"
#include "unit.h"

/* echo -n "user:password" | openssl sha1 -binary | base64 */
#define USER_PASSWORD_ID "user:tpUq/4Pn5A64fVZyQ0gOJ8ZWqkY="
/* ZooKeeper's documentation example for superDigest */
#define SUPER_ID "super:g9oN2HttPfn8MMWJZ2r45Np/LIA="
#define BOB_ID "bob:fyVmFCwVbTJYrznoSu1koqYEYF0="

/* A one-entry ACL on the stack; the strings are not owned, never free it. */
static acl_list_t one_acl(acl_t *entry, int32_t perms, const char *scheme, const char *id)
{
    entry->perms = perms;
    entry->scheme = (char *)scheme;
    entry->id = (char *)id;
    acl_list_t l = {entry, 1};
    return l;
}

/* fixupACL of a one-entry request. */
static int fixup_one(int32_t perms, const char *scheme, const char *id, const auth_set_t *ids, acl_list_t *out)
{
    acl_t e;
    acl_list_t req = one_acl(&e, perms, scheme, id);
    return acl_fixup(&req, ids, out);
}

static int valid_id(const char *scheme, const char *id)
{
    auth_set_t none;
    auth_set_init(&none);
    acl_list_t out;
    int rc = fixup_one(PERM_ALL, scheme, id, &none, &out);
    if (rc == ZOK)
        CHECK(out.count == 1 && strcmp(out.items[0].id, id) == 0);
    acl_list_free(&out);
    return rc == ZOK;
}

static void test_acl_auth_set(void)
{
    auth_set_t s;
    auth_set_init(&s);
    CHECK_EQ(auth_set_add(&s, "ip", "127.0.0.1"), 0);
    CHECK_EQ(auth_set_add(&s, "digest", BOB_ID), 0);
    CHECK_EQ(auth_set_add(&s, "digest", BOB_ID), 0);
    CHECK_EQ(auth_set_add(&s, "ip", NULL), 0);   /* acl_authenticate("ip") gives no id */
    CHECK_EQ(s.count, 2);
    CHECK_STR(s.items[1].id, BOB_ID);
    auth_set_free(&s);
    CHECK_EQ(s.count, 0);
}

static void test_acl_check_world_and_perms(void)
{
    static const int32_t perms[] = {PERM_READ, PERM_WRITE, PERM_CREATE, PERM_DELETE, PERM_ADMIN};
    auth_set_t ids;
    auth_set_init(&ids);
    CHECK_EQ(auth_set_add(&ids, "ip", "10.1.2.3"), 0);
    acl_t e;
    for (int i = 0; i < 5; i++) {
        acl_list_t acl = one_acl(&e, perms[i], "world", "anyone");
        for (int j = 0; j < 5; j++)
            CHECK_EQ(acl_check(&acl, perms[j], &ids), i == j ? ZOK : ZNOAUTH);
    }
    acl_list_t all = one_acl(&e, PERM_ALL, "world", "anyone");
    for (int j = 0; j < 5; j++)
        CHECK_EQ(acl_check(&all, perms[j], NULL), ZOK);
    acl_list_t other = one_acl(&e, PERM_ALL, "world", "someone");   /* world but not anyone */
    CHECK_EQ(acl_check(&other, PERM_READ, &ids), ZNOAUTH);
    acl_list_t empty = {NULL, 0};
    CHECK_EQ(acl_check(&empty, PERM_ADMIN, &ids), ZOK);
    CHECK_EQ(acl_check(NULL, PERM_ADMIN, &ids), ZOK);
    auth_set_free(&ids);
}

static void test_acl_check_digest_ip_super(void)
{
    auth_set_t ids;
    auth_set_init(&ids);
    CHECK_EQ(auth_set_add(&ids, "ip", "10.1.2.3"), 0);
    acl_t e[3];
    e[0] = (acl_t){PERM_READ, "digest", USER_PASSWORD_ID};
    e[1] = (acl_t){PERM_WRITE, "ip", "10.0.0.0/8"};
    e[2] = (acl_t){PERM_ALL, "auth", ""};   /* never stored by fixup; matches nothing */
    acl_list_t acl = {e, 3};
    CHECK_EQ(acl_check(&acl, PERM_READ, &ids), ZNOAUTH);
    CHECK_EQ(acl_check(&acl, PERM_WRITE, &ids), ZOK);
    CHECK_EQ(acl_check(&acl, PERM_ADMIN, &ids), ZNOAUTH);
    CHECK_EQ(auth_set_add(&ids, "digest", BOB_ID), 0);
    CHECK_EQ(acl_check(&acl, PERM_READ, &ids), ZNOAUTH);
    CHECK_EQ(auth_set_add(&ids, "digest", USER_PASSWORD_ID), 0);
    CHECK_EQ(acl_check(&acl, PERM_READ, &ids), ZOK);

    auth_set_t other;   /* another address, no digest */
    auth_set_init(&other);
    CHECK_EQ(auth_set_add(&other, "ip", "11.1.2.3"), 0);
    CHECK_EQ(acl_check(&acl, PERM_WRITE, &other), ZNOAUTH);
    CHECK_EQ(auth_set_add(&other, "super", ""), 0);   /* superDigest user: everything */
    CHECK_EQ(acl_check(&acl, PERM_ADMIN, &other), ZOK);
    CHECK_EQ(acl_check(&acl, PERM_DELETE, &other), ZOK);
    auth_set_free(&ids);
    auth_set_free(&other);
}

static void test_acl_fixup_world(void)
{
    acl_list_t out;
    CHECK_EQ(fixup_one(PERM_READ, "world", "anyone", NULL, &out), ZOK);
    CHECK(out.count == 1 && out.items[0].perms == PERM_READ);
    CHECK_STR(out.items[0].scheme, "world");
    CHECK_STR(out.items[0].id, "anyone");
    acl_list_free(&out);
    CHECK_EQ(fixup_one(PERM_ALL, "world", "nobody", NULL, &out), ZINVALIDACL);
    CHECK(out.count == 0 && out.items == NULL);
    CHECK_EQ(fixup_one(PERM_ALL, "World", "anyone", NULL, &out), ZINVALIDACL);
    /* perms are not range-checked by ZooKeeper */
    CHECK_EQ(fixup_one(0x40, "world", "anyone", NULL, &out), ZOK);
    CHECK(out.count == 1 && out.items[0].perms == 0x40);
    acl_list_free(&out);
}

static void test_acl_fixup_auth(void)
{
    auth_set_t ids;
    auth_set_init(&ids);
    acl_list_t out;
    CHECK_EQ(fixup_one(PERM_ALL, "auth", "", &ids, &out), ZINVALIDACL);
    CHECK_EQ(fixup_one(PERM_ALL, "auth", "", NULL, &out), ZINVALIDACL);
    CHECK_EQ(auth_set_add(&ids, "ip", "127.0.0.1"), 0);   /* ip does not authenticate */
    CHECK_EQ(auth_set_add(&ids, "super", ""), 0);         /* super has no provider */
    CHECK_EQ(fixup_one(PERM_ALL, "auth", "", &ids, &out), ZINVALIDACL);
    CHECK_EQ(auth_set_add(&ids, "digest", USER_PASSWORD_ID), 0);
    CHECK_EQ(auth_set_add(&ids, "digest", BOB_ID), 0);
    CHECK_EQ(fixup_one(PERM_READ | PERM_WRITE, "auth", "ignored", &ids, &out), ZOK);
    CHECK_EQ(out.count, 2);
    if (out.count == 2) {
        CHECK(out.items[0].perms == (PERM_READ | PERM_WRITE) && out.items[1].perms == (PERM_READ | PERM_WRITE));
        CHECK_STR(out.items[0].scheme, "digest");
        CHECK_STR(out.items[0].id, USER_PASSWORD_ID);
        CHECK_STR(out.items[1].id, BOB_ID);
    }
    acl_list_free(&out);
    auth_set_free(&ids);
}

static void test_acl_fixup_digest_ids(void)
{
    CHECK(valid_id("digest", USER_PASSWORD_ID));
    CHECK(valid_id("digest", "user:anything"));   /* the hash itself is not checked */
    CHECK(valid_id("digest", "user:hash:"));      /* Java's split drops trailing empties */
    CHECK(valid_id("digest", ":hash"));
    CHECK(!valid_id("digest", "user"));
    CHECK(!valid_id("digest", "user:"));
    CHECK(!valid_id("digest", "user::"));
    CHECK(!valid_id("digest", "a:b:c"));
    CHECK(!valid_id("digest", "a::b"));
    CHECK(!valid_id("digest", ":"));
    CHECK(!valid_id("digest", ""));
}

static void test_acl_fixup_ip_ids(void)
{
    CHECK(valid_id("ip", "127.0.0.1"));
    CHECK(valid_id("ip", "10.0.0.0/8"));
    CHECK(valid_id("ip", "0.0.0.0/0"));
    CHECK(valid_id("ip", "1.2.3.4/32"));
    CHECK(valid_id("ip", "010.001.0.1"));    /* Integer.parseInt: leading zeros, decimal */
    CHECK(valid_id("ip", "+1.2.3.4"));       /* ... and a sign */
    CHECK(valid_id("ip", "1.2.3.4/-0"));
    CHECK(valid_id("ip", "::1"));
    CHECK(valid_id("ip", "fe80::/10"));
    CHECK(valid_id("ip", "2001:db8::1/128"));
    CHECK(!valid_id("ip", "1.2.3"));
    CHECK(!valid_id("ip", "1.2.3.4.5"));
    CHECK(!valid_id("ip", "1.2.3.4."));
    CHECK(!valid_id("ip", "1.2..4"));
    CHECK(!valid_id("ip", "1.2.3.256"));
    CHECK(!valid_id("ip", "1.2.3.-1"));
    CHECK(!valid_id("ip", "1.2.3.4/33"));
    CHECK(!valid_id("ip", "1.2.3.4/"));
    CHECK(!valid_id("ip", "1.2.3.4/8/9"));
    CHECK(!valid_id("ip", "1.2.3.4/x"));
    CHECK(!valid_id("ip", "1.2.3.4 "));
    CHECK(!valid_id("ip", "a.b.c.d"));
    CHECK(!valid_id("ip", "localhost"));
    CHECK(!valid_id("ip", ""));
    CHECK(!valid_id("ip", "/8"));
    CHECK(!valid_id("ip", "::1/129"));
    CHECK(!valid_id("ip", "::g"));
    CHECK(!valid_id("ip", "1.2.3.4/99999999999999999999"));
}

static void test_acl_fixup_rejects(void)
{
    acl_list_t out;
    acl_list_t empty = {NULL, 0};
    CHECK_EQ(acl_fixup(&empty, NULL, &out), ZINVALIDACL);
    CHECK_EQ(acl_fixup(NULL, NULL, &out), ZINVALIDACL);
    CHECK_EQ(fixup_one(PERM_ALL, "sasl", "user", NULL, &out), ZINVALIDACL);
    CHECK_EQ(fixup_one(PERM_ALL, "super", "", NULL, &out), ZINVALIDACL);
    CHECK_EQ(fixup_one(PERM_ALL, "x509", "CN=a", NULL, &out), ZINVALIDACL);
    CHECK_EQ(fixup_one(PERM_ALL, NULL, "anyone", NULL, &out), ZINVALIDACL);
    CHECK_EQ(fixup_one(PERM_ALL, "world", NULL, NULL, &out), ZINVALIDACL);
    /* one bad entry spoils the whole list, and nothing leaks */
    acl_t e[2] = {{PERM_ALL, "world", "anyone"}, {PERM_ALL, "ip", "bad"}};
    acl_list_t req = {e, 2};
    CHECK_EQ(acl_fixup(&req, NULL, &out), ZINVALIDACL);
    CHECK(out.count == 0 && out.items == NULL);
}

static void test_acl_fixup_dedupe(void)
{
    auth_set_t ids;
    auth_set_init(&ids);
    CHECK_EQ(auth_set_add(&ids, "digest", BOB_ID), 0);
    acl_t e[6] = {
        {PERM_ALL, "world", "anyone"}, {PERM_READ, "ip", "10.0.0.0/8"}, {PERM_ALL, "world", "anyone"},
        {PERM_READ, "world", "anyone"}, {PERM_ALL, "digest", BOB_ID}, {PERM_ALL, "auth", ""},
    };
    acl_list_t req = {e, 6}, out;
    CHECK_EQ(acl_fixup(&req, &ids, &out), ZOK);
    /* the second world:anyone:31 goes; auth's expansion is not deduplicated again */
    CHECK_EQ(out.count, 5);
    if (out.count == 5) {
        CHECK(out.items[0].perms == PERM_ALL && strcmp(out.items[0].scheme, "world") == 0);
        CHECK(out.items[1].perms == PERM_READ && strcmp(out.items[1].scheme, "ip") == 0);
        CHECK(out.items[2].perms == PERM_READ && strcmp(out.items[2].scheme, "world") == 0);
        CHECK_STR(out.items[3].id, BOB_ID);
        CHECK_STR(out.items[4].id, BOB_ID);
        CHECK_STR(out.items[4].scheme, "digest");
    }
    acl_list_free(&out);

    /* a long list of one repeated entry collapses to one */
    acl_t many[1000];
    for (int i = 0; i < 1000; i++)
        many[i] = (acl_t){PERM_READ, "ip", i % 2 ? "1.2.3.4" : "5.6.7.8"};
    acl_list_t req2 = {many, 1000};
    CHECK_EQ(acl_fixup(&req2, NULL, &out), ZOK);
    CHECK_EQ(out.count, 2);
    if (out.count == 2) {
        CHECK_STR(out.items[0].id, "5.6.7.8");
        CHECK_STR(out.items[1].id, "1.2.3.4");
    }
    acl_list_free(&out);
    auth_set_free(&ids);
}

static void test_acl_digest_identity(void)
{
    char *id = acl_digest_identity("user:password", 13);
    CHECK_STR(id, USER_PASSWORD_ID);
    free(id);
    id = acl_digest_identity("super:superpw", 13);
    CHECK_STR(id, SUPER_ID);
    free(id);
    id = acl_digest_identity("user", 4);   /* no colon: the whole text is the user */
    CHECK_STR(id, "user:Et6pb+wgWTVmq3VpLJlJWWgzrck=");
    free(id);
    id = acl_digest_identity("", 0);
    CHECK_STR(id, ":2jmj7l5rSw0yVb/vlWAYkK/YBwk=");
    free(id);
}

static void test_acl_authenticate(void)
{
    char *id = (char *)1;
    CHECK_EQ(acl_authenticate("digest", (const uint8_t *)"user:password", 13, &id), ZOK);
    CHECK_STR(id, USER_PASSWORD_ID);
    free(id);
    CHECK_EQ(acl_authenticate("digest", (const uint8_t *)"bob:secret", 10, &id), ZOK);
    CHECK_STR(id, BOB_ID);
    free(id);
    CHECK_EQ(acl_authenticate("ip", (const uint8_t *)"x", 1, &id), ZOK);
    CHECK(id == NULL);
    CHECK_EQ(acl_authenticate("sasl", (const uint8_t *)"x", 1, &id), ZAUTHFAILED);
    CHECK(id == NULL);
    CHECK_EQ(acl_authenticate("world", (const uint8_t *)"anyone", 6, &id), ZAUTHFAILED);
    CHECK_EQ(acl_authenticate("digest", NULL, -1, &id), ZAUTHFAILED);
    /* malformed UTF-8 is hashed as Java's String would have it: U+FFFD */
    CHECK_EQ(acl_authenticate("digest", (const uint8_t *)"u:\xff", 3, &id), ZOK);
    CHECK_STR(id, "u:NP+S9gihaPOxs49p+sWDO0/R0ac=");
    free(id);
    CHECK_EQ(acl_authenticate("digest", (const uint8_t *)"u:\xef\xbf\xbd", 5, &id), ZOK);
    CHECK_STR(id, "u:NP+S9gihaPOxs49p+sWDO0/R0ac=");
    free(id);
    /* a NUL is fine in the password, not in the user name */
    CHECK_EQ(acl_authenticate("digest", (const uint8_t *)"u:p\0w", 5, &id), ZOK);
    CHECK(id != NULL && strncmp(id, "u:", 2) == 0);
    free(id);
    CHECK_EQ(acl_authenticate("digest", (const uint8_t *)"u\0x:pw", 6, &id), ZAUTHFAILED);
    CHECK(id == NULL);
}

static void test_acl_ip_matches_v4(void)
{
    CHECK(acl_ip_matches("127.0.0.1", "127.0.0.1"));
    CHECK(!acl_ip_matches("127.0.0.1", "127.0.0.2"));
    CHECK(acl_ip_matches("10.0.0.0/8", "10.255.1.2"));
    CHECK(!acl_ip_matches("10.0.0.0/8", "11.0.0.1"));
    CHECK(acl_ip_matches("10.1.2.99/24", "10.1.2.3"));   /* the ACL's host bits are masked too */
    CHECK(!acl_ip_matches("10.1.2.0/24", "10.1.3.3"));
    CHECK(acl_ip_matches("10.128.0.0/9", "10.200.1.1"));
    CHECK(!acl_ip_matches("10.128.0.0/9", "10.1.1.1"));
    CHECK(acl_ip_matches("0.0.0.0/0", "192.168.7.7"));
    CHECK(acl_ip_matches("1.2.3.4/32", "1.2.3.4"));
    CHECK(!acl_ip_matches("1.2.3.4/32", "1.2.3.5"));
    CHECK(acl_ip_matches("010.0.0.1", "10.0.0.1"));
    CHECK(acl_ip_matches("10.0.0.0/8", "::ffff:10.1.2.3"));   /* IPv4-mapped client */
    CHECK(!acl_ip_matches("10.0.0.0/8", "::1"));
    CHECK(!acl_ip_matches("10.0.0.0/33", "10.0.0.0"));
    CHECK(!acl_ip_matches("garbage", "10.0.0.0"));
    CHECK(!acl_ip_matches("10.0.0.0", "garbage"));
    CHECK(!acl_ip_matches(NULL, "10.0.0.0"));
}

static void test_acl_ip_matches_v6(void)
{
    CHECK(acl_ip_matches("::1", "::1"));
    CHECK(acl_ip_matches("::1", "0:0:0:0:0:0:0:1"));   /* Java's spelling of the same address */
    CHECK(!acl_ip_matches("::1", "::2"));
    CHECK(acl_ip_matches("fe80::/10", "fe80::1234"));
    CHECK(acl_ip_matches("fe80::/10", "febf::1"));
    CHECK(!acl_ip_matches("fe80::/10", "fec0::1"));
    CHECK(acl_ip_matches("2001:db8::/32", "2001:db8:ffff::1"));
    CHECK(!acl_ip_matches("2001:db8::/32", "2001:db9::1"));
    CHECK(acl_ip_matches("::/0", "2001:db8::1"));
    CHECK(!acl_ip_matches("::/0", "10.0.0.1"));   /* families never mix */
    CHECK(!acl_ip_matches("::1/129", "::1"));
}

void suite_acl(void)
{
    RUN(test_acl_auth_set);
    RUN(test_acl_check_world_and_perms);
    RUN(test_acl_check_digest_ip_super);
    RUN(test_acl_fixup_world);
    RUN(test_acl_fixup_auth);
    RUN(test_acl_fixup_digest_ids);
    RUN(test_acl_fixup_ip_ids);
    RUN(test_acl_fixup_rejects);
    RUN(test_acl_fixup_dedupe);
    RUN(test_acl_digest_identity);
    RUN(test_acl_authenticate);
    RUN(test_acl_ip_matches_v4);
    RUN(test_acl_ip_matches_v6);
}
