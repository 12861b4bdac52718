/* acl.c -- ZooKeeper ACLs. See acl.h.
 *
 * The rules are ZooKeeper 3.8's: PrepRequestProcessor.fixupACL and
 * removeDuplicates, ZooKeeperServer.checkACL, and the digest and ip
 * authentication providers, including their exact idea of a valid id. */
#include "acl.h"
#include "base/jstring.h"

#include <arpa/inet.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

/* fixupACL's output is bounded so an "auth" entry times many identities
 * cannot blow up (ZooKeeper has no bound; no real ACL comes close). */
#define ACL_FIXUP_MAX_ENTRIES 65536

static int str_eq(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

/* ---- identity sets ---- */

void auth_set_init(auth_set_t *set)
{
    set->items = NULL;
    set->count = 0;
}

void auth_set_free(auth_set_t *set)
{
    for (int i = 0; i < set->count; i++) {
        free(set->items[i].scheme);
        free(set->items[i].id);
    }
    free(set->items);
    auth_set_init(set);
}

int auth_set_add(auth_set_t *set, const char *scheme, const char *id)
{
    if (!scheme || !id)
        return 0;   /* nothing to add: acl_authenticate's "ip" answer */
    for (int i = 0; i < set->count; i++)
        if (str_eq(set->items[i].scheme, scheme) && str_eq(set->items[i].id, id))
            return 0;
    if (set->count >= AUTH_SET_MAX)
        return -1;
    auth_id_t *items = realloc(set->items, ((size_t)set->count + 1) * sizeof(*items));
    if (!items)
        return -1;
    set->items = items;
    char *s = strdup(scheme), *i = strdup(id);
    if (!s || !i) {
        free(s);
        free(i);
        return -1;
    }
    set->items[set->count].scheme = s;
    set->items[set->count].id = i;
    set->count++;
    return 0;
}

/* ---- Java's Integer.parseInt, for ip ids ---- */

/* Integer.parseInt(s) restricted to [0, max]: an optional sign, then one or
 * more ASCII digits and nothing else. "-0" and "+7" pass, as in Java. (Java
 * also takes non-ASCII Unicode digits; such ids are refused here.) */
static int parse_java_int(const char *s, size_t len, int max, int *out)
{
    size_t i = 0;
    int negative = 0;
    if (len > 0 && (s[0] == '+' || s[0] == '-')) {
        negative = s[0] == '-';
        i = 1;
    }
    if (i == len)
        return -1;
    long v = 0;
    for (; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        if (v <= max)   /* saturate: anything past max is refused anyway */
            v = v * 10 + (s[i] - '0');
    }
    if (negative && v != 0)
        return -1;
    if (v > max)
        return -1;
    *out = (int)v;
    return 0;
}

/* ---- ip addresses ---- */

typedef struct {
    uint8_t bytes[16];
    int len;   /* 4 or 16 */
} ip_addr_t;

/* ZooKeeper's v4addr2Bytes: split on '.' keeping empty parts, exactly four
 * parts, each Integer.parseInt in 0..255. */
static int parse_v4(const char *s, size_t len, ip_addr_t *out)
{
    size_t start = 0;
    int part = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i < len && s[i] != '.')
            continue;
        int v;
        if (part == 4 || parse_java_int(s + start, i - start, 255, &v) < 0)
            return -1;
        out->bytes[part++] = (uint8_t)v;
        start = i + 1;
    }
    if (part != 4)
        return -1;
    out->len = 4;
    return 0;
}

/* An IPv6 address in any form inet_pton takes (ZooKeeper 3.8.0 itself only
 * knows IPv4; see acl.h). */
static int parse_v6(const char *s, size_t len, ip_addr_t *out)
{
    char text[INET6_ADDRSTRLEN + 1];
    if (len == 0 || len >= sizeof(text) || memchr(s, ':', len) == NULL)
        return -1;
    memcpy(text, s, len);
    text[len] = 0;
    if (inet_pton(AF_INET6, text, out->bytes) != 1)
        return -1;
    out->len = 16;
    return 0;
}

static int parse_addr(const char *s, size_t len, ip_addr_t *out)
{
    return parse_v4(s, len, out) == 0 || parse_v6(s, len, out) == 0 ? 0 : -1;
}

/* An ip ACL id: address, optionally "/bits" (split on the first '/'; bits
 * Integer.parseInt in 0..address bits). */
static int parse_ip_acl(const char *id, ip_addr_t *addr, int *bits)
{
    const char *slash = strchr(id, '/');
    size_t addr_len = slash ? (size_t)(slash - id) : strlen(id);
    if (parse_addr(id, addr_len, addr) < 0)
        return -1;
    *bits = addr->len * 8;
    if (slash && parse_java_int(slash + 1, strlen(slash + 1), addr->len * 8, bits) < 0)
        return -1;
    return 0;
}

