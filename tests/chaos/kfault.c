/* kfault.c -- an LD_PRELOAD shim that makes one server process's disk fail
 * and its wall clock jump, for the fault suite (tests/chaos, faults_disk.py).
 *
 * Built into build/libkfault.so. A test starts the server with
 *     LD_PRELOAD=build/libkfault.so KFAULT_CTL=<control file>
 * and flips faults by rewriting bytes of the control file: the shim maps it
 * MAP_SHARED at load, so the process sees a change at its next call, with no
 * signal and no restart. Without KFAULT_CTL, or with a missing or short
 * file, or with every field 0, every call goes straight to the C library
 * (the real functions come from dlsym(RTLD_NEXT)); the cost of an unarmed
 * call is one load of the mapped field.
 *
 * The control file: KFAULT_CTL_SIZE (512) bytes, little-endian (the host's
 * order), every field naturally aligned. Python mirrors it in faults_disk.py.
 *
 *   off  type    field
 *     0  u32     magic           0x544c464b ("KFLT"); anything else: unarmed
 *     4  u32     fsync_mode      0 pass, 1 fail, 2 delay then pass
 *     8  u32     fsync_delay_ms  for fsync_mode 2
 *    12  u32     fsync_errno     errno of a failed sync; 0 means EIO
 *    16  u32     write_mode      0 pass, 1 fail
 *    20  u32     write_errno     errno of a failed write; 0 means EIO
 *    24  s64     clock_offset_ms added to CLOCK_REALTIME(_COARSE),
 *                                gettimeofday and time; monotonic clocks untouched
 *    32  u64     fsyncs_failed   counters the shim increments (atomically),
 *    40  u64     fsyncs_delayed  so a test can wait until a fault has hit
 *    48  u64     writes_failed
 *    56  u64     reserved
 *    64  char[256] prefix        NUL-terminated; when not empty, sync and write
 *                                faults hit only files whose path starts with it
 *   320  ...     reserved up to 512
 *
 * Faults hit regular files only (never sockets, pipes, eventfds, terminals;
 * folders neither). Syncs: fsync, fdatasync, sync_file_range. Writes: write,
 * pwrite, pwrite64, writev, pwritev, fallocate, ftruncate (what kipper's
 * broker and keeper use for their data files: src/base/fsutil.c,
 * src/broker/log/partition_log.c, src/keeper/disk). A failed call does
 * nothing at all and returns -1 with the errno set. Set the prefix before
 * arming a mode: the prefix is read without a lock. Everything the shim
 * keeps is the mapping and the resolved function pointers, so it is safe
 * from any thread. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define KFAULT_MAGIC 0x544c464bu
#define KFAULT_CTL_SIZE 512
#define PREFIX_LEN 256

enum { MODE_PASS = 0, MODE_FAIL = 1, MODE_DELAY = 2 };

typedef struct {
    uint32_t magic;
    uint32_t fsync_mode;
    uint32_t fsync_delay_ms;
    uint32_t fsync_errno;
    uint32_t write_mode;
    uint32_t write_errno;
    int64_t clock_offset_ms;
    uint64_t fsyncs_failed;
    uint64_t fsyncs_delayed;
    uint64_t writes_failed;
    uint64_t reserved;
    char prefix[PREFIX_LEN];
} kfault_ctl_t;

_Static_assert(sizeof(kfault_ctl_t) == 320, "the layout in the header comment");

static kfault_ctl_t *ctl;   /* NULL: no control file; set once, at load */

#define LOAD(field) __atomic_load_n(&ctl->field, __ATOMIC_RELAXED)
#define COUNT(field) __atomic_fetch_add(&ctl->field, 1, __ATOMIC_RELAXED)

/* ---- the real functions ---- */

/* dlsym(RTLD_NEXT, name), once per symbol; a racing second lookup stores the
 * same pointer. Aborts, saying so, only if the C library lacks it. */
static void *real(void **slot, const char *name)
{
    void *f = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (f)
        return f;
    f = dlsym(RTLD_NEXT, name);
    if (!f) {
        char msg[128];
        int n = snprintf(msg, sizeof(msg), "kfault: no %s in the C library\n", name);
        if (n > 0)
            (void)syscall(SYS_write, 2, msg, (size_t)n < sizeof(msg) ? (size_t)n : sizeof(msg) - 1);
        abort();
    }
    __atomic_store_n(slot, f, __ATOMIC_RELEASE);
    return f;
}

/* The real function through its slot: REAL(fsync, int (*)(int))(fd). */
#define REAL(name, type) ((type)real(&real_##name, #name))

static void *real_fsync, *real_fdatasync, *real_sync_file_range, *real_write, *real_pwrite, *real_pwrite64,
    *real_writev, *real_pwritev, *real_fallocate, *real_ftruncate, *real_clock_gettime, *real_gettimeofday,
    *real_time;

/* ---- the control file ---- */

__attribute__((constructor)) static void kfault_load(void)
{
    const char *path = getenv("KFAULT_CTL");
    if (!path || !*path)
        return;
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return;
    struct stat st;
    if (fstat(fd, &st) == 0 && st.st_size >= KFAULT_CTL_SIZE) {
        void *m = mmap(NULL, KFAULT_CTL_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (m != MAP_FAILED)
            ctl = m;
    }
    close(fd);
}

/* Does a fault armed for files hit fd? A regular file, under the prefix if
 * one is set. Called only when a fault is armed. */
static int hits(int fd)
{
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        return 0;
    char prefix[PREFIX_LEN];
    memcpy(prefix, ctl->prefix, sizeof(prefix));
    prefix[PREFIX_LEN - 1] = 0;
    size_t n = strlen(prefix);
    if (n == 0)
        return 1;
    char link[64], path[4096];
    snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
    ssize_t len = readlink(link, path, sizeof(path) - 1);
    if (len < 0)
        return 0;
    path[len] = 0;
    return strncmp(path, prefix, n) == 0;
}

static int fail_with(uint32_t err)
{
    errno = err ? (int)err : EIO;
    return -1;
}

static void sleep_ms(uint32_t ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
    }
}

