#!/bin/bash
# attacks.sh: the project's sandbox suites inside the image, beside the same
# suites on this host in the same run, with the same results:
# - the full-jail container (the shipped seccomp profile, /proc unmasked):
#   the attack suite (tests/sandbox/attacks.sh), again with every run
#   started warm (attacks-warm.sh), and the kernels (kernel.sh);
# - a default container: the same three, whose results are the host's but
#   for one each: a run's /proc there is the container's (the kernel
#   refuses a fresh one over its masked /proc), which lists the
#   container's processes; and the fallback's containment suite
#   (fallback.sh), its jail and fallback modes as on the host.
# The suites run from this tree (mounted read-only) against the image's own
# program, on no network (--network none), in the tests' image (the image
# and the libraries the test wheelhouse's repacked wheels link to). A result's wording may name a
# temporary path or a random name: those are set aside before comparing.
# Slow (it builds the image): make check-slow.
RMS_JAIL_OPTIONAL=1
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/container.sh"
container_setup
container_image
WHEELS=$top_builddir/tests/wheelhouse
[ -d "$WHEELS" ] || bail "no wheelhouse (make check builds it)"
JAIL=(--security-opt "seccomp=$top_srcdir/deploy/container/seccomp.json" --security-opt systempaths=unconfined)

# results FILE [GREP] [NOT]: the suite's results (those GREP matches and
# NOT does not), numbers and random parts set aside. kernel.sh holds a kernel past its memory in one of two ways, both
# contained: killed as a whole where a cgroup holds it (this host as root),
# or its allocation failing on RLIMIT_AS where none does (a container,
# whose cgroups are not its own): either is "held".
results() {
    grep -E '^(not )?ok ' "$1" | sed -E 's/^(not ok|ok) [0-9]+/\1/' |
        sed -E 's#/tmp/rms-test\.[A-Za-z0-9]+#TMP#g; s/[0-9a-f]{16,}/HEX/g; s/rms[0-9a-f]{10}/TOKEN/g; s/\([0-9]+\)$/(PID)/' |
        sed -E 's/^ok - (the kernel was killed: the next cell has a new one|an allocation past memory failed: the kernel and its names stay).*/ok - a kernel past its memory is held/;
                s/^ok - (its reason|\(its names\))$/ok - (and then)/' |
        grep -E -- "${2:-.}" | grep -Ev -- "${3:-^$}"
}
# host SUITE: the suite on this host; its TAP in $TEST_TMP/host-SUITE.
host() {
    (cd "$TEST_TMP" && bash "$top_srcdir/tests/sandbox/$1.sh") >"$TEST_TMP/host-$1" 2>&1
}
# inside NAME SUITE [PODMAN RUN OPTIONS...]: the suite in a container of the
# image; its TAP in $TEST_TMP/NAME-SUITE.
inside() {
    local name=$1 suite=$2
    shift 2
    CONTAINERS_MADE="$CONTAINERS_MADE rms-test-$name-$$"
    $PODMAN run --rm --name "rms-test-$name-$$" --network none "$@" \
        -v "$top_srcdir:$top_srcdir:ro" -v "$WHEELS:$WHEELS:ro" \
        -e "top_srcdir=$top_srcdir" -e "top_builddir=$top_builddir" -e RUNMYSCRIPT=/usr/bin/runmyscript \
        -e PYTHON3=/usr/bin/python3 -e RUNMYSCRIPT_INDEX_URL=none -e RUNMYSCRIPT_EXTRA_INDEX_URL=none \
        -e "RUNMYSCRIPT_FIND_LINKS=file://$WHEELS" -e "WHEELHOUSE=$WHEELS" \
        "$IMAGE-pil" bash "$top_srcdir/tests/sandbox/$suite.sh" >"$TEST_TMP/$name-$suite" 2>&1
}
# same SUITE NAME LABEL [GREP] [NOT]: the container's results are the host's,
# in any order (a run in the background, attacks.sh's victim, reports when
# it ends: before or after the attack beside it).
same() {
    local h c
    h=$(results "$TEST_TMP/host-$1" "${4:-}" "${5:-}" | sort)
    c=$(results "$TEST_TMP/$2-$1" "${4:-}" "${5:-}" | sort)
    [ -n "$h" ] && [ "$h" = "$c" ]
    ok $? "$3: $(printf '%s\n' "$c" | grep -c '^ok') results, the same as on the host"
    [ "$h" = "$c" ] || diff <(printf '%s\n' "$h") <(printf '%s\n' "$c") | head -20 | sed 's/^/# /'
    ! printf '%s\n' "$c" | grep -q '^not ok'
    ok $? "$3: none failed"
    grep -Ev -- "${5:-^$}" "$TEST_TMP/$2-$1" | grep -A4 '^not ok' | head -30 | sed 's/^/# /'
}

# What a default container's runs see that the host's do not: its /proc,
# the container's (a fresh one is refused there), lists the container's
# processes. The results that look at it, by suite.
SHARED_PROC='(/proc lists only the run.s own processes|sees neither a.s names, /tmp, files, path nor processes)'


for s in attacks attacks-warm kernel; do
    host $s
    inside jail $s "${JAIL[@]}"
    same $s jail "$s.sh in the full-jail container"
    inside default $s
    same $s default "$s.sh in a default container, but for its /proc" . "$SHARED_PROC"
    is "$(grep -E "^not ok [0-9]+ - .*$SHARED_PROC" "$TEST_TMP/default-$s" | wc -l) $(results "$TEST_TMP/host-$s" "$SHARED_PROC" | grep -c '^ok')" \
        "1 1" "$s.sh in a default container: its runs' /proc lists the container's processes (one result, which passes on the host)"
done
for c in jail default; do
    grep -q '^ok [0-9]* - view: started warm' "$TEST_TMP/$c-attacks-warm"
    ok $? "runs in the $c container start warm"
done

host fallback
inside default fallback
same fallback default "fallback.sh in a default container"

done_testing
