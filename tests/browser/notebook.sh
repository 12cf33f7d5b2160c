#!/bin/bash
# The page's notebooks in a real browser: playwright-core
# (tests/package.json) driving Debian's chromium against nginx +
# `runmyscript serve` (which has kernels) on free loopback ports. The
# notebook mode (notebook.mjs), then Jupyter notebooks on the page
# (ipynb.mjs): an .ipynb whose third cell fails, opened with the form's
# file picker and run, and the notebook view's Download notebook, whose
# file is validated here against nbformat's schema. Each prints TAP, merged
# here. Screenshots go to tests/browser/notebook.out/ in the build tree,
# for a person to look at.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/browser/lib.sh"
TOKEN=notebook-token
STACK_CONF="auth_token = $TOKEN"
stack_start serve || { ok 1 "the server starts"; done_testing; exit 1; }
browser_out notebook
for t in notebook ipynb; do
    BASE=$BASE TOKEN=$TOKEN OUT=$OUT CHROMIUM=$CHROMIUM NB="$top_srcdir/tests/fixtures/notebooks/third-fails.ipynb" \
        "$NODE" "$top_srcdir/tests/browser/$t.mjs" >"$T/$t.tap"
    rc=$?
    tap_merge "" "$T/$t.tap"
    [ "$rc" = 0 ] || ok 1 "$t.mjs ended with status $rc"
done
# The download, as Jupyter reads it.
NBPY=""
for p in "$PYTHON3" /usr/bin/python3; do
    "$p" -c 'import nbformat' 2>/dev/null && { NBPY=$p; break; }
done
if [ -z "$NBPY" ] || [ ! -f "$OUT/notebook.ipynb" ]; then
    why="python3-nbformat is not installed"
    [ -n "$NBPY" ] && why="the page saved no download"
    skip "the downloaded notebook against nbformat's schema: $why"
else
    s=$("$NBPY" "$top_srcdir/tests/lib/check_notebook.py" "$OUT/notebook.ipynb")
    is "$(echo "$s" | "$PYTHON3" -c 'import json, sys; s = json.load(sys.stdin); print(s["valid"], s["cells"])')" \
        "True [['code', 1, ['stdout']], ['code', 2, ['execute_result']]]" \
        "the page's download validates against nbformat's schema and holds the two cells with their outputs"
fi
done_testing
