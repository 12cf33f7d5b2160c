#!/bin/bash
# layout.sh: the shape of the tree, checked (TAP).
#  - a front door (fcgi/) includes from sandbox/ only sandbox/executor.h,
#    the executor's one public header;
#  - no modules of common/, sandbox/ or fcgi/ include each other in a
#    circle (a module: NAME.c with NAME.h, and NAME_*.c files that share
#    NAME.h or NAME_internal.h; executor.h is a node of its own);
#  - no C source or header is over 900 lines, and no function is over 120,
#    unless the file's opening comment says why (it names the function, or
#    says "900 lines" for the file, and gives the reason).
set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$top_srcdir" || exit 1
. tests/lib/tap.sh

MAX_FILE_LINES=900
MAX_FUNC_LINES=120

# ------------------------------------------------ 1. the public header
bad=$(grep -HnE '^#[[:space:]]*include[[:space:]]+"[^"]+"' fcgi/*.c fcgi/*.h |
    while IFS= read -r line; do
        inc=$(sed -E 's/.*include[[:space:]]+"([^"]+)".*/\1/' <<<"$line")
        [ "$inc" = executor.h ] && continue
        [ -f "sandbox/$inc" ] && echo "$line"
    done)
ok "$([ -z "$bad" ] && echo 0 || echo 1)" "fcgi/ includes nothing of sandbox/ but executor.h"
[ -n "$bad" ] && diag "$bad"

# --------------------------------------------------------- 2. no cycles
# The module of a file: its stem when STEM.h exists (or it is executor.h),
# else the stem up to the first '_' (deps_scan.c is deps); NAME_internal.h
# belongs to NAME.
module_of() {
    local dir=$1 stem=$2
    case $stem in
    executor) echo executor; return ;;
    *_internal) echo "${stem%_internal}"; return ;;
    esac
    if [ -f "$dir/$stem.h" ]; then echo "$stem"; else echo "${stem%%_*}"; fi
}
edges=$(for dir in common sandbox fcgi; do
    for f in "$dir"/*.c "$dir"/*.h; do
        [ -f "$f" ] || continue
        stem=$(basename "$f"); stem=${stem%.*}
        from=$(module_of "$dir" "$stem")
        grep -hE '^#[[:space:]]*include[[:space:]]+"[^"]+\.h"' "$f" |
            sed -E 's/.*"([^"]+)\.h".*/\1/' | while read -r inc; do
                [ -f "$dir/$inc.h" ] || continue
                to=$(module_of "$dir" "$inc")
                [ "$from" != "$to" ] && echo "$dir/$from $dir/$to"
            done
    done
done | sort -u)
cycle=$(awk '
    { adj[$1] = adj[$1] " " $2; nodes[$1] = 1; nodes[$2] = 1 }
    function visit(n,    i, k, m, parts) {
        state[n] = 1; stack[++depth] = n
        k = split(adj[n], parts, " ")
        for (i = 1; i <= k; i++) {
            m = parts[i]
            if (state[m] == 1) {
                s = m; for (j = depth; j >= 1 && stack[j] != m; j--) s = stack[j] " -> " s
                print m " -> " s; found = 1; return
            }
            if (!state[m]) { visit(m); if (found) return }
        }
        state[n] = 2; depth--
    }
    END { for (n in nodes) if (!state[n] && !found) visit(n) }' <<<"$edges")
ok "$([ -z "$cycle" ] && echo 0 || echo 1)" "no modules include each other in a circle"
[ -n "$cycle" ] && diag "cycle: $cycle"

# ------------------------------------------------ 3. files and functions
# The opening comment of a file: its first /* ... */ block.
opening() { awk 'NR == 1 && !/^\/\*/ { exit } { print } /\*\// { exit }' "$1"; }
long_files=""
long_funcs=""
for f in common/*.[ch] sandbox/*.[ch] fcgi/*.[ch] tests/*/*.[ch]; do
    [ -f "$f" ] || continue
    head=$(opening "$f")
    n=$(wc -l <"$f")
    if [ "$n" -gt "$MAX_FILE_LINES" ] && ! grep -q "$MAX_FILE_LINES lines" <<<"$head"; then
        long_files="$long_files $f($n)"
    fi
    # A function body opens with "{" and closes with "}" in column 0; its
    # name is the identifier before the first "(" of the lines above.
    while read -r name len; do
        grep -qw -- "$name" <<<"$head" && grep -q "$MAX_FUNC_LINES lines" <<<"$head" && continue
        long_funcs="$long_funcs $f:$name($len)"
    done < <(awk -v max="$MAX_FUNC_LINES" '
        /^\{/ { start = NR; name = sig; sub(/\(.*/, "", name); n = split(name, w, /[ *]+/); name = w[n] }
        /^\}/ && start { if (NR - start + 1 > max) print name, NR - start + 1; start = 0 }
        /^[A-Za-z_]/ && !start { if (sig_open) sig = sig " " $0; else sig = $0; sig_open = ($0 !~ /[;{]$/ && $0 !~ /\)$/) ; if ($0 ~ /[;]$/) sig = "" }
        !/^[A-Za-z_]/ && !/^\{/ && !start && sig_open { sig = sig " " $0; if ($0 ~ /\)$/) sig_open = 0 }
    ' "$f")
done
ok "$([ -z "$long_files" ] && echo 0 || echo 1)" "no source file over $MAX_FILE_LINES lines without a reason"
[ -n "$long_files" ] && diag "over $MAX_FILE_LINES lines:$long_files"
ok "$([ -z "$long_funcs" ] && echo 0 || echo 1)" "no function over $MAX_FUNC_LINES lines without a reason"
[ -n "$long_funcs" ] && diag "over $MAX_FUNC_LINES lines:$long_funcs"

done_testing