static void mask_addr(ip_addr_t *a, int bits)
{
    for (int i = 0; i < a->len; i++) {
        int keep = bits - i * 8;   /* bits of this byte to keep */
        if (keep <= 0)
            a->bytes[i] = 0;
        else if (keep < 8)
            a->bytes[i] &= (uint8_t)(0xFFu << (8 - keep));
    }
}

/* The connection's own address: an IPv4-mapped IPv6 address counts as the
 * IPv4 address, as Java's InetAddress reports it. */
static int parse_client_addr(const char *address, ip_addr_t *out)
{
    static const uint8_t v4_mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF};
    if (parse_addr(address, strlen(address), out) < 0)
        return -1;
    if (out->len == 16 && memcmp(out->bytes, v4_mapped, 12) == 0) {
        memmove(out->bytes, out->bytes + 12, 4);
        out->len = 4;
    }
    return 0;
}

int acl_ip_matches(const char *acl_id, const char *address)
{
    ip_addr_t acl, client;
    int bits;
    if (!acl_id || !address || parse_ip_acl(acl_id, &acl, &bits) < 0 || parse_client_addr(address, &client) < 0)
        return 0;
    if (acl.len != client.len)
        return 0;
    mask_addr(&acl, bits);
    mask_addr(&client, bits);
    return memcmp(acl.bytes, client.bytes, (size_t)acl.len) == 0;
}

static int ip_id_valid(const char *id)
{
    ip_addr_t addr;
    int bits;
    return parse_ip_acl(id, &addr, &bits) == 0;
}

/* ---- digest ---- */

/* DigestAuthenticationProvider.isValid: id.split(":") has exactly two parts.
 * Java's split drops trailing empty parts, so "u:h:" is valid, "u:" is not. */
static int digest_id_valid(const char *id)
{
    size_t len = strlen(id);
    while (len > 0 && id[len - 1] == ':')
        len--;
    if (len == 0)
        return 0;
    size_t colons = 0;
    for (size_t i = 0; i < len; i++)
        colons += id[i] == ':';
    return colons == 1;
}

char *acl_digest_identity(const char *user_colon_password, size_t len)
{
    unsigned char sha1[EVP_MAX_MD_SIZE];
    unsigned int sha1_len = 0;
    if (!user_colon_password || !EVP_Digest(user_colon_password, len, sha1, &sha1_len, EVP_sha1(), NULL))
        return NULL;
    const char *colon = memchr(user_colon_password, ':', len);
    size_t user_len = colon ? (size_t)(colon - user_colon_password) : len;
    size_t b64_len = 4 * ((sha1_len + 2) / 3);
    char *id = malloc(user_len + 1 + b64_len + 1);
    if (!id)
        return NULL;
    memcpy(id, user_colon_password, user_len);
    id[user_len] = ':';
    EVP_EncodeBlock((unsigned char *)id + user_len + 1, sha1, (int)sha1_len);   /* NUL-terminates */
    return id;
}

int acl_authenticate(const char *scheme, const uint8_t *auth, int32_t auth_len, char **id_out)
{
    *id_out = NULL;
    if (str_eq(scheme, "ip"))
        return ZOK;   /* ZooKeeper re-adds the socket's address, which the set already has */
    if (!str_eq(scheme, "digest") || !auth || auth_len < 0)
        return ZAUTHFAILED;
    size_t len;
    /* Java turns the auth bytes into a String before hashing its UTF-8
     * bytes, so ill-formed sequences are hashed as U+FFFD. */
    char *text = jstring_clean((const char *)auth, (size_t)auth_len, &len);
    if (!text)
        return ZSYSTEMERROR;
    /* The user name becomes a C string; a NUL in it cannot be represented. */
    const char *colon = memchr(text, ':', len);
    size_t user_len = colon ? (size_t)(colon - text) : len;
    if (memchr(text, 0, user_len)) {
        free(text);
        return ZAUTHFAILED;
    }
    *id_out = acl_digest_identity(text, len);
    free(text);
    return *id_out ? ZOK : ZSYSTEMERROR;
}

/* ---- checkACL ---- */

static int id_matches(const acl_t *a, const auth_id_t *who)
{
    if (!str_eq(a->scheme, who->scheme))
        return 0;
    if (str_eq(a->scheme, "digest"))
        return str_eq(a->id, who->id);
    if (str_eq(a->scheme, "ip"))
        return acl_ip_matches(a->id, who->id);
    return 0;   /* no provider for the scheme */
}

int acl_check(const acl_list_t *acl, int32_t perm, const auth_set_t *ids)
{
    if (!acl || acl->count <= 0)
        return ZOK;
    int nids = ids ? ids->count : 0;
    for (int i = 0; i < nids; i++)
        if (str_eq(ids->items[i].scheme, "super"))
            return ZOK;
    for (int32_t k = 0; k < acl->count; k++) {
        const acl_t *a = &acl->items[k];
        if ((a->perms & perm) == 0)
            continue;
        if (str_eq(a->scheme, "world") && str_eq(a->id, "anyone"))
            return ZOK;
        for (int i = 0; i < nids; i++)
            if (id_matches(a, &ids->items[i]))
                return ZOK;
    }
    return ZNOAUTH;
}

