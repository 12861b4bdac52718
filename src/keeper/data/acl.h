/* acl.h -- ZooKeeper ACLs: permission checks and the schemes world, auth,
 * digest and ip (ZooKeeper's PrepRequestProcessor.checkACL/fixupACL and the
 * Digest/IP authentication providers). */
#ifndef KIPPER_KEEPER_ACL_H
#define KIPPER_KEEPER_ACL_H

#include <stddef.h>
#include <stdint.h>

#include "proto.h"

/* The identities a connection has proven: ("ip", "127.0.0.1") from the
 * socket, plus ("digest", "user:hash") per successful addAuth. Owned strings. */
typedef struct {
    char *scheme;
    char *id;
} auth_id_t;

typedef struct {
    auth_id_t *items;
    int count;
} auth_set_t;

/* Most distinct identities one connection may hold (a bound ZooKeeper lacks). */
#define AUTH_SET_MAX 1024

void auth_set_init(auth_set_t *set);
void auth_set_free(auth_set_t *set);
/* Add (scheme, id) unless already present; a NULL scheme or id adds nothing
 * (so acl_authenticate's output can be passed straight in). 0, or -1
 * (memory, or AUTH_SET_MAX reached). */
int auth_set_add(auth_set_t *set, const char *scheme, const char *id);

/* ZOK if ids grant perm under acl, else ZNOAUTH. An empty ACL grants all;
 * ("super", ...) identities pass everything, as in ZooKeeper. */
int acl_check(const acl_list_t *acl, int32_t perm, const auth_set_t *ids);

/* Validate a requested ACL and expand it as ZooKeeper 3.8's fixupACL does:
 * exact duplicates are dropped first (the first stays); "world" must be
 * "anyone"; each "auth" entry becomes one entry per digest identity the
 * connection has, INVALIDACL if none (expansions are not deduplicated again);
 * "digest" ids must split on ':' into exactly two parts as Java's
 * split(":") counts them ("u:h" and "u:h:" pass, "u:", "a:b:c" fail) -- the
 * hash itself is not checked; "ip" ids must be an address with an optional
 * /bits (see acl_ip_matches); unknown schemes and an empty or null list are
 * INVALIDACL. Like ZooKeeper, perms are not range-checked. At most 65536
 * entries come out (INVALIDACL beyond).
 * Returns ZOK with *out filled (owned), ZINVALIDACL, or ZSYSTEMERROR (memory);
 * *out is empty unless ZOK. */
int acl_fixup(const acl_list_t *requested, const auth_set_t *ids, acl_list_t *out);

/* addAuth: for scheme "digest" with auth "user:password", the identity is
 * "user:" + base64(sha1("user:password")) (user = text before the first ':',
 * all of it if none -- ZooKeeper accepts that too; malformed UTF-8 is first
 * replaced by U+FFFD as Java's String does). Returns ZOK with a malloc'd id;
 * for "ip", ZOK with *id_out NULL (ZooKeeper just re-adds the socket's
 * address); ZAUTHFAILED for any other scheme, null auth data, or a NUL byte
 * in the user name; ZSYSTEMERROR if out of memory. */
int acl_authenticate(const char *scheme, const uint8_t *auth, int32_t auth_len, char **id_out);

/* The digest identity for "user:password" (also used for superDigest).
 * Malloc'd, NULL if out of memory. */
char *acl_digest_identity(const char *user_colon_password, size_t len);

/* Does an ip ACL id ("10.0.0.0/8", "127.0.0.1", "::1", "fe80::/10") match
 * this address? IPv4 is parsed exactly as ZooKeeper's IPAuthenticationProvider
 * does (four '.'-separated Integer.parseInt values 0..255, so "010.0.0.1" and
 * "+1.0.0.1" are valid); bits are Integer.parseInt in 0..32 (0..128 for v6).
 * IPv6 (inet_pton forms) is an extension: ZooKeeper 3.8.0 rejects IPv6 ip ids
 * as INVALIDACL. An IPv4-mapped client address (::ffff:a.b.c.d) counts as
 * IPv4, as Java reports it. A v4 ACL never matches a v6 address. 1 or 0. */
int acl_ip_matches(const char *acl_id, const char *address);

#endif
