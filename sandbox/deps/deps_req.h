/* deps_req.h: the requirement parser: requirement strings (PEP 508 checks,
 * PEP 503 names) and the import-name map (deps_req.c), over the PEP 440
 * versions of deps_version.h. It knows nothing of sets, environments or
 * the package store; deps.h hands it on. */
#ifndef RMS_DEPS_REQ_H
#define RMS_DEPS_REQ_H

#include <stdbool.h>
#include <stddef.h>

#include "deps_version.h"
#include "util.h"

#define DEPS_MAP_MAX (1u << 20)  /* bytes of import-names.tsv */

/* ------------------------------------------------------- requirements */

/* PEP 503 normalisation of a project name: runs of -_. become one '-',
 * lower case. Returns a new string (caller frees) or NULL on ENOMEM. */
char *deps_normalize_name(const char *name, size_t len);

/* Checks one requirement string: a PEP 508 requirement (name, extras,
 * version specifiers, environment marker), nothing else. Refused: installer
 * options (anything starting with '-'), local paths, URLs and `name @ URL`
 * (unless allow_direct), control characters, more than EXEC_REQUIREMENT_MAX bytes.
 * On success *name (PEP 503 normalised) and *canon (the requirement in a
 * canonical spelling: normalised name, sorted extras, no blanks in the
 * specifiers) are new strings (caller frees; either may be NULL to skip).
 * On refusal returns -EINVAL with a one-line reason in err. */
int deps_check_requirement(const char *spec, bool allow_direct, char **name, char **canon, char *err,
                           size_t errlen) must_check;

/* ----------------------------------------------------- the import map */

/* The import name -> distribution map (data/import-names.tsv, built into
 * the program by common/embed.sh, or DATA_DIR/import-names.tsv when the key
 * data_dir names a directory: sorted IMPORT<TAB>DIST lines after '#'
 * comments). */
#define DEPS_MAP_FILE "import-names.tsv"
extern const char deps__map_import_names[];
struct deps_map {
    char *text;    /* the file, its lines cut in place */
    const char **imports;
    const char **dists;
    size_t n;
};
/* Loads and checks the map (sorted, unique, one tab per line): the built-in
 * one when data_dir is NULL or empty, else data_dir's file. 0, -errno with
 * the file in err, or -EINVAL with the line in err. deps_map_free() in
 * every case. */
int deps_map_load(const char *data_dir, struct deps_map *m, char *err, size_t errlen) must_check;
void deps_map_free(struct deps_map *m);
/* The distribution for an import name (borrowed), or the name itself when
 * the map does not list it. */
const char *deps_map_lookup(const struct deps_map *m, const char *import);

#endif
