/* SPDX-License-Identifier: MIT */
/*
 * The restart policy of isolated plugins: a ring of the last restarts' times for the limit per
 * minute, and a streak of restarts that served nothing for the back-off.
 */
#include "isolation/supervisor.h"

#include <stdlib.h>

int sup_init(sup_state *state, size_t limit)
{
    state->limit = limit;
    state->next = 0;
    state->streak = 0;
    state->times = NULL;
    if (limit == 0)
        return 0;
    state->times = malloc(limit * sizeof *state->times);
    if (!state->times)
        return -1;
    /* Long enough ago that none counts. */
    for (size_t i = 0; i < limit; i++)
        state->times[i] = -(long long)SUP_WINDOW_MS * 2;
    return 0;
}

void sup_fini(sup_state *state)
{
    free(state->times);
    state->times = NULL;
}

long long sup_on_crash(sup_state *state, long long now_ms, bool served)
{
    if (state->limit == 0)
        return -1;
    /* The oldest of the last limit restarts: within the minute, all limit are. */
    if (now_ms - state->times[state->next] < SUP_WINDOW_MS)
        return -1;
    state->times[state->next] = now_ms;
    state->next = (state->next + 1) % state->limit;
    /* A host that answered calls was doing its job: its crash starts no back-off. */
    if (served)
        state->streak = 0;
    unsigned streak = state->streak++;
    if (streak == 0)
        return 0;
    long long delay = SUP_FIRST_DELAY_MS;
    for (unsigned i = 1; i < streak && delay < SUP_MOST_DELAY_MS; i++)
        delay *= 2;
    return delay < SUP_MOST_DELAY_MS ? delay : SUP_MOST_DELAY_MS;
}
