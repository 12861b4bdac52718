/* coord_admin_impl.h -- what coord_admin.c shares with coord_config_admin.c
 * (the same synchronous administration, split by subject): reading a
 * document, and how a failure reaches the caller's coord_admin_result_t.
 * This folder's own. */
#ifndef KIPPER_BROKER_COORD_ADMIN_IMPL_H
#define KIPPER_BROKER_COORD_ADMIN_IMPL_H

#include "coord_admin.h"
#include "base/logging.h"

/* The document at path into buf (COORD_DOC_MAX bytes), and its version
 * when version is not NULL: 1 when read, 0 when there is no node, -1 with
 * res (a ZooKeeper error, or a document over COORD_DOC_MAX). */
int coord_admin_read_doc(zhandle_t *zh, const char *path, char *buf, int *len, int *version,
                         coord_admin_result_t *res);
/* Sets res's error and message (printf-style); returns -1. */
int coord_admin_fail(coord_admin_result_t *res, int16_t error, const char *fmt, ...) KIPPER_PRINTF(3, 4);
/* A ZooKeeper call on path failed with rc while doing what: REQUEST_TIMED_OUT
 * for a lost connection or a timeout (it may succeed when retried), else
 * UNKNOWN_SERVER_ERROR; returns -1. */
int coord_admin_zk_fail(coord_admin_result_t *res, const char *what, const char *path, int rc);

#endif