/* ---- fixupACL ---- */

static int str_cmp(const char *a, const char *b)
{
    if (!a || !b)
        return (a != NULL) - (b != NULL);
    return strcmp(a, b);
}

/* Orders equal ACL entries by position, so the first of a run is the first given. */
static int cmp_acl_ptr(const void *pa, const void *pb)
{
    const acl_t *a = *(const acl_t *const *)pa, *b = *(const acl_t *const *)pb;
    if (a->perms != b->perms)
        return a->perms < b->perms ? -1 : 1;
    int c = str_cmp(a->scheme, b->scheme);
    if (c == 0)
        c = str_cmp(a->id, b->id);
    if (c == 0)
        c = a < b ? -1 : a > b;
    return c;
}

static int acl_same(const acl_t *a, const acl_t *b)
{
    return a->perms == b->perms && str_cmp(a->scheme, b->scheme) == 0 && str_cmp(a->id, b->id) == 0;
}

/* removeDuplicates: keep[i] = 1 for the first of each set of equal entries.
 * Sorting keeps this O(n log n) for a hostile list. 0, or -1 (memory). */
static int mark_unique(const acl_list_t *acl, uint8_t *keep)
{
    size_t n = (size_t)acl->count;
    const acl_t **order = malloc(n * sizeof(*order));
    if (!order)
        return -1;
    for (size_t i = 0; i < n; i++)
        order[i] = &acl->items[i];
    qsort(order, n, sizeof(*order), cmp_acl_ptr);
    for (size_t i = 0; i < n; i++)
        keep[order[i] - acl->items] = i == 0 || !acl_same(order[i - 1], order[i]);
    free(order);
    return 0;
}

static int append_acl(acl_list_t *out, int32_t *cap, int32_t perms, const char *scheme, const char *id)
{
    if (out->count == *cap) {
        if (*cap >= ACL_FIXUP_MAX_ENTRIES)
            return ZINVALIDACL;
        int32_t ncap = *cap ? *cap * 2 : 4;
        acl_t *items = realloc(out->items, (size_t)ncap * sizeof(*items));
        if (!items)
            return ZSYSTEMERROR;
        out->items = items;
        *cap = ncap;
    }
    acl_t *a = &out->items[out->count];
    a->perms = perms;
    a->scheme = strdup(scheme);
    a->id = strdup(id);
    if (!a->scheme || !a->id) {
        free(a->scheme);
        free(a->id);
        return ZSYSTEMERROR;
    }
    out->count++;
    return ZOK;
}

/* "auth" stands for every identity of an authenticating scheme the
 * connection holds: digest (ip identities do not authenticate; "super" has
 * no provider). No such identity is INVALIDACL. */
static int expand_auth(const acl_t *a, const auth_set_t *ids, acl_list_t *out, int32_t *cap)
{
    int found = 0;
    for (int i = 0; ids && i < ids->count; i++) {
        if (!str_eq(ids->items[i].scheme, "digest"))
            continue;
        int rc = append_acl(out, cap, a->perms, ids->items[i].scheme, ids->items[i].id);
        if (rc != ZOK)
            return rc;
        found = 1;
    }
    return found ? ZOK : ZINVALIDACL;
}

static int fixup_one(const acl_t *a, const auth_set_t *ids, acl_list_t *out, int32_t *cap)
{
    if (!a->scheme || !a->id)
        return ZINVALIDACL;
    if (str_eq(a->scheme, "world") && str_eq(a->id, "anyone"))
        return append_acl(out, cap, a->perms, a->scheme, a->id);
    if (str_eq(a->scheme, "auth"))
        return expand_auth(a, ids, out, cap);
    int valid = str_eq(a->scheme, "digest") ? digest_id_valid(a->id)
              : str_eq(a->scheme, "ip")     ? ip_id_valid(a->id)
                                            : 0;   /* no provider: world with another id, super, ... */
    return valid ? append_acl(out, cap, a->perms, a->scheme, a->id) : ZINVALIDACL;
}

int acl_fixup(const acl_list_t *requested, const auth_set_t *ids, acl_list_t *out)
{
    out->items = NULL;
    out->count = 0;
    if (!requested || requested->count <= 0 || !requested->items)
        return ZINVALIDACL;
    uint8_t *keep = malloc((size_t)requested->count);
    if (!keep || mark_unique(requested, keep) < 0) {
        free(keep);
        return ZSYSTEMERROR;
    }
    int32_t cap = 0;
    int rc = ZOK;
    for (int32_t i = 0; i < requested->count && rc == ZOK; i++)
        if (keep[i])
            rc = fixup_one(&requested->items[i], ids, out, &cap);
    free(keep);
    if (rc != ZOK)
        acl_list_free(out);
    return rc;
}
