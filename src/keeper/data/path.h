/* path.h -- znode path rules (ZooKeeper's PathUtils). */
#ifndef KIPPER_KEEPER_PATH_H
#define KIPPER_KEEPER_PATH_H

#include <stddef.h>

/* 0 if path is a valid znode path, -1 otherwise: must start with '/', no
 * trailing '/' (except the root), no empty, "." or ".." segments, no NUL or
 * the control/reserved characters ZooKeeper refuses (U+0001-U+001F,
 * U+007F-U+009F, U+D800-U+F8FF, U+FFF0-U+FFFF) and valid UTF-8.
 * With sequential set the path is checked as ZooKeeper does, as if a
 * digit were appended (so "/a/" is a valid sequential prefix). */
int path_validate(const char *path, int sequential);

/* Length of the parent path of an absolute path ("/a/b" -> 2 for "/a";
 * "/a" -> 1 for "/"); 0 for "/". */
size_t path_parent_len(const char *path);
/* Pointer to the last component (after the last '/'). */
const char *path_basename(const char *path);

#endif
