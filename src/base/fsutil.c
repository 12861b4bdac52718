/* fsutil.c -- see fsutil.h. */
#define _GNU_SOURCE
#include "fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int fs_make_dirs(const char *path)
{
    char tmp[1024];
    if (snprintf(tmp, sizeof(tmp), "%s", path) >= (int)sizeof(tmp)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    return mkdir(tmp, 0755) < 0 && errno != EEXIST ? -1 : 0;
}

int fs_sync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int rc = fsync(fd);
    int saved = errno;
    close(fd);
    errno = saved;
    return rc;
}

int fs_write_all(int fd, const void *p, size_t n)
{
    const uint8_t *c = p;
    while (n > 0) {
        ssize_t w = write(fd, c, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w == 0)
            errno = EIO;   /* no progress on a regular file: a device error */
        if (w <= 0)
            return -1;
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

int fs_pwrite_all(int fd, const void *p, size_t n, int64_t off)
{
    const uint8_t *c = p;
    while (n > 0) {
        ssize_t w = pwrite(fd, c, n, (off_t)off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w == 0)
            errno = EIO;
        if (w <= 0)
            return -1;
        c += w;
        n -= (size_t)w;
        off += w;
    }
    return 0;
}

/* The folder holding path: "." for a bare name, "/" for a file in the root. */
static int sync_parent(const char *path)
{
    char dir[PATH_MAX];
    const char *slash = strrchr(path, '/');
    size_t n = !slash ? 0 : slash == path ? 1 : (size_t)(slash - path);
    if (n >= sizeof(dir)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    if (n == 0)
        dir[n++] = '.';
    else
        memcpy(dir, path, n);
    dir[n] = '\0';
    return fs_sync_dir(dir);
}

int fs_rename_durable(const char *tmp, const char *path)
{
    if (rename(tmp, path) < 0)
        return -1;
    return sync_parent(path) < 0 ? -2 : 0;
}

/* Write, fsync and close fd; 0 or -1 with errno (fd closed either way). */
static int write_sync_close(int fd, const void *data, size_t len)
{
    int rc = fs_write_all(fd, data, len) == 0 && fsync(fd) == 0 ? 0 : -1;
    int saved = errno;
    if (close(fd) < 0 && rc == 0)
        return -1;
    errno = saved;
    return rc;
}

int fs_read_file(const char *path, size_t max, char **out, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    char *buf = max < SIZE_MAX ? malloc(max + 1) : NULL;
    size_t n = buf ? fread(buf, 1, max + 1, f) : 0;
    int err = !buf ? ENOMEM : ferror(f) ? EIO : n > max ? EFBIG : 0;
    fclose(f);
    if (err) {
        free(buf);
        errno = err;
        return -1;
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return 0;
}

int fs_write_atomic(const char *path, const void *data, size_t len)
{
    return fs_write_replace(path, data, len, 1);
}

int fs_write_replace(const char *path, const void *data, size_t len, int durable)
{
    char tmp[PATH_MAX];
    if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= sizeof(tmp)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    int rc;
    if (durable) {
        rc = write_sync_close(fd, data, len);
        if (rc == 0)
            rc = fs_rename_durable(tmp, path);
    } else {
        rc = fs_write_all(fd, data, len);
        if (close(fd) < 0)
            rc = -1;
        if (rc == 0 && rename(tmp, path) < 0)
            rc = -1;
    }
    if (rc == -1) {   /* not renamed: the temporary is ours to remove */
        int saved = errno;
        unlink(tmp);
        errno = saved;
    }
    return rc < 0 ? -1 : 0;
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    return (type == FTW_DP ? rmdir(path) : unlink(path)) < 0 && errno != ENOENT ? -1 : 0;
}

int fs_remove_tree(const char *path)
{
    return nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}
