/* The order of a run's variants: rounds of shuffled turns, drawn from the seed. */
#include "jb_schedule.h"

#include <stdlib.h>
#include <string.h>

/* A stream of the RNG of its own, so the order never shifts a benchmark's other
 * random numbers (noise injection, random peers) drawn from the same seed. */
#define ORDER_STREAM 0x6f72646572ULL /* "order" */

long jb_schedule_share_start(long calls, long rounds, long r)
{
    /* calls <= 1e8 and r <= rounds <= calls (parse limits): the product fits a long */
    return (long)((long long)calls * r / rounds);
}

/* Fisher and Yates: order becomes a uniform permutation of 0 .. n-1. */
static void shuffle(jb_rng *rng, int *order, int n)
{
    for (int i = 0; i < n; i++)
        order[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(jb_rng_uniform(rng) * (i + 1));
        int t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
}

static void draw_round(jb_schedule *s)
{
    if (s->shuffled)
        shuffle(&s->rng, s->order, s->variants);
    else
        for (int i = 0; i < s->variants; i++)
            s->order[i] = i;
}

int jb_schedule_init(jb_schedule *s, int variants, long calls, long warmup, long rounds, int shuffled,
                     uint64_t seed)
{
    memset(s, 0, sizeof *s);
    s->variants = variants;
    s->calls = calls;
    s->warmup = warmup;
    s->shuffled = shuffled;
    s->rounds = !shuffled ? 1 : rounds < calls ? rounds : calls; /* no round without a call */
    s->seed = seed;
    s->at = -1;
    s->order = calloc(variants > 0 ? (size_t)variants : 1, sizeof *s->order);
    s->settled = calloc(variants > 0 ? (size_t)variants : 1, sizeof *s->settled);
    if (!s->order || !s->settled) {
        jb_schedule_free(s);
        return -1;
    }
    jb_rng_seed(&s->rng, seed, ORDER_STREAM);
    draw_round(s);
    return 0;
}

int jb_schedule_next(jb_schedule *s)
{
    s->round_start = s->at < 0;
    do {
        if (s->variants <= 0 || s->round >= s->rounds || s->settled_count == s->variants)
            return 0;
        if (++s->at == s->variants) {
            s->round_start = 1;
            s->at = 0;
            if (++s->round == s->rounds)
                return 0;
            draw_round(s);
        }
    } while (s->settled[s->order[s->at]]);
    s->variant = s->order[s->at];
    s->first = jb_schedule_share_start(s->calls, s->rounds, s->round);
    s->end = jb_schedule_share_start(s->calls, s->rounds, s->round + 1);
    s->warm = s->round == 0 ? s->warmup : 0;
    return 1;
}

void jb_schedule_record(const jb_schedule *s, jb_json *j)
{
    jb_json_object(j, "order");
    jb_json_str(j, "method", s->shuffled ? "shuffled" : "given");
    jb_json_int(j, "seed", (long long)s->seed);
    jb_json_int(j, "rounds", s->rounds);
    jb_json_int(j, "variants", s->variants);
    jb_json_str(j, "means", "variants are numbered as the results list them; in round r each runs its timed "
                            "calls [r calls / rounds, (r + 1) calls / rounds), in the order given for that "
                            "round; warm-up calls before a variant's first share only");
    jb_json_array(j, "orders"); /* one list per round: the variants in the order they ran */
    jb_schedule replay;
    if (jb_schedule_init(&replay, s->variants, s->calls, 0, s->rounds, s->shuffled, s->seed) == 0) {
        for (long r = 0; r < replay.rounds; r++) {
            jb_json_array(j, NULL);
            for (int i = 0; i < replay.variants; i++)
                jb_json_int(j, NULL, replay.order[i]);
            jb_json_end(j);
            draw_round(&replay);
        }
        jb_schedule_free(&replay);
    }
    jb_json_end(j);
    jb_json_end(j);
}

void jb_schedule_settle(jb_schedule *s, int v)
{
    if (v >= 0 && v < s->variants && !s->settled[v]) {
        s->settled[v] = 1;
        s->settled_count++;
    }
}

void jb_schedule_free(jb_schedule *s)
{
    free(s->order);
    free(s->settled);
    s->order = NULL;
    s->settled = NULL;
}
