#!/bin/bash
# browser.sh: the web page in Debian's chromium against the image, as
# tests/browser/web.sh drives it against a served tree: the same checks
# (tests/browser/web.mjs), the page and its runs served by a full-jail
# container (the shipped seccomp profile, /proc unmasked) on this host's
# network, with the test's wheels for the seed's pillow. Slow (it builds
# the image): make check-slow.
RMS_JAIL_OPTIONAL=1
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/browser/lib.sh"
. "$top_srcdir/tests/lib/container.sh"
need curl
need unzip
container_setup
container_image
WHEELS=$top_builddir/tests/wheelhouse
[ -d "$WHEELS" ] || bail "no wheelhouse (make check builds it)"
HAVE_PILLOW=0
ls "$WHEELS"/pillow-*.whl >/dev/null 2>&1 && HAVE_PILLOW=1

TOKEN=browser-token
PORT=$(free_port)
NAME=rms-test-browser-$$
CONTAINERS_MADE="$CONTAINERS_MADE $NAME"
$PODMAN run -d --no-healthcheck --name "$NAME" --network host -e "PORT=$PORT" \
    --security-opt "seccomp=$top_srcdir/deploy/container/seccomp.json" --security-opt systempaths=unconfined \
    -e "RUNMYSCRIPT_AUTH_TOKEN=$TOKEN" -e RUNMYSCRIPT_CODE_BYTES=64K \
    -v "$WHEELS:/wheels:ro" -e FIND_LINKS=/wheels -v "$NAME:/var/lib/runmyscript" "$IMAGE-pil" >/dev/null
container_ready "$PORT"
ok $? "the full-jail container answers /healthz on port $PORT" || bail "no container"
browser_out container
BASE=http://127.0.0.1:$PORT TOKEN=$TOKEN OUT=$OUT CHROMIUM=$CHROMIUM HAVE_PILLOW=$HAVE_PILLOW \
    "$NODE" "$top_srcdir/tests/browser/web.mjs" >"$T/web.tap" 2>&1
rc=$?
# web.mjs's own TAP, numbered on from this test's.
tap_merge "container: " "$T/web.tap"
ok $rc "the page's checks ran to their end"

done_testing
