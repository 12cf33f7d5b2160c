/* nb.h: Jupyter notebooks (nbformat 4) in and out of the executor. In: an
 * .ipynb's code cells become the cells' code (for the checks and the
 * import scan) and a run's script, the driver sandbox/notebook.py with the
 * notebook (exec_run, spec->notebook). Out: a kernel's cells appended, one
 * by one, to the workspace's output/notebook.ipynb (exec_kernel_cell). */
#ifndef RMS_NB_H
#define RMS_NB_H

#include <stddef.h>

#include "executor.h"

#define NB_JSON_DEPTH 64                /* nesting of a notebook's JSON */
#define NB_OUT_NAME "notebook.ipynb"    /* a kernel's cells, in the workspace's output/ */
#define NB_OUT_MAX (32 * 1024 * 1024)   /* bytes of notebook.ipynb: past it images are left out */
#define NB_IMAGE_MAX (8 * 1024 * 1024)  /* bytes of one PNG put into notebook.ipynb */
#define NB_NAME_MAX 128                 /* bytes of an executed notebook's file name */

/* The notebook sandbox/notebook.py is, built in (its driver). */
extern const char nb__py_notebook[];

/* Reads the notebook text (len bytes; spec->notebook's) and makes:
 * *cells, its code cells' sources joined by blank lines, for the checks
 * and the import scan; *script, the run's script.py (display.py, the
 * driver, and the call with the notebook, outputs cleared, which writes
 * the executed notebook as output/NAME: name made a safe file name ending
 * in .ipynb). Both NUL-terminated, caller frees. 0; -EINVAL with a
 * one-line reason in err (not JSON, not a notebook of nbformat 4, a cell
 * that is not one, no code cells); -ENOMEM. */
int nb_script(const char *text, size_t len, const char *name, const struct exec_limits *lim, char **cells,
              size_t *cells_len, char **script, size_t *script_len, char *err, size_t errlen) must_check;

/* The driver's last line, "the notebook failed at cell N: ...", from the
 * end of log; NULL when it has none. Caller frees. */
char *nb_failure(const struct result_log *log);

/* Appends the cell r ran (its code, what it printed, its value, the PNGs it
 * made, its error) to output/notebook.ipynb of the workspace (out_fd: its
 * output/), making the notebook when there is none (or when what is there
 * is not one). Never follows a symlink; written by a rename. 0 or -errno. */
int nb_out_cell(int out_fd, const char *code, size_t code_len, const struct result *r) must_check;

#endif
