/* coord_connect.h -- the coordinator's address: zookeeper.connect's
 * "host:port[,host:port...][/chroot]", as the broker's server.properties,
 * the admin helpers and `kipper topics --zookeeper` take it. */
#ifndef KIPPER_BROKER_COORD_CONNECT_H
#define KIPPER_BROKER_COORD_CONNECT_H

#include <stddef.h>

/* Room for a chroot and its NUL where a caller has no tighter bound. */
#define COORD_CHROOT_MAX 1024

/* Checks every host:port and fills chroot ("" when none; ZooKeeper's client
 * refuses one with a trailing or doubled '/', and so does this). 0, or -1
 * with err naming zookeeper.connect. */
int coord_parse_connect(const char *v, char *chroot, size_t chrootlen, char *err, size_t errlen);

#endif
