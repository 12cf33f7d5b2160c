#!/bin/bash
# fuzz.sh: builds the libFuzzer targets of tests/fuzz/ with clang, whatever
# compiler the project is configured with, and runs them.
#
#   fuzz.sh build            build every target into $FUZZ_DIR/bin
#   fuzz.sh run [SECONDS]    build, then fuzz each target for SECONDS
#                            (default $FUZZ_SECONDS, else 60); new inputs go
#                            to $FUZZ_DIR/corpus/NAME, crashes to $FUZZ_DIR/crashes
#   fuzz.sh check [SECONDS]  TAP: build, run each target once over its seed
#                            corpus, then fuzz it for SECONDS (default 5);
#                            skips with the reason when clang or libFuzzer
#                            is missing (make check runs this)
#
# Environment: top_srcdir and top_builddir (config.h; make sets both),
# FUZZ_CC (clang), FUZZ_DIR (top_builddir/tests/fuzz-work), FUZZ_JOBS (2).
#
# A target is fuzz-NAME.c (LLVMFuzzerTestOneInput) with seeds in
# corpus/NAME/; adding one is adding its name to TARGETS. Every target links
# all of the program's source folders (SRC_DIRS; but main.c, and tools_nofixture.c: the
# targets have the fixture tools) as one static library, and the tool schemas
# generated as make generates them. A target that serves HTTP swaps the
# executor for stubs.c's table (struct app's exec), so a target pulls in what
# it calls and nothing starts Python.
set -u
TARGETS=(
    mcp
    imports
    pep723
    requirement
    form
)

mode=${1:-run}
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir/build}
FUZZ_CC=${FUZZ_CC:-clang}
FUZZ_DIR=${FUZZ_DIR:-$top_builddir/tests/fuzz-work}
FUZZ_JOBS=${FUZZ_JOBS:-2}
here=$top_srcdir/tests/fuzz
# Memory: ASan's own overhead included; a target that needs more than this
# has a leak or an unbounded buffer.
RSS_MB=1024

skip_all() {
    if [ "$mode" = check ]; then echo "1..0 # SKIP $*"; exit 0; fi
    echo "fuzz: $*" >&2
    exit 1
}

command -v "$FUZZ_CC" >/dev/null 2>&1 || skip_all "no $FUZZ_CC (the fuzz targets need clang with libFuzzer: apt-get install clang)"
[ -f "$top_builddir/config.h" ] || skip_all "no config.h in $top_builddir: run configure first"
mkdir -p "$FUZZ_DIR/obj" "$FUZZ_DIR/bin" || exit 1
probe=$FUZZ_DIR/obj/probe
printf '#include <stddef.h>\n#include <stdint.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { return 0; }\n' >"$probe.c"
"$FUZZ_CC" -fsanitize=fuzzer,address,undefined "$probe.c" -o "$probe" >"$probe.log" 2>&1 ||
    skip_all "$FUZZ_CC cannot build a libFuzzer program with ASan and UBSan ($(head -c 200 "$probe.log"))"

PKGS="json-c fcgi libseccomp libarchive libcurl"
# The program's source folders, each a subsystem (doc/architecture.md).
SRC_DIRS="common sandbox sandbox/artifacts sandbox/deps sandbox/fetch sandbox/jail sandbox/kernel sandbox/net cfg fcgi fcgi/app fcgi/http fcgi/mcp fcgi/server fcgi/stream fcgi/tools fcgi/web cli sandbox/executor"
SRC_INC=$(for d in $SRC_DIRS; do printf ' -I%s/%s' "$top_srcdir" "$d"; done)
CFLAGS="-g -O1 -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
 -Wall -Wno-unused-parameter -I$top_builddir$SRC_INC -I$top_srcdir/tests/lib -I$here
 -DSYSCONFDIR=\"/nonexistent\" -DLOCALSTATEDIR=\"/nonexistent\"
 $(pkg-config --cflags $PKGS)"
LIBS="$(pkg-config --libs json-c fcgi libseccomp) -ldl -lm"

