/* jb-jacobi: the Jacobi inverter of a lattice Laplacian in two dimensions
 * (J. Hein, S. Booth, M. Bull, "Exchanging multiple messages via MPI",
 * section 8), its halos exchanged by 4 x MPI_Sendrecv or by Irecv/Isend and
 * one MPI_Waitall(8).  Each iteration is timed in two parts, halo and
 * compute; the per-call MAX/AVG over tasks of the halo as in jb-halo, and the
 * fastest of --trials trials as the study compared "the fastest out of 30". */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jacobi.h"
#include "jb_core.h"

static const char usage[] =
    "Jacobi iterations on a periodic 2-D lattice split over a grid of tasks.\n"
    "  --lattice NXxNY       the whole lattice, split evenly over the grid of tasks\n"
    "  --local LXxLY         or each task's part, the lattice following from the grid\n"
    "                        [210x252: the study's 6720x8064 on 32x32 tasks]\n"
    "  --dims PXxPY          the grid of tasks [MPI_Dims_create]\n"
    "  --halo LIST           sendrecv (4 x MPI_Sendrecv), waitall (4 x Irecv, 4 x Isend,\n"
    "                        MPI_Waitall(8)), or all [all]\n"
    "  --trials N            iterate --calls times N times over, from the same start, and\n"
    "                        report the fastest trial too [1]; shuffled (--order), the halo\n"
    "                        methods take turns a trial at a time: a round is a trial\n"
    "  --series              per-iteration MAX and AVG of the halo in the JSON\n"
    JB_NOISE_USAGE
    "                        (in the timed halo exchange: a known slowdown of it)\n"
    "  (--calls: iterations per trial)\n";

typedef struct {
    int dims[2], lattice[2], local[2];
    int halos[NHALOS];
    int series;
    long trials, timed; /* --trials, and the timed iterations of one result: calls x trials */
    jb_noise noise;     /* --inject: calibrated waits in the timed halo exchange */
} jacobi_options;

/* A shape of exactly two numbers, "AxB", for the option being parsed. */
static void two_numbers(jb_ctx *ctx, const char *option, const char *form, int out[2])
{
    char err[JB_ERRLEN];
    int n;
    jb_option(ctx, option, jb_parse_dims(optarg, 2, out, &n, err), err);
    if (n != 2)
        jb_fail(ctx, "%s: '%s' is not %s", option, optarg, form);
}

