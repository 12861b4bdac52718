/* coord_connect.c -- see coord_connect.h. */
#include "coord_connect.h"

#include "base/config.h"
#include "base/net.h"

#include <stdio.h>
#include <string.h>

enum { HOST_MAX = 256, SERVER_MAX = HOST_MAX + 8 };   /* a host name; with ":port" */

/* One host:port of the list, [s, s + n), blanks around it allowed. */
static int server_valid(const char *s, size_t n)
{
    char item[SERVER_MAX], host[HOST_MAX];
    int port;
    if (config_copy_trimmed(s, n, item, sizeof(item)) < 0 || !item[0])
        return 0;
    return net_parse_host_port(item, host, sizeof(host), &port, 1) == 0 && host[0];
}

static int chroot_take(const char *slash, char *chroot, size_t chrootlen)
{
    size_t n = strlen(slash);
    if (n >= chrootlen || (n > 1 && slash[n - 1] == '/') || strstr(slash, "//"))
        return -1;
    if (n > 1)   /* "/" alone is no chroot */
        memcpy(chroot, slash, n + 1);
    return 0;
}

int coord_parse_connect(const char *v, char *chroot, size_t chrootlen, char *err, size_t errlen)
{
    const char *slash = strchr(v, '/');
    chroot[0] = '\0';
    if (slash && chroot_take(slash, chroot, chrootlen) < 0) {
        snprintf(err, errlen, "zookeeper.connect: bad chroot '%.200s'", slash);
        return -1;
    }
    const char *end = slash ? slash : v + strlen(v);
    for (const char *p = v; p <= end;) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        const char *stop = comma ? comma : end;
        if (!server_valid(p, (size_t)(stop - p))) {
            snprintf(err, errlen, "zookeeper.connect must be host:port[,host:port...][/chroot], got '%.200s'", v);
            return -1;
        }
        p = stop + 1;
    }
    return 0;
}
