/* Where each rank runs: its node and the CPUs the launcher bound it to. */
#ifndef JB_PLACEMENT_H
#define JB_PLACEMENT_H

#include "jb_context.h"

/* Records every rank's node and CPU set, and whether the launcher bound them
 * (collective; prints "# binding: ..." and warns when bound ranks share a CPU). */
void jb_placement(jb_ctx *ctx);

#endif