static void parse(jb_ctx *ctx, int argc, char **argv, jacobi_options *o)
{
    static const struct option longopts[] = {
        {"lattice", required_argument, NULL, 'L'}, {"local", required_argument, NULL, 'l'},
        {"dims", required_argument, NULL, 'd'},    {"halo", required_argument, NULL, 'H'},
        {"trials", required_argument, NULL, 'T'},  {"series", no_argument, NULL, 'S'},
        {"inject", required_argument, NULL, 'i'},  {"inject-by", required_argument, NULL, 'B'}, JB_INJECT_TASKS_LONGOPT,
        JB_COMMON_LONGOPTS};
    int c, given_lattice = 0, given_local = 0, given_halos = 0;
    char err[JB_ERRLEN];
    memset(o, 0, sizeof *o);
    o->trials = 1;
    o->local[0] = 210, o->local[1] = 252;
    while ((c = jb_getopt(ctx, longopts)) != -1) {
        switch (c) {
        case 'L': two_numbers(ctx, "--lattice", "NXxNY", o->lattice), given_lattice = 1; break;
        case 'l': two_numbers(ctx, "--local", "LXxLY", o->local), given_local = 1; break;
        case 'd': two_numbers(ctx, "--dims", "PXxPY", o->dims); break;
        case 'H':
            jb_option(ctx, "--halo", jb_parse_name_list(optarg, jacobi_halo_names, NULL, o->halos, err), err);
            given_halos = 1;
            break;
        case 'T': jb_option(ctx, "--trials", jb_parse_long(optarg, 1, 1000, &o->trials, err), err); break;
        case 'S': o->series = 1; break;
        case 'i': jb_noise_parse(ctx, "--inject", optarg, &o->noise); break;
        case 'B': jb_noise_parse_by(ctx, optarg, &o->noise); break;
        case JB_OPT_INJECT_TASKS: jb_noise_parse_tasks(ctx, optarg, &o->noise); break;
        default: jb_common_option(ctx, c, optarg);
        }
    }
    jb_options_done(ctx, optind);
    if (given_lattice && given_local)
        jb_fail(ctx, "--lattice and --local: give one of them");
    if (!o->dims[0])
        MPI_Dims_create(ctx->size, 2, o->dims);
    if ((long)o->dims[0] * o->dims[1] != ctx->size)
        jb_fail(ctx, "--dims: a grid of %ld tasks does not hold the %d tasks", (long)o->dims[0] * o->dims[1], ctx->size);
    for (int k = 0; k < 2; k++) {
        if (given_lattice) {
            if (o->lattice[k] % o->dims[k])
                jb_fail(ctx, "--lattice: %d points in %c do not split evenly over %d tasks", o->lattice[k], "xy"[k],
                        o->dims[k]);
            o->local[k] = o->lattice[k] / o->dims[k];
        } else if ((long)o->local[k] * o->dims[k] > 1L << 30) {
            jb_fail(ctx, "--local: %d points in %c on %d tasks make a lattice above 2^30 points a side", o->local[k],
                    "xy"[k], o->dims[k]);
        } else {
            o->lattice[k] = o->local[k] * o->dims[k];
        }
    }
    if (!given_halos)
        for (int h = 0; h < NHALOS; h++)
            o->halos[h] = 1;
    jb_memory m = {0};
    size_t points;
    if (jb_mul((size_t)o->local[0] + 2, (size_t)o->local[1] + 2, &points))
        jb_fail(ctx, "--local: %dx%d points overflow", o->local[0], o->local[1]);
    jb_memory_add(&m, "--local (the field, the next iterate and the source)", 3, points * sizeof(float));
    jb_memory_add(&m, "--local (8 halo buffers)", 8, ((size_t)(o->local[0] > o->local[1] ? o->local[0] : o->local[1]) + 2) * sizeof(float));
    o->timed = jb_calls_of_trials(ctx, o->trials, "iterations");
    long methods = 0;
    for (int method = 0; method < NHALOS; method++)
        methods += o->halos[method];
    jb_calls_memory_variants(&m, o->timed, 3 * methods);
    jb_memory_check(ctx, &m);
}

/* The study's problem: u = 0 and a source that varies over the whole lattice. */
static void start(jacobi *j)
{
    size_t points = ((size_t)j->lx + 2) * ((size_t)j->ly + 2);
    memset(j->u, 0, points * sizeof *j->u);
    memset(j->next, 0, points * sizeof *j->next);
    for (int i = 1; i <= j->lx; i++)
        for (int k = 1; k <= j->ly; k++)
            JACOBI_AT(j, j->f, i, k) = (float)((7L * (j->x0 + i - 1) + 13L * (j->y0 + k - 1)) % 17) / 17.0f;
}

/* A weighted sum of the field over the lattice: equal for every halo method and,
 * but for the order of the sum, every grid of tasks, when the halos are right. */
static double checksum(const jacobi *j)
{
    double mine = 0, all = 0;
    for (int i = 1; i <= j->lx; i++)
        for (int k = 1; k <= j->ly; k++)
            mine += JACOBI_AT(j, j->u, i, k) * (1 + (3L * (j->x0 + i - 1) + 5L * (j->y0 + k - 1)) % 11);
    MPI_Reduce(&mine, &all, 1, MPI_DOUBLE, MPI_SUM, 0, j->comm);
    return all;
}

