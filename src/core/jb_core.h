/* jitterbench shared core: what a benchmark's main.c includes.
 *
 * The core is layered: each piece has its own header and source, and includes
 * only pieces listed before it here, never one after, so it can be read, tested
 * and changed from the bottom up (tests/test_c_layers.py checks it).  Bottom first:
 *
 *   parse      checked sizes, a run's memory sum, option values       (no MPI)
 *   rng        the random streams: seeds, shuffles, variates          (no MPI)
 *   stats      statistics of an array, medians, histograms            (no MPI)
 *   json       the JSON builder                                       (no MPI)
 *   schedule   the order of a run's variants: shuffled rounds         (no MPI)
 *   hardware   the node's processor and caches, as the OS tells them  (no MPI)
 *   clock      the synchronised clock: offsets to rank 0's
 *   context    the run's state (jb_ctx), collective errors, checked allocation
 *   watchdog   --timeout
 *   files      outputs written atomically, inputs read and broadcast
 *   placement  every rank's node and CPUs, oversubscription
 *   load       the load beside the run: /proc/loadavg and steal, start and end
 *   network    every node's network devices
 *   output     the table, the summary lines, the JSON document
 *   robust     a robust centre and scale of values spread over tasks
 *   calls      per-call statistics over tasks: MAX, AVG, whose maximum
 *   call_start when each timed call starts: a barrier or a window, the
 *              variants' turns, a stopping rule
 *   inject     calibrated noise (--inject)
 *   options    the common options: defaults, parsing, help
 *   run        start-up and tear-down: MPI, the nodes, the timer, the
 *              placement and clocks once the options are parsed; the
 *              JSON document and MPI_Finalize at the end
 *
 * A piece's header is jb_<piece>.h, its source <piece>.c.  The order of the
 * includes below is that order; the benchmarks' kernels live in their own
 * folders (src/<benchmark>/), above all of it. */
#ifndef JB_CORE_H
#define JB_CORE_H

#include "jb_parse.h"
#include "jb_rng.h"
#include "jb_stats.h"
#include "jb_json.h"
#include "jb_schedule.h"
#include "jb_hardware.h"
#include "jb_clock.h"
#include "jb_context.h"
#include "jb_watchdog.h"
#include "jb_files.h"
#include "jb_placement.h"
#include "jb_load.h"
#include "jb_network.h"
#include "jb_output.h"
#include "jb_robust.h"
#include "jb_calls.h"
#include "jb_call_start.h"
#include "jb_inject.h"
#include "jb_options.h"
#include "jb_run.h"

#endif
