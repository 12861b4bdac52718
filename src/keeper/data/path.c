/* path.c -- see path.h.
 *
 * ZooKeeper validates a path as a Java String, i.e. as UTF-16 code units,
 * after decoding the request bytes as UTF-8 (malformed sequences become
 * U+FFFD). We decode the bytes the same way (base/jstring.h) and check the
 * code points, with the same outcome:
 *  - every character outside the BMP is a surrogate pair in Java, and
 *    surrogates (U+D800-U+DFFF) are refused, so any 4-byte sequence is invalid;
 *  - U+FFFD lies in the refused range U+FFF0-U+FFFF, so malformed UTF-8
 *    (overlong forms, encoded surrogates, stray continuation bytes, bytes
 *    C0, C1, F5-FF, truncated sequences) is invalid too.
 * The '/' and '.' rules only ever look at ASCII neighbours, and ASCII bytes
 * map one-to-one to UTF-16 units, so checking them on bytes is equivalent. */
#include "path.h"

#include "base/jstring.h"

#include <stdint.h>
#include <string.h>

/* Is this code point one of those ZooKeeper refuses? (NUL cannot occur in
 * a C string; U+0000 encoded overlong is malformed and refused below.) */
static int codepoint_refused(uint32_t c)
{
    return (c >= 0x01 && c <= 0x1F) || (c >= 0x7F && c <= 0x9F) || (c >= 0xD800 && c <= 0xF8FF) ||
           (c >= 0xFFF0 && c <= 0xFFFF);
}

/* The length of the character at s[i] (before s + n) if ZooKeeper allows
 * it, else 0. Decoded as Java decodes it: ill-formed UTF-8 becomes U+FFFD
 * and a character outside the BMP a surrogate pair, both refused. */
static size_t allowed_char(const uint8_t *s, size_t i, size_t n)
{
    const uint8_t *p = s + i;
    uint32_t cp = jstring_next(&p, s + n);
    return cp >= 0x10000 || codepoint_refused(cp) ? 0 : (size_t)(p - (s + i));
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
            size_t len = allowed_char(s, i, n);
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
