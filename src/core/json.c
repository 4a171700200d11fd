/* A small JSON builder: enough for the benchmarks' documents, with correct
 * string escaping and null for non-finite numbers. */
#include "jb_json.h"
#include "jb_parse.h" /* jb_add, jb_mul */

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void put(jb_json *j, const char *s, size_t n)
{
    size_t need;
    if (j->failed)
        return;
    if (jb_add(j->len, n + 1, &need)) {
        j->failed = 1;
        return;
    }
    if (need > j->cap) {
        size_t cap = j->cap ? j->cap : 4096;
        while (cap < need && !jb_mul(cap, 2, &cap))
            ;
        char *buf = cap >= need ? realloc(j->buf, cap) : NULL;
        if (!buf) {
            j->failed = 1;
            return;
        }
        j->buf = buf;
        j->cap = cap;
    }
    memcpy(j->buf + j->len, s, n);
    j->len += n;
    j->buf[j->len] = '\0';
}

static void puts_(jb_json *j, const char *s) { put(j, s, strlen(s)); }

static void putf(jb_json *j, const char *fmt, ...)
{
    char tmp[64];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    put(j, tmp, (size_t)n);
}

static void put_string(jb_json *j, const char *s)
{
    puts_(j, "\"");
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': puts_(j, "\\\""); break;
        case '\\': puts_(j, "\\\\"); break;
        case '\n': puts_(j, "\\n"); break;
        case '\r': puts_(j, "\\r"); break;
        case '\t': puts_(j, "\\t"); break;
        default:
            if (*p < 0x20)
                putf(j, "\\u%04x", *p);
            else
                put(j, (const char *)p, 1);
        }
    }
    puts_(j, "\"");
}

/* Comma, indentation and key before a new element. */
static void element(jb_json *j, const char *key)
{
    if (j->depth > 0) {
        if (!j->first[j->depth])
            puts_(j, ",");
        j->first[j->depth] = 0;
        puts_(j, "\n");
        for (int i = 0; i < j->depth; i++)
            puts_(j, "  ");
    }
    if (key) {
        put_string(j, key);
        puts_(j, ": ");
    }
}

static void open_(jb_json *j, const char *key, char open, char close)
{
    element(j, key);
    put(j, &open, 1);
    j->depth++;
    j->first[j->depth] = 1;
    j->closer[j->depth] = close;
}

void jb_json_init(jb_json *j)
{
    memset(j, 0, sizeof *j);
    put(j, "", 0);
}

void jb_json_free(jb_json *j)
{
    free(j->buf);
    memset(j, 0, sizeof *j);
}

void jb_json_object(jb_json *j, const char *key) { open_(j, key, '{', '}'); }
void jb_json_array(jb_json *j, const char *key) { open_(j, key, '[', ']'); }

void jb_json_end(jb_json *j)
{
    int empty = j->first[j->depth];
    char close = j->closer[j->depth];
    j->depth--;
    if (!empty) {
        puts_(j, "\n");
        for (int i = 0; i < j->depth; i++)
            puts_(j, "  ");
    }
    put(j, &close, 1);
}

void jb_json_str(jb_json *j, const char *key, const char *value)
{
    element(j, key);
    if (value)
        put_string(j, value);
    else
        puts_(j, "null");
}

void jb_json_num(jb_json *j, const char *key, double value)
{
    element(j, key);
    if (isfinite(value))
        putf(j, "%.17g", value);
    else
        puts_(j, "null");
}

void jb_json_int(jb_json *j, const char *key, long long value)
{
    element(j, key);
    putf(j, "%lld", value);
}

void jb_json_bool(jb_json *j, const char *key, int value)
{
    element(j, key);
    puts_(j, value ? "true" : "false");
}

void jb_json_nums(jb_json *j, const char *key, const double *v, size_t n)
{
    element(j, key);
    puts_(j, "[");
    for (size_t i = 0; i < n; i++) {
        if (i)
            puts_(j, ", ");
        if (isfinite(v[i]))
            putf(j, "%.6g", v[i]);
        else
            puts_(j, "null");
    }
    puts_(j, "]");
}

void jb_json_raw(jb_json *j, const char *key, const char *json_text)
{
    element(j, key);
    puts_(j, json_text);
}

void jb_json_hist(jb_json *j, const char *key, const jb_hist *h)
{
    /* Only the occupied bins: the full edge table is fixed and documented. */
    jb_json_object(j, key);
    jb_json_int(j, "bins_per_decade", JB_HIST_BINS_PER_DECADE);
    jb_json_int(j, "total", (long long)jb_hist_total(h));
    jb_json_array(j, "bins");
    for (int b = 0; b < JB_HIST_NBINS; b++) {
        if (!h->count[b])
            continue;
        jb_json_array(j, NULL);
        jb_json_num(j, NULL, jb_hist_lower(b));
        jb_json_num(j, NULL, jb_hist_upper(b));
        jb_json_int(j, NULL, (long long)h->count[b]);
        jb_json_end(j);
    }
    jb_json_end(j);
    jb_json_end(j);
}
