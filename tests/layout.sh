#!/bin/bash
# layout.sh: the shape of the tree, checked (TAP). The tree is a folder per
# subsystem (doc/architecture.md, "Layers, and why"):
#   common/                        what every part uses
#   sandbox/ and sandbox/*/        the executor: its face (executor.h over
#                                  sandbox/executor/*.h, a header per concept);
#                                  kernel/, a workspace's live kernel and its
#                                  cells, over the orchestration of a run
#                                  (exec*.c, a call's context in exec_ctx.c);
#                                  then jail/, deps/, fetch/, artifacts/
#   cfg/, fcgi/, fcgi/*/, cli/     the front doors and their configuration:
#                                  fcgi/ a folder a room (http/, stream/,
#                                  tools/, mcp/, web/, app/, server/) over
#                                  the context at its root (app_ctx.h)
#   main.c                         the program: starts either door
# Checked:
#  - a front door (cfg/, fcgi/, cli/) includes from sandbox/ only
#    sandbox/executor.h, the executor's public API, or one of its parts
#    (sandbox/executor/*.h, a header per concept), and sandbox/
#    includes nothing of the front doors;
#  - a NAME_internal.h is included only by files of its own folder;
#  - the rest of sandbox/ neither includes a header of sandbox/kernel/ nor
#    calls a function of it: the kernel's code is above the steps it runs
#    (the front doors reach it through executor.h's exec_kernel_cell, exec_kernel_*);
#  - no header of the tree has the name of a system header (<NAME.h>);
#  - the folders of the front doors (fcgi/'s rooms among them) include
#    each other in no circle, so that their floors read top to bottom;
#  - no modules include each other in a circle (a module: a folder's files
#    of one prefix, NAME.c with NAME.h and the NAME_*.c beside them that
#    share NAME.h or NAME_internal.h; executor.h is a node of its own);
#  - no two files call each other in a loop: the functions and data a file
#    defines and the ones it uses, read from the built objects (nm), make
#    a graph of files with no circle in it (skipped, with the reason, when
#    the objects are not built);
#  - no C source or header is over 900 lines, and no function is over 120,
#    unless the file's opening comment says why (it names the function, or
#    says "900 lines" for the file, and gives the reason).
set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir/build}
cd "$top_srcdir" || exit 1
. tests/lib/tap.sh

MAX_FILE_LINES=900
MAX_FUNC_LINES=120
# sandbox/executor (the public headers) last: where() finds an internal
# header of the same name (kernel.h) first.
SANDBOX_DIRS="sandbox sandbox/artifacts sandbox/deps sandbox/fetch sandbox/jail sandbox/kernel sandbox/net sandbox/executor"
FRONT_DIRS="cfg cli fcgi fcgi/app fcgi/http fcgi/mcp fcgi/server fcgi/stream fcgi/tools fcgi/web"
SRC_DIRS="common $SANDBOX_DIRS $FRONT_DIRS"

sources() { # sources DIR...: the C files and headers directly in each DIR
    local d
    for d in "$@"; do ls "$d"/*.[ch] 2>/dev/null; done
}
includes() { # includes FILE: the quoted includes of FILE, one a line
    grep -hE '^#[[:space:]]*include[[:space:]]+"[^"]+"' "$1" | sed -E 's/.*include[[:space:]]+"([^"]+)".*/\1/'
}
where() { # where NAME.h: the folder of the source tree that holds it, if any
    local d
    for d in $SRC_DIRS; do
        [ -f "$d/$1" ] && { echo "$d"; return; }
    done
}

# ------------------------------------------------ 1. the public header
bad=$(for f in $(sources $FRONT_DIRS); do
    for inc in $(includes "$f"); do
        case $inc in executor.h | executor/*.h) continue ;; esac
        d=$(where "$inc")
        case " $SANDBOX_DIRS " in *" $d "*) echo "$f: $inc ($d)" ;; esac
    done
done)
ok "$([ -z "$bad" ] && echo 0 || echo 1)" "the front doors include nothing of sandbox/ but executor.h and its parts"
[ -n "$bad" ] && diag "$bad"
bad=$(for f in $(sources $SANDBOX_DIRS); do
    for inc in $(includes "$f"); do
        d=$(where "$inc")
        case " $FRONT_DIRS " in *" $d "*) echo "$f: $inc ($d)" ;; esac
    done
done)
ok "$([ -z "$bad" ] && echo 0 || echo 1)" "sandbox/ includes nothing of the front doors"
[ -n "$bad" ] && diag "$bad"

# ------------------------------------------- 2. internal headers stay home
bad=$(for f in $(sources $SRC_DIRS) tests/*/*.[ch]; do
    for inc in $(includes "$f"); do
        case $inc in *_internal.h) ;; *) continue ;; esac
        d=$(where "$inc")
        [ -n "$d" ] && [ "$d" != "$(dirname "$f")" ] && case $f in tests/*) ;; *) echo "$f: $inc ($d)" ;; esac
    done
done)
ok "$([ -z "$bad" ] && echo 0 || echo 1)" "a NAME_internal.h is included only from its own folder"
[ -n "$bad" ] && diag "$bad"
bad=$(for f in $(sources $SANDBOX_DIRS); do
    case $f in sandbox/kernel/*) continue ;; esac
    for inc in $(includes "$f"); do
        [ "$(where "$inc")" = sandbox/kernel ] && echo "$f: $inc"
    done
done)
ok "$([ -z "$bad" ] && echo 0 || echo 1)" "sandbox/ outside kernel/ includes nothing of sandbox/kernel/"
[ -n "$bad" ] && diag "$bad"

# A header of the tree named as one the sources take from the system
# (#include <NAME.h>) stands for it in every file compiled with its folder's
# -I: the system's would never be read.
bad=$(for inc in $(grep -hoE '^#[[:space:]]*include[[:space:]]+<[^>]+>' $(sources $SRC_DIRS) |
        sed -E 's/.*<([^>]+)>.*/\1/' | sort -u); do
    d=$(where "$inc")
    [ -n "$d" ] && echo "$d/$inc"