/* --validate: u = cos(2 pi x / NX) + cos(2 pi y / NY) with f = 0 is a sum of two eigenmodes
 * of the Jacobi iteration, so after n sweeps it is exactly
 * lx^n cos(2 pi x / NX) + ly^n cos(2 pi y / NY), lx = (1 + cos(2 pi / NX)) / 2 (ly alike), at
 * every point of every grid of tasks: a halo from the wrong side, neighbour or line breaks it
 * at the task's edge.  Returns whether this task's field is off by more than rounding. */
static int wrong_halos(jacobi *j, const jacobi_options *o, int method, long sweeps)
{
    const double two_pi = 6.283185307179586;
    double nx = o->lattice[0], ny = o->lattice[1];
    for (int i = 0; i <= j->lx + 1; i++)
        for (int k = 0; k <= j->ly + 1; k++) {
            JACOBI_AT(j, j->u, i, k) = (float)(cos(two_pi * (j->x0 + i - 1) / nx) + cos(two_pi * (j->y0 + k - 1) / ny));
            JACOBI_AT(j, j->f, i, k) = 0;
        }
    for (long n = 0; n < sweeps; n++) {
        jacobi_halo(j, method);
        jacobi_sweep(j);
    }
    double decay_x = pow((1 + cos(two_pi / nx)) / 2, (double)sweeps);
    double decay_y = pow((1 + cos(two_pi / ny)) / 2, (double)sweeps);
    double worst = 0;
    for (int i = 1; i <= j->lx; i++)
        for (int k = 1; k <= j->ly; k++) {
            double exact = decay_x * cos(two_pi * (j->x0 + i - 1) / nx) + decay_y * cos(two_pi * (j->y0 + k - 1) / ny);
            worst = fmax(worst, fabs(JACOBI_AT(j, j->u, i, k) - exact));
        }
    return worst > 1e-6 * (double)(sweeps + 10); /* float rounding: some 1e-7 per sweep */
}

/* One halo method's results, kept over the rounds: its three timings and its trials' checksums. */
typedef struct {
    jb_calls halo, compute, step;
    double first_sum, sum;
    int differs;
} jacobi_variant;

/* One share of a method's iterations (jb_schedule): its trials (one a round when shuffled),
 * each from the same start. */
static void run_share(jb_ctx *ctx, jacobi_options *o, jacobi *j, int method, const jb_schedule *sch,
                      jacobi_variant *w)
{
    long calls = ctx->opt.calls, trial = sch->first / calls;
    jb_calls_share(ctx, &w->halo, sch, "halo %s,", jacobi_halo_names[method]);
    if (sch->round == 0) {
        if (ctx->opt.validate) {
            long sweeps = calls < 100 ? calls : 100;
            jb_fail_if_any(ctx, wrong_halos(j, o, method, sweeps),
                           "--validate: halo %s: after %ld sweeps the field is not the exact iterate of "
                           "cos(2 pi x / NX) + cos(2 pi y / NY)", jacobi_halo_names[method], sweeps);
        }
        jb_calls_clear(&w->compute);
        jb_calls_clear(&w->step);
    }
    for (; trial < sch->end / calls; trial++) {
        start(j);
        for (long c = trial ? 0 : -sch->warm; c < calls; c++) {
            if (c == 0 && trial == 0 && sch->warm)
                start(j); /* the warm-up iterations leave the problem as it began */
            long call = trial * calls + c;
            double t0 = jb_call_start(ctx, &w->halo, j->comm, c < 0 ? c : call);
            jb_noise_maybe(&o->noise);
            jacobi_halo(j, method);
            double t1 = MPI_Wtime();
            jacobi_sweep(j);
            double t2 = MPI_Wtime();
            if (c >= 0) {
                jb_calls_record(&w->halo, call, (t1 - t0) * 1e6);
                jb_calls_record(&w->compute, call, (t2 - t1) * 1e6);
                jb_calls_record(&w->step, call, (t2 - t0) * 1e6);
            }
        }
        w->sum = checksum(j);
        if (trial == 0)
            w->first_sum = w->sum;
        w->differs |= ctx->rank == 0 && w->sum != w->first_sum;
    }
}

