# lib.sh: what the browser tests' drivers (web.sh, notebook.sh) share, after
# tap.sh and tests/e2e/lib.sh: playwright-core in tests/node_modules and
# Debian's chromium, or the test is skipped saying which is missing; NODE;
# and browser_out NAME, the screenshots' directory (emptied) in the build
# tree, in $OUT.
MODULES=$top_srcdir/tests/node_modules
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
[ -d "$MODULES/playwright-core" ] ||
    skip_all "playwright-core is not installed in tests/ (./quickstart test runs npm ci there)"
[ -x "$CHROMIUM" ] || skip_all "chromium is not installed (./quickstart test installs it)"
NODE=$MODULES/.bin/node
[ -x "$NODE" ] || NODE=node
need "$NODE"
browser_out() {
    OUT=${top_builddir:-.}/tests/browser/$1.out
    rm -rf "$OUT"
    mkdir -p "$OUT"
}
