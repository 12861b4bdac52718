/* checkpoint.c -- Kafka's checkpoint files beside the logs, as the broker
 * reads them at start: replication-offset-checkpoint and
 * recovery-point-offset-checkpoint (offset_checkpoint_read) and a
 * partition's leader-epoch-checkpoint (epoch_checkpoint_read).
 *
 * Input: one file, read by both readers (each refuses what is not its
 * shape) from a scratch folder; the readers themselves bound what they load
 * (CHECKPOINT_MAX_BYTES).
 *
 * Oracle: what a reader accepts, its writer writes back, and reading that
 * gives the same entries. */
#include "fuzz.h"

#include "broker/log/checkpoint.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_quiet();
    return fuzz_scratch_dir() ? 0 : -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[512], again[512], err[256];
    if (fuzz_scratch_file(path, sizeof(path), NULL, "checkpoint") < 0 ||
        fuzz_scratch_file(again, sizeof(again), NULL, "written-checkpoint") < 0 || fuzz_write_file(path, data, size) < 0)
        abort();

    offset_checkpoint_entry_t *offsets = NULL, *offsets_back = NULL;
    size_t n = 0, n_back = 0;
    if (offset_checkpoint_read(path, &offsets, &n, err, sizeof(err)) == PLOG_OK) {
        FUZZ_CHECK(offset_checkpoint_write(again, offsets, n) == PLOG_OK, "cannot write %zu offsets back", n);
        int rc = offset_checkpoint_read(again, &offsets_back, &n_back, err, sizeof(err));
        FUZZ_CHECK(rc == PLOG_OK, "offsets written back do not read: %s", err);
        FUZZ_CHECK(n_back == n, "%zu offsets read back as %zu", n, n_back);
        for (size_t i = 0; i < n; i++)
            FUZZ_CHECK(strcmp(offsets[i].topic, offsets_back[i].topic) == 0 &&
                           offsets[i].partition == offsets_back[i].partition &&
                           offsets[i].offset == offsets_back[i].offset,
                       "offset entry %zu reads back different", i);
        free(offsets_back);
        unlink(again);
    }
    free(offsets);

    epoch_entry_t *epochs = NULL, *epochs_back = NULL;
    if (epoch_checkpoint_read(path, &epochs, &n, err, sizeof(err)) == PLOG_OK) {
        FUZZ_CHECK(epoch_checkpoint_write(again, epochs, n) == PLOG_OK, "cannot write %zu epochs back", n);
        int rc = epoch_checkpoint_read(again, &epochs_back, &n_back, err, sizeof(err));
        FUZZ_CHECK(rc == PLOG_OK, "epochs written back do not read: %s", err);
        FUZZ_CHECK(n_back == n, "%zu epochs read back as %zu", n, n_back);
        for (size_t i = 0; i < n; i++)
            FUZZ_CHECK(epochs[i].epoch == epochs_back[i].epoch && epochs[i].start_offset == epochs_back[i].start_offset,
                       "epoch entry %zu reads back different", i);
        free(epochs_back);
        unlink(again);
    }
    free(epochs);
    unlink(path);
    return 0;
}
