/* fuzz.h -- what the libFuzzer harnesses in this folder share.
 *
 * Each harness (one file each; tests/README.md, Fuzzing) feeds one decoder of untrusted
 * bytes through the same public header the broker or keeper calls it by, with
 * the bound the real entry point applies, and frees everything it made before
 * returning, so no input depends on an earlier one. Decoders that read files
 * get them in a scratch folder on tmpfs (/dev/shm when there is one), made
 * once per process, emptied after every input and removed at exit. */
#ifndef KIPPER_FUZZ_H
#define KIPPER_FUZZ_H

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fsutil.h"
#include "base/logging.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* Inputs hit every error path, and most of them log: keep the fuzzer's
 * output to its own lines (KIPPER_FUZZ_LOG=1 shows the servers' too). */
static inline void fuzz_quiet(void)
{
    const char *v = getenv("KIPPER_FUZZ_LOG");
    log_set_level(v && *v && strcmp(v, "0") != 0 ? LOG_LEVEL_DEBUG : LOG_LEVEL_ERROR);
}

/* A harness that finds its own oracle broken (a decoder accepting what it
 * cannot give back) stops here, and libFuzzer saves the input as a crash. */
#define FUZZ_CHECK(cond, ...)                                                              \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            fprintf(stderr, "fuzz check failed at %s:%d: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                                  \
            fputc('\n', stderr);                                                           \
            abort();                                                                       \
        }                                                                                  \
    } while (0)

static char fuzz_scratch_path[256];

static inline void fuzz_scratch_remove(void)
{
    if (fuzz_scratch_path[0])
        fs_remove_tree(fuzz_scratch_path);
}

/* The process's scratch folder (created on first use), or NULL. */
static inline const char *fuzz_scratch_dir(void)
{
    if (fuzz_scratch_path[0])
        return fuzz_scratch_path;
    const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR");
    if (!base || !*base)
        base = "/tmp";
    snprintf(fuzz_scratch_path, sizeof(fuzz_scratch_path), "%s/kipper-fuzz-XXXXXX", base);
    if (!mkdtemp(fuzz_scratch_path)) {
        fprintf(stderr, "fuzz: cannot create a scratch folder under %s: %s\n", base, strerror(errno));
        fuzz_scratch_path[0] = 0;
        return NULL;
    }
    atexit(fuzz_scratch_remove);
    return fuzz_scratch_path;
}

/* dir/name, made under the scratch folder (sub may be NULL). */
static inline int fuzz_scratch_file(char *out, size_t outlen, const char *sub, const char *name)
{
    const char *dir = fuzz_scratch_dir();
    if (!dir)
        return -1;
    int n = sub ? snprintf(out, outlen, "%s/%s/%s", dir, sub, name) : snprintf(out, outlen, "%s/%s", dir, name);
    return n < 0 || (size_t)n >= outlen ? -1 : 0;
}

/* Replace path by exactly len bytes. 0 or -1. */
static inline int fuzz_write_file(const char *path, const void *data, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    int rc = fs_write_all(fd, data, len);
    close(fd);
    return rc;
}

#endif
