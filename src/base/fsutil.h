/* fsutil.h -- small file-system helpers every durable part needs.
 *
 * Durable small files (checkpoints, epochs, meta.properties, snapshots) are
 * replaced the one crash-safe way: write a temporary beside the file, fsync
 * it, rename it over the file, fsync the folder. A reader (or a restart after
 * a crash at any point) then sees the old file or the new one, never a torn
 * mix, and once the call returns the new one survives a power cut. */
#ifndef KIPPER_BASE_FSUTIL_H
#define KIPPER_BASE_FSUTIL_H

#include <stddef.h>
#include <stdint.h>

/* mkdir -p: 0, or -1 with errno. */
int fs_make_dirs(const char *path);
/* fsync a folder, so a rename or a new file in it survives a crash. 0 or -1. */
int fs_sync_dir(const char *dir);
/* write(2) / pwrite(2) all n bytes, through short writes and EINTR.
 * 0, or -1 with errno (EIO when the file takes nothing more). */
int fs_write_all(int fd, const void *p, size_t n);
int fs_pwrite_all(int fd, const void *p, size_t n, int64_t off);
/* Put the written and fsynced file tmp in place of path for good: rename,
 * then fsync the folder holding path. 0; -1 when the rename failed (tmp is
 * left as it was); -2 when path is in place but the folder could not be
 * synced. errno says why. */
int fs_rename_durable(const char *tmp, const char *path);
/* Replace path by len bytes of data as described above, through
 * "<path>.tmp" (removed again on failure). 0, or -1 with errno
 * (ENAMETOOLONG when path leaves no room for the suffix). */
int fs_write_atomic(const char *path, const void *data, size_t len);
/* The same; without durable, no fsync of the file or its folder: a reader
 * sees the old bytes or the new, but a crash may leave the old (for files
 * that something durable elsewhere can rebuild). */
int fs_write_replace(const char *path, const void *data, size_t len, int durable);
/* A whole file of at most max bytes into a malloc'd buffer with a NUL after
 * it (*out, *len without the NUL). 0, or -1 with errno (EFBIG when larger
 * than max, ENOMEM, or the open/read error). */
int fs_read_file(const char *path, size_t max, char **out, size_t *len);
/* rm -rf (never follows symbolic links). 0, or -1 with errno of the first failure. */
int fs_remove_tree(const char *path);

#endif
