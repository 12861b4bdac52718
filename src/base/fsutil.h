/* fsutil.h -- small file-system helpers every durable part needs. */
#ifndef KIPPER_BASE_FSUTIL_H
#define KIPPER_BASE_FSUTIL_H

/* mkdir -p: 0, or -1 with errno. */
int fs_make_dirs(const char *path);
/* fsync a folder, so a rename or a new file in it survives a crash. 0 or -1. */
int fs_sync_dir(const char *dir);
/* rm -rf (never follows symbolic links). 0, or -1 with errno of the first failure. */
int fs_remove_tree(const char *path);

#endif
