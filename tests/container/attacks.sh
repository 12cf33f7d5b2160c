#!/bin/bash
# attacks.sh: the project's sandbox suites inside the image, beside the same
# suites on this host in the same run, with the same results:
# - the full-jail container (the shipped seccomp profile, /proc unmasked):
#   the attack suite (tests/sandbox/attacks.sh), again with every run
#   started warm (attacks-warm.sh), and the kernels (kernel.sh);
# - a default container, whose runs get the fallback: the fallback's
#   containment suite (fallback.sh), its jail modes skipped there (the
#   namespaces cannot be had) and its fallback modes as on the host.
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

# results FILE [GREP]: the suite's results, numbers and random parts set
# aside. kernel.sh holds a kernel past its memory in one of two ways, both
# contained: killed as a whole where a cgroup holds it (this host as root),
# or its allocation failing on RLIMIT_AS where none does (a container,
# whose cgroups are not its own): either is "held".
results() {
    grep -E '^(not )?ok ' "$1" | sed -E 's/^(not ok|ok) [0-9]+/\1/' |
        sed -E 's#/tmp/rms-test\.[A-Za-z0-9]+#TMP#g; s/[0-9a-f]{16,}/HEX/g; s/rms[0-9a-f]{10}/TOKEN/g; s/\([0-9]+\)$/(PID)/' |
        sed -E 's/^ok - (the kernel was killed: the next cell has a new one|an allocation past memory failed: the kernel and its names stay).*/ok - a kernel past its memory is held/;
                s/^ok - (its reason|\(its names\))$/ok - (and then)/' |
        grep -E -- "${2:-.}"
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
# same SUITE NAME LABEL [GREP]: the container's results are the host's.
same() {
    local h c
    h=$(results "$TEST_TMP/host-$1" "${4:-}")
    c=$(results "$TEST_TMP/$2-$1" "${4:-}")
    [ -n "$h" ] && [ "$h" = "$c" ]
    ok $? "$3: $(printf '%s\n' "$c" | grep -c '^ok') results, the same as on the host"
    [ "$h" = "$c" ] || diff <(printf '%s\n' "$h") <(printf '%s\n' "$c") | head -20 | sed 's/^/# /'
    ! printf '%s\n' "$c" | grep -q '^not ok'
    ok $? "$3: none failed"
    grep -A4 '^not ok' "$TEST_TMP/$2-$1" | head -30 | sed 's/^/# /'
}

for s in attacks attacks-warm kernel; do
    host $s
    inside jail $s "${JAIL[@]}"
    same $s jail "$s.sh in the full-jail container"
done
grep -q '^ok [0-9]* - view: started warm' "$TEST_TMP/jail-attacks-warm"
ok $? "runs in the full-jail container start warm"

host fallback
inside default fallback
same fallback default "fallback.sh's fallback modes in a default container" '(fallback-|landlock)'
is "$(grep -cE '^ok [0-9]+ # SKIP jail-(root|user): this host cannot make the namespaces' "$TEST_TMP/default-fallback")" 2 \
    "and its jail modes skip there: the namespaces cannot be had"

done_testing
