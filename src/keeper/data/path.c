/* path.c -- see path.h.
 *
 * ZooKeeper validates a path as a Java String, i.e. as UTF-16 code units,
 * after decoding the request bytes as UTF-8 (malformed sequences become
 * U+FFFD). We validate the UTF-8 bytes directly with the same outcome:
 *  - every character outside the BMP is a surrogate pair in Java, and
 *    surrogates (U+D800-U+DFFF) are refused, so any 4-byte sequence is invalid;
 *  - U+FFFD lies in the refused range U+FFF0-U+FFFF, so malformed UTF-8
 *    (overlong forms, encoded surrogates, stray continuation bytes, bytes
 *    C0, C1, F5-FF, truncated sequences) is invalid too.
 * The '/' and '.' rules only ever look at ASCII neighbours, and ASCII bytes
 * map one-to-one to UTF-16 units, so checking them on bytes is equivalent. */
#include "path.h"

#include <stdint.h>
#include <string.h>

/* Is this code point one of those ZooKeeper refuses? (NUL cannot occur in
 * a C string; U+0000 encoded overlong is malformed and refused below.) */
static int codepoint_refused(uint32_t c)
{
    return (c >= 0x01 && c <= 0x1F) || (c >= 0x7F && c <= 0x9F) || (c >= 0xD800 && c <= 0xF8FF) ||
           (c >= 0xFFF0 && c <= 0xFFFF);
}

static int is_continuation(uint8_t b)
{
    return (b & 0xC0) == 0x80;
}

/* Decode the UTF-8 sequence at s[i] (at most n bytes). Returns its length
 * in bytes with *cp set, or 0 if it is malformed or refused. */
static size_t decode_allowed(const uint8_t *s, size_t i, size_t n, uint32_t *cp)
{
    uint8_t b0 = s[i];
    if (b0 < 0x80) {
        *cp = b0;
        return codepoint_refused(b0) ? 0 : 1;
    }
    if (b0 >= 0xC2 && b0 <= 0xDF) {
        if (n - i < 2 || !is_continuation(s[i + 1]))
            return 0;
        *cp = (uint32_t)(b0 & 0x1F) << 6 | (s[i + 1] & 0x3F);
        return codepoint_refused(*cp) ? 0 : 2;
    }
    if (b0 >= 0xE0 && b0 <= 0xEF) {
        if (n - i < 3 || !is_continuation(s[i + 1]) || !is_continuation(s[i + 2]))
            return 0;
        *cp = (uint32_t)(b0 & 0x0F) << 12 | (uint32_t)(s[i + 1] & 0x3F) << 6 | (s[i + 2] & 0x3F);
        if (*cp < 0x800)   /* overlong */
            return 0;
        return codepoint_refused(*cp) ? 0 : 3;   /* also refuses encoded surrogates */
    }
    /* C0/C1 (overlong), F0-F4 (outside the BMP: surrogate pairs in Java),
     * F5-FF and stray continuation bytes. */
    return 0;
}

/* ZooKeeper's relative-segment rules for a '.' at byte i; next is the byte
 * after it or -1 at the end. */
static int dot_makes_relative(const uint8_t *s, size_t i, int next)
{
    int ends_segment = next < 0 || next == '/';
    if (s[i - 1] == '.')   /* ".." : i >= 2 here since s[0] is '/' */
        return s[i - 2] == '/' && ends_segment;
    return s[i - 1] == '/' && ends_segment;
}

int path_validate(const char *path, int sequential)
{
    if (!path)
        return -1;
    const uint8_t *s = (const uint8_t *)path;
    size_t n = strlen(path);
    /* Sequential creates are checked as path + "1": the appended digit is
     * harmless itself and only changes what the last real byte sees next. */
    size_t total = n + (sequential ? 1 : 0);
    if (total == 0)
        return -1;
    if ((n > 0 ? s[0] : '1') != '/')
        return -1;
    if (total == 1)
        return 0;   /* the root */
    if (!sequential && s[n - 1] == '/')
        return -1;

    for (size_t i = 1; i < n;) {
        uint8_t c = s[i];
        int next = i + 1 < n ? s[i + 1] : (sequential ? '1' : -1);
        if (c == '/') {
            if (s[i - 1] == '/')
                return -1;   /* empty segment */
            i++;
        } else if (c == '.') {
            if (dot_makes_relative(s, i, next))
                return -1;
            i++;
        } else {
            uint32_t cp;
            size_t len = decode_allowed(s, i, n, &cp);
            if (len == 0)
                return -1;
            i += len;
        }
    }
    return 0;
}

size_t path_parent_len(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return 0;
    if (slash == path)
        return path[1] ? 1 : 0;   /* "/a" -> "/", "/" -> no parent */
    return (size_t)(slash - path);
}

const char *path_basename(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}