/* One method's result, after every round. */
static void report(jb_ctx *ctx, const jacobi_options *o, jacobi *j, int method, jacobi_variant *w)
{
    long calls = ctx->opt.calls;
    jb_calls *halo = &w->halo, *compute = &w->compute, *step = &w->step;
    double sum = w->sum;
    int differs = w->differs;
    jb_fail_if_any(ctx, differs, "halo %s: a trial ended on another field than the first: the run is not repeatable",
                   jacobi_halo_names[method]);
    jb_calls_reduce(halo, j->comm);
    jb_calls_reduce(compute, j->comm);
    jb_calls_reduce(step, j->comm);
    if (ctx->rank != 0)
        return;
    long best = 0;
    double fastest_step = jb_calls_fastest_trial(step, calls, &best);
    char dims[32], lattice[32], local[32];
    snprintf(dims, sizeof dims, "%dx%d", o->dims[0], o->dims[1]);
    snprintf(lattice, sizeof lattice, "%dx%d", o->lattice[0], o->lattice[1]);
    snprintf(local, sizeof local, "%dx%d", o->local[0], o->local[1]);
    jb_result_begin(ctx);
    jb_result_str(ctx, "halo", jacobi_halo_names[method], 1);
    jb_result_str(ctx, "dims", dims, 1);
    jb_result_str(ctx, "lattice", lattice, 0);
    jb_result_str(ctx, "local", local, 1);
    jb_result_int(ctx, "halo_x_bytes", (long long)jacobi_halo_floats(j, X_DOWN) * (long long)sizeof(float), 0);
    jb_result_int(ctx, "halo_y_bytes", (long long)jacobi_halo_floats(j, Y_DOWN) * (long long)sizeof(float), 0);
    jb_result_int(ctx, "tasks", ctx->size, 0);
    jb_result_int(ctx, "calls", calls, 0);
    jb_result_int(ctx, "trials", o->trials, 0);
    jb_calls_report(ctx, halo, o->series);
    jb_result_num(ctx, "compute_us", jb_calls_mean_max(compute), 1);
    jb_result_num(ctx, "step_us", jb_calls_mean_max(step), 1);
    jb_result_num(ctx, "fastest_step_us", fastest_step, 1);
    jb_result_num(ctx, "fastest_halo_us", jb_calls_trial_mean_max(halo, best * calls, calls), 0);
    jb_result_num(ctx, "fastest_compute_us", jb_calls_trial_mean_max(compute, best * calls, calls), 0);
    jb_result_num(ctx, "checksum", sum, 0);
    jb_result_end(ctx);
}