done)
ok "$([ -z "$bad" ] && echo 0 || echo 1)" "no header of the tree has the name of a system header the sources include"
[ -n "$bad" ] && diag "$bad"

# --------------------------------------------------------- 3. no cycles
# The circle finder: reads "FROM TO" edges, prints one circle if there is one.
circle() {
    awk '
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
    END { for (n in nodes) if (!state[n] && !found) visit(n) }'
}
# The module of a file: its stem when STEM.h exists in its folder (or it is
# executor.h), else the stem up to the first '_' (deps_scan.c is deps);
# NAME_internal.h belongs to NAME. A module is named with its folder.
module_of() {
    local dir=$1 stem=$2
    case $stem in
    executor) echo executor; return ;;
    *_internal) echo "$dir/${stem%_internal}"; return ;;
    esac
    if [ -f "$dir/$stem.h" ]; then echo "$dir/$stem"; else echo "$dir/${stem%%_*}"; fi
}
edges=$(for f in $(sources $SRC_DIRS); do
    dir=$(dirname "$f")
    stem=$(basename "$f"); stem=${stem%.*}
    from=$(module_of "$dir" "$stem")
    for inc in $(includes "$f"); do
        d=$(where "$inc")
        [ -n "$d" ] || continue
        to=$(module_of "$d" "${inc%.h}")
        [ "$from" != "$to" ] && echo "$from $to"
    done
done | sort -u)
cycle=$(circle <<<"$edges")
ok "$([ -z "$cycle" ] && echo 0 || echo 1)" "no modules include each other in a circle"
[ -n "$cycle" ] && diag "cycle: $cycle"
# The same at the scale of the front doors' folders: a room of fcgi/ (or
# cfg/, cli/) that includes a header of another room stands above it.
folder_edges=$(for f in $(sources $FRONT_DIRS) main.c; do
    for inc in $(includes "$f"); do
        d=$(where "$inc")
        case " $FRONT_DIRS " in *" $d "*) ;; *) continue ;; esac
        [ "$(dirname "$f")" != "$d" ] && echo "$(dirname "$f") $d"
    done
done | sort -u)
cycle=$(circle <<<"$folder_edges")
ok "$([ -z "$cycle" ] && echo 0 || echo 1)" "the front doors' folders include each other in no circle"
[ -n "$cycle" ] && diag "cycle: $cycle"

# Files that call each other: each object of the build tree (automake names
# it FOLDER/LIB_a-STEM.o) is its source file; an edge goes from a file that
# uses a symbol to the one that defines it.
objects=$(for d in $SRC_DIRS; do ls "$top_builddir/$d"/lib*_a-*.o 2>/dev/null; done)
if [ -z "$objects" ]; then
    skip "no file calls another in a circle: no objects in $top_builddir (build first)"
    skip "no file of sandbox/ outside kernel/ calls into sandbox/kernel/: no objects in $top_builddir (build first)"
else
    calls=$(for o in $objects; do
        rel=${o#"$top_builddir"/}
        src="$(dirname "$rel")/$(basename "$rel" .o | sed -E 's/^lib[a-z]+_a-//').c"
        nm -P "$o" 2>/dev/null | awk -v f="$src" '$2 == "U" { print "U", f, $1 } $2 ~ /^[TDBRC]$/ { print "D", f, $1 }'
    done | awk '$1 == "D" { def[$3] = $2; next } { use[++n] = $2 " " $3 }
        END { for (i = 1; i <= n; i++) { split(use[i], u, " "); if ((u[2] in def) && def[u[2]] != u[1]) print u[1], def[u[2]] } }' | sort -u)
    cycle=$(circle <<<"$calls")
    ok "$([ -z "$cycle" ] && echo 0 || echo 1)" "no files call each other in a circle"
    [ -n "$cycle" ] && diag "cycle: $cycle"
    up=$(awk '$1 ~ /^sandbox\// && $1 !~ /^sandbox\/kernel\// && $2 ~ /^sandbox\/kernel\//' <<<"$calls")
    ok "$([ -z "$up" ] && echo 0 || echo 1)" "no file of sandbox/ outside kernel/ calls into sandbox/kernel/"
    [ -n "$up" ] && diag "calls up: $up"
fi

# ------------------------------------------------ 4. files and functions
# The opening comment of a file: its first /* ... */ block.
opening() { awk 'NR == 1 && !/^\/\*/ { exit } { print } /\*\// { exit }' "$1"; }
long_files=""
long_funcs=""
for f in $(sources $SRC_DIRS) tests/*/*.[ch]; do
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

# Every folder of sources is one the checks above know.
stray=$(find . -type d \( -name '.*' -o -name tests -o -name 'build*' -o -name _build -o -name run -o -name node_modules \) -prune -o \
    -name '*.[ch]' -print | sed -nE 's|^\./(.*)/[^/]*$|\1|p' | sort -u |
    while read -r d; do case " $SRC_DIRS " in *" $d "*) ;; *) echo "$d" ;; esac; done)
ok "$([ -z "$stray" ] && echo 0 || echo 1)" "every folder of C sources is one of the subsystems this test knows"
[ -n "$stray" ] && diag "unknown folders: $stray"

done_testing
