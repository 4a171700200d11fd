/* The network devices each node offers, as the kernel reports them. */
#ifndef JB_NETWORK_H
#define JB_NETWORK_H

#include "jb_context.h"
#include "jb_json.h"

/* Records each node's network devices, their state and rate, under "network"
 * in j and on a "# network:" line (collective over the node leaders). */
void jb_network(jb_ctx *ctx, jb_json *j);

#endif