/* 0: go on with the real sync; -1: fail it (errno set). */
static int sync_fault(int fd)
{
    if (!ctl || LOAD(magic) != KFAULT_MAGIC)
        return 0;
    uint32_t mode = LOAD(fsync_mode);
    if (mode == MODE_PASS || !hits(fd))
        return 0;
    if (mode == MODE_FAIL) {
        COUNT(fsyncs_failed);
        return fail_with(LOAD(fsync_errno));
    }
    if (mode == MODE_DELAY) {
        int saved = errno;
        COUNT(fsyncs_delayed);
        sleep_ms(LOAD(fsync_delay_ms));
        errno = saved;
    }
    return 0;
}

static int write_fault(int fd)
{
    if (!ctl || LOAD(magic) != KFAULT_MAGIC || LOAD(write_mode) != MODE_FAIL)
        return 0;
    int saved = errno;
    int hit = hits(fd);
    errno = saved;
    if (!hit)
        return 0;
    COUNT(writes_failed);
    return fail_with(LOAD(write_errno));
}

static int64_t clock_offset_ms(void)
{
    return ctl && LOAD(magic) == KFAULT_MAGIC ? LOAD(clock_offset_ms) : 0;
}

/* ---- syncs ---- */

int fsync(int fd)
{
    if (sync_fault(fd) < 0)
        return -1;
    return REAL(fsync, int (*)(int))(fd);
}

int fdatasync(int fd)
{
    if (sync_fault(fd) < 0)
        return -1;
    return REAL(fdatasync, int (*)(int))(fd);
}

int sync_file_range(int fd, off64_t off, off64_t n, unsigned int flags)
{
    if (sync_fault(fd) < 0)
        return -1;
    return REAL(sync_file_range, int (*)(int, off64_t, off64_t, unsigned int))(fd, off, n, flags);
}

/* ---- writes ---- */

ssize_t write(int fd, const void *p, size_t n)
{
    if (write_fault(fd) < 0)
        return -1;
    return REAL(write, ssize_t (*)(int, const void *, size_t))(fd, p, n);
}

ssize_t pwrite(int fd, const void *p, size_t n, off_t off)
{
    if (write_fault(fd) < 0)
        return -1;
    return REAL(pwrite, ssize_t (*)(int, const void *, size_t, off_t))(fd, p, n, off);
}

ssize_t pwrite64(int fd, const void *p, size_t n, off64_t off)
{
    if (write_fault(fd) < 0)
        return -1;
    return REAL(pwrite64, ssize_t (*)(int, const void *, size_t, off64_t))(fd, p, n, off);
}

ssize_t writev(int fd, const struct iovec *iov, int n)
{
    if (write_fault(fd) < 0)
        return -1;
    return REAL(writev, ssize_t (*)(int, const struct iovec *, int))(fd, iov, n);
}

ssize_t pwritev(int fd, const struct iovec *iov, int n, off_t off)
{
    if (write_fault(fd) < 0)
        return -1;
    return REAL(pwritev, ssize_t (*)(int, const struct iovec *, int, off_t))(fd, iov, n, off);
}

int fallocate(int fd, int mode, off_t off, off_t len)
{
    if (write_fault(fd) < 0)
        return -1;
    return REAL(fallocate, int (*)(int, int, off_t, off_t))(fd, mode, off, len);
}

int ftruncate(int fd, off_t len)
{
    if (write_fault(fd) < 0)
        return -1;
    return REAL(ftruncate, int (*)(int, off_t))(fd, len);
}

/* ---- the wall clock ---- */

static int is_wall(clockid_t id)
{
    return id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE;
}

/* ts moved by ms (either sign), normalized. */
static void shift(struct timespec *ts, int64_t ms)
{
    int64_t ns = (int64_t)ts->tv_nsec + (ms % 1000) * 1000000;
    int64_t s = (int64_t)ts->tv_sec + ms / 1000;
    if (ns < 0) {
        ns += 1000000000;
        s--;
    } else if (ns >= 1000000000) {
        ns -= 1000000000;
        s++;
    }
    ts->tv_sec = (time_t)s;
    ts->tv_nsec = (long)ns;
}

int clock_gettime(clockid_t id, struct timespec *ts)
{
    int rc = REAL(clock_gettime, int (*)(clockid_t, struct timespec *))(id, ts);
    int64_t off = is_wall(id) ? clock_offset_ms() : 0;
    if (rc == 0 && off != 0)
        shift(ts, off);
    return rc;
}

/* The second argument is struct timezone * (obsolete; glibc declares it void *). */
int gettimeofday(struct timeval *restrict tv, void *restrict tz)
{
    int rc = REAL(gettimeofday, int (*)(struct timeval *, void *))(tv, tz);
    int64_t off = clock_offset_ms();
    if (rc == 0 && off != 0) {
        struct timespec ts = {tv->tv_sec, (long)tv->tv_usec * 1000};
        shift(&ts, off);
        tv->tv_sec = ts.tv_sec;
        tv->tv_usec = (suseconds_t)(ts.tv_nsec / 1000);
    }
    return rc;
}

time_t time(time_t *out)
{
    time_t t = REAL(time, time_t (*)(time_t *))(NULL);
    int64_t off = clock_offset_ms();
    if (t != (time_t)-1 && off != 0) {
        struct timespec ts = {t, 0};
        shift(&ts, off);
        t = ts.tv_sec;
    }
    if (out)
        *out = t;
    return t;
}