int main(int argc, char **argv)
{
    jb_ctx ctx;
    jacobi_options o;
    jb_init(&ctx, &argc, &argv, "jacobi", usage, 2000, 10);
    parse(&ctx, argc, argv, &o);

    jacobi j = {.lx = o.local[0], .ly = o.local[1]};
    int periods[2] = {1, 1}, coords[2];
    MPI_Cart_create(ctx.world, 2, o.dims, periods, 0, &j.comm);
    MPI_Cart_coords(j.comm, ctx.rank, 2, coords);
    j.x0 = coords[0] * j.lx;
    j.y0 = coords[1] * j.ly;
    MPI_Cart_shift(j.comm, 0, 1, &j.nb[X_DOWN], &j.nb[X_UP]);
    MPI_Cart_shift(j.comm, 1, 1, &j.nb[Y_DOWN], &j.nb[Y_UP]);
    size_t points = ((size_t)j.lx + 2) * ((size_t)j.ly + 2), line = (size_t)(j.lx > j.ly ? j.lx : j.ly) + 2;
    j.u = jb_alloc(&ctx, points, sizeof(float), "--local");
    j.next = jb_alloc(&ctx, points, sizeof(float), "--local");
    j.f = jb_alloc(&ctx, points, sizeof(float), "--local");
    for (int d = 0; d < 4; d++) {
        j.send[d] = jb_alloc(&ctx, line, sizeof(float), "--local");
        j.recv[d] = jb_alloc(&ctx, line, sizeof(float), "--local");
    }

    jb_json *cfg = &ctx.config;
    jb_json_str(cfg, "call", "one iteration: a barrier (or --sync window), the halo exchange, then the sweep; "
                             "each part timed on every task");
    jb_json_str(cfg, "max_us avg_us ...", "of the halo exchange alone (its statistics as below)");
    jb_json_str(cfg, "compute_us step_us", "mean over iterations of the maximum over tasks of the sweep, and of "
                                           "the halo exchange and sweep together");
    jb_json_str(cfg, "fastest_step_us", "of --trials trials of calls iterations each, from the same start, the least "
                                        "mean over the trial's iterations of the per-iteration MAX of step_us (the "
                                        "study's fastest of 30); fastest_halo_us and fastest_compute_us that trial's");
    jb_json_str(cfg, "checksum", "sum over the lattice of the field times 1 + (3x + 5y) mod 11 after a trial: "
                                 "the same for both halo methods, and for every grid but for rounding");
    jb_json_str(cfg, "problem", "u = (u[x-1][y] + u[x+1][y] + u[x][y-1] + u[x][y+1] + f) / 4 in 4-byte floats, "
                                "periodic, from u = 0 with f = ((7x + 13y) mod 17) / 17");
    jb_json_int(cfg, "trials", o.trials);
    jb_noise_start(&ctx, &o.noise);
    jb_calls_describe(cfg);
    if (ctx.rank == 0)
        printf("# jb-jacobi: %dx%d lattice on %dx%d tasks (%dx%d each); %ld iterations a trial, %ld trial(s), after "
               "%ld warm-up; times in us per iteration\n",
               o.lattice[0], o.lattice[1], o.dims[0], o.dims[1], j.lx, j.ly, ctx.opt.calls, o.trials, ctx.opt.warmup);

    /* the halo methods, in their order; a round is a trial (each starts the field afresh) */
    int variants = 0, method_of[NHALOS];
    for (int method = 0; method < NHALOS; method++)
        if (o.halos[method])
            method_of[variants++] = method;
    jacobi_variant *vs = jb_alloc(&ctx, (size_t)variants, sizeof *vs, "--halo");
    for (int v = 0; v < variants; v++) {
        jb_calls_init(&ctx, &vs[v].halo, o.timed);
        jb_calls_init(&ctx, &vs[v].compute, o.timed);
        jb_calls_init(&ctx, &vs[v].step, o.timed);
    }
    ctx.opt.rounds = o.trials;
    jb_schedule sch;
    jb_calls_schedule(&ctx, &sch, variants, o.timed);
    while (jb_schedule_next(&sch))
        run_share(&ctx, &o, &j, method_of[sch.variant], &sch, &vs[sch.variant]);
    long timed[NHALOS];
    for (int v = 0; v < variants; v++)
        timed[v] = vs[v].halo.timed;
    jb_calls_schedule_record(&ctx, &sch, timed);
    for (int v = 0; v < variants; v++) {
        report(&ctx, &o, &j, method_of[v], &vs[v]);
        jb_calls_free(&vs[v].halo);
        jb_calls_free(&vs[v].compute);
        jb_calls_free(&vs[v].step);
    }
    free(vs);
    for (int d = 0; d < 4; d++) {
        free(j.send[d]);
        free(j.recv[d]);
    }
    free(j.u);
    free(j.next);
    free(j.f);
    MPI_Comm_free(&j.comm);
    return jb_finish(&ctx);
}
