/* jstring.h -- UTF-8 bytes as a Java String sees them.
 *
 * ZooKeeper and Kafka turn request bytes into a java.lang.String with
 * new String(bytes, UTF_8): every ill-formed sequence (its longest valid
 * prefix, as the Unicode standard and Java's decoder count it) becomes one
 * U+FFFD, and a character outside the BMP becomes a surrogate pair, two
 * UTF-16 units. Wherever kipper must give the answer the Java server gives
 * (a hash that places a group, a length limit, a digest over the decoded
 * text, a data-size figure, a path check) it decodes through these. */
#ifndef KIPPER_BASE_JSTRING_H
#define KIPPER_BASE_JSTRING_H

#include <stddef.h>
#include <stdint.h>

#define JSTRING_REPLACEMENT 0xFFFDu

/* The code point at *p (before end), moving *p past it; an ill-formed
 * sequence is JSTRING_REPLACEMENT. *p < end. */
uint32_t jstring_next(const uint8_t **p, const uint8_t *end);
/* String.length(): UTF-16 code units. */
size_t jstring_utf16_length(const char *s, size_t len);
/* String.hashCode(): s[0]*31^(n-1) + ... over the UTF-16 units, in Java's
 * wrapping int arithmetic. */
int32_t jstring_hash(const char *s, size_t len);
/* new String(bytes, UTF_8).getBytes(UTF_8): a malloc'd, NUL-terminated copy
 * with every ill-formed sequence replaced by U+FFFD's three bytes, its
 * length in *out_len (if not NULL). NULL when memory is short: the callers
 * answer an error rather than stop the process. */
char *jstring_clean(const char *s, size_t len, size_t *out_len);

#endif
