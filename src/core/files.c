/* Files: outputs checked before the run and written whole or not at all;
 * inputs read on rank 0 only if they are bounded regular files, then
 * broadcast to every rank. */
#include "jb_files.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Rank 0 decides, every rank learns the reason (empty: fine) and fails alike. */
static void fail_if_reason(jb_ctx *ctx, char *reason, size_t len)
{
    MPI_Bcast(reason, (int)len, MPI_CHAR, 0, ctx->world);
    if (reason[0])
        jb_fail(ctx, "%s", reason);
}

static int temporary_name(const char *path, char *tmp, size_t tmp_len)
{
    int n = snprintf(tmp, tmp_len, "%s.tmp.%ld", path, (long)getpid());
    return n > 0 && (size_t)n < tmp_len ? 0 : -1;
}

void jb_check_output(jb_ctx *ctx, const char *optname, const char *path)
{
    char reason[JB_ERRLEN + 64] = "";
    if (ctx->rank == 0) {
        struct stat st;
        char tmp[4096];
        if (!*path)
            snprintf(reason, sizeof reason, "%s: an empty file name", optname);
        else if (path[strlen(path) - 1] == '/')
            snprintf(reason, sizeof reason, "%s: '%s' names a folder, not a file", optname, path);
        else if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
            snprintf(reason, sizeof reason, "%s: '%s' is a folder, not a file", optname, path);
        else if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) /* a rename would replace a device or FIFO */
            snprintf(reason, sizeof reason, "%s: '%s' exists and is not a regular file", optname, path);
        else if (temporary_name(path, tmp, sizeof tmp) != 0)
            snprintf(reason, sizeof reason, "%s: the file name is too long", optname);
        else {
            /* the very file the result will be written through, made and removed now */
            int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0644);
            if (fd < 0)
                snprintf(reason, sizeof reason, "%s: cannot write '%s': %s", optname, path, strerror(errno));
            else {
                close(fd);
                unlink(tmp);
            }
        }
    }
    fail_if_reason(ctx, reason, sizeof reason);
}

FILE *jb_output_open(const char *path, char *tmp, size_t tmp_len, char *err)
{
    if (temporary_name(path, tmp, tmp_len) != 0) {
        snprintf(err, JB_ERRLEN, "cannot write '%s': the file name is too long", path);
        return NULL;
    }
    FILE *f = fopen(tmp, "w");
    if (!f)
        snprintf(err, JB_ERRLEN, "cannot write '%s': %s", path, strerror(errno));
    return f;
}

int jb_output_close(FILE *f, const char *tmp, const char *path, char *err)
{
    int ok = !ferror(f) && fflush(f) == 0 && fsync(fileno(f)) == 0;
    int saved = errno;
    ok = fclose(f) == 0 && ok;
    if (ok && rename(tmp, path) == 0)
        return 0;
    snprintf(err, JB_ERRLEN, "cannot write '%s': %s", path, strerror(ok ? errno : saved ? saved : EIO));
    remove(tmp);
    return -1;
}

/* Rank 0's half of jb_read_input: the whole file, or a reason. */
static char *read_regular_file(const char *optname, const char *path, size_t max_bytes, uint64_t *len,
                               char *reason, size_t reason_len)
{
    struct stat st;
    /* stat first: opening a FIFO to read waits for a writer that may never come */
    if (stat(path, &st) != 0) {
        snprintf(reason, reason_len, "%s: cannot read '%s': %s", optname, path, strerror(errno));
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(reason, reason_len, "%s: '%s' is not a regular file", optname, path);
        return NULL;
    }
    if ((uint64_t)st.st_size > max_bytes) {
        snprintf(reason, reason_len, "%s: '%s' has %lld bytes, more than the %zu read", optname, path,
                 (long long)st.st_size, max_bytes);
        return NULL;
    }
    int fd = open(path, O_RDONLY | O_NONBLOCK); /* a FIFO swapped in after the stat opens at once */
    size_t size = (size_t)st.st_size, got = 0;
    char *text = fd >= 0 ? malloc(size + 2) : NULL;
    ssize_t n = 0;
    while (text && got <= size && (n = read(fd, text + got, size + 1 - got)) > 0)
        got += (size_t)n;
    if (fd < 0 || !text || n < 0 || got != size) {
        snprintf(reason, reason_len, "%s: cannot read '%s': %s", optname, path,
                 fd < 0 || n < 0 ? strerror(errno) : !text ? "out of memory" : "it changed while being read");
        free(text);
        text = NULL;
    }
    if (fd >= 0)
        close(fd);
    *len = got;
    return text;
}

char *jb_read_input(jb_ctx *ctx, const char *optname, const char *path, size_t max_bytes)
{
    char reason[JB_ERRLEN + 64] = "";
    uint64_t len = 0;
    char *text = NULL;
    if (ctx->rank == 0)
        text = read_regular_file(optname, path, max_bytes, &len, reason, sizeof reason);
    fail_if_reason(ctx, reason, sizeof reason);
    MPI_Bcast(&len, 1, MPI_UINT64_T, 0, ctx->world);
    if (ctx->rank != 0)
        text = jb_alloc(ctx, (size_t)len + 1, 1, optname);
    /* MPI counts are int: a chunk at a time */
    enum { CHUNK = 1 << 30 };
    for (uint64_t at = 0; at < len; at += CHUNK)
        MPI_Bcast(text + at, (int)(len - at < CHUNK ? len - at : CHUNK), MPI_CHAR, 0, ctx->world);
    text[len] = '\0';
    return text;
}
