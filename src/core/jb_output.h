/* Output: the readable table on rank 0, one summary line per result, and the
 * JSON document with the run's metadata, written atomically at the end. */
#ifndef JB_OUTPUT_H
#define JB_OUTPUT_H

#include "jb_context.h"
#include "jb_json.h"

/* A result is a set of key/value fields: every field goes into the
 * JSON entry and the summary line; fields with show != 0 also become a
 * column of the readable table.  Rank 0 only; other ranks ignore the calls. */
void jb_result_begin(jb_ctx *ctx);
void jb_result_str(jb_ctx *ctx, const char *key, const char *value, int show);
void jb_result_int(jb_ctx *ctx, const char *key, long long value, int show);
void jb_result_num(jb_ctx *ctx, const char *key, double value, int show);
jb_json *jb_result_json(jb_ctx *ctx); /* for JSON-only parts (series, histograms) */
void jb_result_end(jb_ctx *ctx);

/* The JSON document of the run: its metadata (with both load samples: jb_finish takes the
 * end's first), config and results, written atomically to --json by rank 0, which says in
 * one line why it could not be (-1; else 0).  Collective: the metadata gathers every node's. */
int jb_output_document(jb_ctx *ctx);

#endif
