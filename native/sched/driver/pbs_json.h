/*
 * pbs_json.h - a minimal streaming JSON writer for the driver's reports.
 *
 * Values are written in the order of the calls; `key` is the member name inside an
 * object and must be NULL inside an array (and for the outermost value). Nesting is
 * limited to PBS_JSON_MAX_DEPTH levels. Doubles are written with %.9g and always
 * carry a '.' or an exponent; non-finite values become null.
 */
#ifndef PBS_JSON_H
#define PBS_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define PBS_JSON_MAX_DEPTH 16

typedef struct pbs_json {
    FILE *f;
    int depth;
    bool has_items[PBS_JSON_MAX_DEPTH];
} pbs_json;

void pbs_json_init(pbs_json *j, FILE *f);
void pbs_json_begin_object(pbs_json *j, const char *key);
void pbs_json_end_object(pbs_json *j);
void pbs_json_begin_array(pbs_json *j, const char *key);
void pbs_json_end_array(pbs_json *j);
void pbs_json_str(pbs_json *j, const char *key, const char *value); /* NULL: null */
void pbs_json_u64(pbs_json *j, const char *key, uint64_t value);
void pbs_json_f64(pbs_json *j, const char *key, double value);
void pbs_json_bool(pbs_json *j, const char *key, bool value);
void pbs_json_null(pbs_json *j, const char *key);

#endif /* PBS_JSON_H */