# Rebuilds an object when it is older than its source or than any header.
# shellcheck disable=SC2046
newest_header=$(ls -t "$top_builddir/config.h" $(for d in $SRC_DIRS; do echo "$top_srcdir/$d"/*.h; done) "$top_srcdir"/tests/lib/*.h "$here"/*.h | head -1)
compile() { # compile SRC OBJ [EXTRA_FLAGS]
    local src=$1 obj=$2
    if [ -f "$obj" ] && [ "$obj" -nt "$src" ] && [ "$obj" -nt "$newest_header" ] && [ "$obj" -nt "$fuzz_script" ]; then
        return 0
    fi
    # shellcheck disable=SC2086
    "$FUZZ_CC" $CFLAGS ${3:-} -c "$src" -o "$obj.tmp" && mv "$obj.tmp" "$obj"
}
export -f compile
fuzz_script=$(readlink -f "$0") # the flags are in it
export FUZZ_CC CFLAGS newest_header fuzz_script

embed() { # embed OUT.c HEADER PREFIX FILE...: as make does (common/embed.sh)
    local out=$1
    shift
    (cd "$top_srcdir" && sh common/embed.sh . "$@") >"$out.tmp" || return 1
    cmp -s "$out.tmp" "$out" && rm -f "$out.tmp" || mv "$out.tmp" "$out"
}

build() {
    local jobs=() src base extra objs=()
    local schemas=$FUZZ_DIR/obj/tools_schemas.c map=$FUZZ_DIR/obj/deps_map_builtin.c zygote=$FUZZ_DIR/obj/jail_zygote_py.c
    local display=$FUZZ_DIR/obj/jail_display_py.c kernel=$FUZZ_DIR/obj/kernel_py.c
    # shellcheck disable=SC2046
    embed "$schemas" tools_internal.h tools__schema_ $(cd "$top_srcdir" && echo fcgi/tools/schemas/*.json) || return 1
    embed "$map" deps.h deps__map_ data/import-names.tsv || return 1
    embed "$zygote" jail_internal.h jail__py_ sandbox/jail/zygote.py || return 1
    embed "$display" jail.h jail_py_ sandbox/jail/display.py sandbox/jail/runner.py || return 1
    embed "$kernel" kernel.h kernel__py_ sandbox/kernel/kernel.py || return 1
    # shellcheck disable=SC2046
    for src in $(for d in $SRC_DIRS; do ls "$top_srcdir/$d"/*.c 2>/dev/null; done) "$schemas" "$map" "$zygote" "$display" "$kernel"; do
        base=$(basename "$src" .c)
        [ "$base" = main ] || [ "$base" = tools_nofixture ] && continue
        jobs+=("$src" "$FUZZ_DIR/obj/lib-$base.o" "")
        objs+=("$FUZZ_DIR/obj/lib-$base.o")
    done
    for src in "$here"/stubs.c "${TARGETS[@]/#/$here/fuzz-}"; do
        src=${src%.c}.c
        base=$(basename "$src" .c)
        jobs+=("$src" "$FUZZ_DIR/obj/$base.o" "")
    done
    printf '%s\0' "${jobs[@]}" | xargs -0 -n3 -P"$FUZZ_JOBS" bash -c 'compile "$1" "$2" "$3"' compile || return 1
    local lib=$FUZZ_DIR/obj/librms-fuzz.a
    rm -f "$lib" && ar rcs "$lib" "${objs[@]}" || return 1
    local t
    for t in "${TARGETS[@]}"; do
        # shellcheck disable=SC2086
        "$FUZZ_CC" -fsanitize=fuzzer,address,undefined "$FUZZ_DIR/obj/fuzz-$t.o" "$FUZZ_DIR/obj/stubs.o" "$lib" \
            $LIBS -o "$FUZZ_DIR/bin/fuzz-$t" || return 1
    done
}

opts() { # opts NAME: the libFuzzer options every run of NAME gets
    local o=(-rss_limit_mb=$RSS_MB -malloc_limit_mb=$RSS_MB -timeout=20 -max_len=65536 -print_final_stats=1)
    [ -f "$here/$1.dict" ] && o+=("-dict=$here/$1.dict")
    printf '%s\n' "${o[@]}"
}

# ASan: leaks are bugs too; UBSan: every report stops the target.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

case $mode in
build)
    build
    ;;
run)
    secs=${2:-${FUZZ_SECONDS:-60}}
    build || exit 1
    failed=0
    for t in "${TARGETS[@]}"; do
        mkdir -p "$FUZZ_DIR/corpus/$t" "$FUZZ_DIR/crashes"
        echo "== fuzz-$t for ${secs}s"
        mapfile -t o < <(opts "$t")
        "$FUZZ_DIR/bin/fuzz-$t" "${o[@]}" -max_total_time="$secs" -artifact_prefix="$FUZZ_DIR/crashes/$t-" \
            "$FUZZ_DIR/corpus/$t" "$here/corpus/$t" || { failed=1; echo "fuzz-$t FAILED (input in $FUZZ_DIR/crashes/)"; }
    done
    exit $failed
    ;;
check)
    secs=${2:-5}
    log=$FUZZ_DIR/build.log
    if ! build >"$log" 2>&1; then
        echo "1..1"
        echo "not ok 1 - the fuzz targets build"
        sed 's/^/# /' "$log" | tail -40
        exit 1
    fi
    echo "1..$((${#TARGETS[@]} * 2))"
    n=0
    for t in "${TARGETS[@]}"; do
        mapfile -t o < <(opts "$t")
        work=$(mktemp -d "${TMPDIR:-/tmp}/rms-fuzz.XXXXXX") || exit 99
        n=$((n + 1))
        seeds=("$here/corpus/$t"/*)
        if "$FUZZ_DIR/bin/fuzz-$t" "${o[@]}" -artifact_prefix="$work/" "${seeds[@]}" >"$work/log" 2>&1; then
            echo "ok $n - fuzz-$t: its ${#seeds[@]} seeds, no crash, no sanitizer report"
        else
            echo "not ok $n - fuzz-$t: its ${#seeds[@]} seeds"
            grep -v '^Running:\|^Executed' "$work/log" | tail -40 | sed 's/^/# /'
        fi
        n=$((n + 1))
        if "$FUZZ_DIR/bin/fuzz-$t" "${o[@]}" -max_total_time="$secs" -artifact_prefix="$work/" \
            "$work" "$here/corpus/$t" >"$work/log" 2>&1; then
            runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log")
            echo "ok $n - fuzz-$t: ${secs}s of fuzzing (${runs:-?} inputs), no crash, no sanitizer report"
        else
            echo "not ok $n - fuzz-$t: ${secs}s of fuzzing"
            tail -40 "$work/log" | sed 's/^/# /'
            for f in "$work"/crash-* "$work"/leak-* "$work"/oom-* "$work"/timeout-*; do
                [ -f "$f" ] && echo "# input: $(base64 -w0 "$f" | head -c 2000)"
            done
        fi
        rm -rf "$work"
    done
    ;;
*)
    echo "usage: fuzz.sh build | run [SECONDS] | check [SECONDS]" >&2
    exit 64
    ;;
esac
