/* truncation.c -- see truncation.h. */
#include "truncation.h"

trunc_step_t truncation_start(const epoch_entry_t *e, size_t n)
{
    /* No epoch: the log is empty (every batch carries one), so nothing can
     * diverge. */
    if (n == 0)
        return (trunc_step_t){.action = TRUNC_FETCH};
    return (trunc_step_t){.action = TRUNC_ASK, .epoch = e[n - 1].epoch};
}

trunc_step_t truncation_next(const epoch_entry_t *e, size_t n, int64_t leo, int32_t asked, int32_t leader_epoch,
                             int64_t leader_end)
{
    if (leader_epoch < 0 || leader_end < 0 || leader_epoch > asked)
        return (trunc_step_t){.action = TRUNC_RETRY};
    int32_t mine;
    int64_t my_end;
    epoch_cache_end_offset(e, n, leo, leader_epoch, &mine, &my_end);
    if (mine == leader_epoch) {
        /* Both logs hold this epoch: they agree up to where the shorter ends. */
        int64_t cut = leader_end < my_end ? leader_end : my_end;
        return (trunc_step_t){.action = TRUNC_CUT, .offset = cut};
    }
    if (mine >= 0 && mine < leader_epoch)
        return (trunc_step_t){.action = TRUNC_ASK, .epoch = mine};
    /* Cannot happen with a sane cache (leader_epoch <= asked <= our latest);
     * ask again from the start rather than guess. */
    return (trunc_step_t){.action = TRUNC_RETRY};
}
