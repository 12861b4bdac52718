/* jstring.c -- see jstring.h. */
#include "jstring.h"

#include <stdlib.h>
#include <string.h>

/* The sequence at s: its length in bytes, *cp its code point, *ok whether
 * it is well-formed (an ill-formed one is as long as its valid prefix, at
 * least one byte, and stands for U+FFFD). */
static size_t decode(const uint8_t *s, const uint8_t *end, uint32_t *cp, int *ok)
{
    uint8_t c = s[0];
    size_t need;
    uint8_t lo = 0x80, hi = 0xBF;   /* the second byte's range */
    *ok = 0;
    *cp = JSTRING_REPLACEMENT;
    if (c < 0x80) {
        *cp = c;
        *ok = 1;
        return 1;
    } else if (c >= 0xC2 && c <= 0xDF) {
        need = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
        need = 3;
        lo = c == 0xE0 ? 0xA0 : lo;   /* no overlong forms */
        hi = c == 0xED ? 0x9F : hi;   /* no encoded surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        need = 4;
        lo = c == 0xF0 ? 0x90 : lo;
        hi = c == 0xF4 ? 0x8F : hi;   /* nothing above U+10FFFF */
    } else {
        return 1;
    }
    uint32_t v = c & (0x7Fu >> need);
    for (size_t i = 1; i < need; i++) {
        uint8_t min = i == 1 ? lo : 0x80, max = i == 1 ? hi : 0xBF;
        if (s + i == end || s[i] < min || s[i] > max)
            return i;
        v = v << 6 | (s[i] & 0x3Fu);
    }
    *cp = v;
    *ok = 1;
    return need;
}

uint32_t jstring_next(const uint8_t **p, const uint8_t *end)
{
    uint32_t cp;
    int ok;
    *p += decode(*p, end, &cp, &ok);
    return cp;
}

size_t jstring_utf16_length(const char *s, size_t len)
{
    const uint8_t *p = (const uint8_t *)s, *end = p + len;
    size_t n = 0;
    while (p < end)
        n += jstring_next(&p, end) >= 0x10000 ? 2 : 1;
    return n;
}

int32_t jstring_hash(const char *s, size_t len)
{
    const uint8_t *p = (const uint8_t *)s, *end = p + len;
    uint32_t h = 0;   /* unsigned: Java's int arithmetic wraps */
    while (p < end) {
        uint32_t cp = jstring_next(&p, end);
        if (cp >= 0x10000) {   /* the surrogate pair, high first */
            cp -= 0x10000;
            h = h * 31u + (0xD800u + (cp >> 10));
            h = h * 31u + (0xDC00u + (cp & 0x3FFu));
        } else {
            h = h * 31u + cp;
        }
    }
    return (int32_t)h;
}

char *jstring_clean(const char *s, size_t len, size_t *out_len)
{
    if (len > (SIZE_MAX - 1) / 3)
        return NULL;
    char *out = malloc(len * 3 + 1);   /* a byte grows to at most U+FFFD's 3 */
    if (!out)
        return NULL;
    const uint8_t *p = (const uint8_t *)s, *end = p + len;
    size_t n = 0;
    while (p < end) {
        uint32_t cp;
        int ok;
        size_t used = decode(p, end, &cp, &ok);
        if (ok)
            memcpy(out + n, p, used);
        else
            memcpy(out + n, "\xEF\xBF\xBD", 3);
        n += ok ? used : 3;
        p += used;
    }
    out[n] = '\0';
    if (out_len)
        *out_len = n;
    return out;
}
