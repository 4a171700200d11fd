/* A small JSON builder (no MPI, unit-tested alone). */
#ifndef JB_JSON_H
#define JB_JSON_H

#include <stddef.h>

#include "jb_stats.h" /* jb_hist */

/* ---- JSON builder --------------------------------------------------------
 * Appends to a growing buffer; keys are NULL inside arrays.  Non-finite
 * numbers become null (JSON has no NaN).  When memory runs out the builder
 * stops appending and sets failed; the writer refuses such a document. */
typedef struct {
    char *buf;
    size_t len, cap;
    int failed;              /* out of memory: the document is incomplete */
    int depth;
    unsigned char first[64]; /* no element written yet at this depth */
    char closer[64];         /* the bracket that closes this depth */
} jb_json;

void jb_json_init(jb_json *j);
void jb_json_free(jb_json *j);
void jb_json_object(jb_json *j, const char *key);
void jb_json_array(jb_json *j, const char *key);
void jb_json_end(jb_json *j); /* closes the innermost object or array */
void jb_json_str(jb_json *j, const char *key, const char *value);
void jb_json_num(jb_json *j, const char *key, double value);
void jb_json_int(jb_json *j, const char *key, long long value);
void jb_json_bool(jb_json *j, const char *key, int value);
void jb_json_nums(jb_json *j, const char *key, const double *v, size_t n);
void jb_json_raw(jb_json *j, const char *key, const char *json_text);
void jb_json_hist(jb_json *j, const char *key, const jb_hist *h);

#endif
