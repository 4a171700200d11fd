/* Files: outputs checked before the run and written whole or not at all;
 * inputs read on rank 0 only if they are bounded regular files. */
#ifndef JB_FILES_H
#define JB_FILES_H

#include <stddef.h>
#include <stdio.h>

#include "jb_context.h"

/* An output (--json, --samples) is checked before the run: not empty, not a
 * directory or device, in a folder that exists and can be written.  Collective. */
void jb_check_output(jb_ctx *ctx, const char *optname, const char *path);
/* Opens path's temporary twin for writing; jb_output_close fsyncs it and
 * renames it over path (or removes it and returns -1 with a message in err). */
FILE *jb_output_open(const char *path, char *tmp, size_t tmp_len, char *err);
int jb_output_close(FILE *f, const char *tmp, const char *path, char *err);
/* Reads a regular file of at most max_bytes on rank 0 and broadcasts it (in
 * chunks: 64-bit lengths); every rank gets it NUL-terminated.  Collective;
 * a missing, special (FIFO, device, folder) or oversized file fails the run. */
char *jb_read_input(jb_ctx *ctx, const char *optname, const char *path, size_t max_bytes);

#endif
