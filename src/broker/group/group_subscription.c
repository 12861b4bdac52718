/* group_subscription.c -- which topics the members of a consumer group
 * subscribe to, read from the protocol metadata they sent with JoinGroup
 * (see group.h's group_subscribes_to). OffsetDelete refuses to delete the
 * offsets of a topic an active group consumes. */
#include "group.h"

#include <string.h>

static int read_be(const uint8_t *p, uint32_t len, uint32_t *at, int width, int64_t *v)
{
    if (len - *at < (uint32_t)width)
        return -1;
    int64_t x = 0;
    for (int i = 0; i < width; i++)
        x = (x << 8) | p[*at + (uint32_t)i];
    *at += (uint32_t)width;
    *v = width == 2 ? (int16_t)x : (int32_t)x;
    return 0;
}

int group_subscription_names(const uint8_t *p, uint32_t len, const char *topic)
{
    uint32_t at = 0;
    int64_t version, n, slen;
    size_t tlen = strlen(topic);
    int found = 0;
    if (!p || read_be(p, len, &at, 2, &version) < 0 || version < 0 || read_be(p, len, &at, 4, &n) < 0 || n < 0)
        return -1;
    /* Each name takes at least its two length bytes: a count past what is
     * left cannot be true. */
    if ((uint64_t)n > (len - at) / 2)
        return -1;
    for (int64_t i = 0; i < n; i++) {
        if (read_be(p, len, &at, 2, &slen) < 0 || slen < 0 || (uint32_t)slen > len - at)
            return -1;
        found |= (size_t)slen == tlen && memcmp(p + at, topic, tlen) == 0;
        at += (uint32_t)slen;
    }
    return found;
}

int group_subscribes_to(const group_t *g, const char *topic)
{
    if (g->state == GROUP_EMPTY || g->state == GROUP_DEAD || !g->protocol_type ||
        strcmp(g->protocol_type, "consumer") != 0 || !g->protocol_name)
        return 0;
    int found = 0;
    for (int i = 0; i < g->nmembers; i++) {
        const group_protocol_t *pr = group_member_protocol(g->members[i], g->protocol_name);
        int r = pr ? group_subscription_names(pr->metadata, pr->len, topic) : -1;
        if (r < 0)
            return 0;   /* Kafka computes no subscribed topics at all then */
        found |= r;
    }
    return found;
}
