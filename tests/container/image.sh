#!/bin/bash
# image.sh: the image built from the Dockerfile with Podman and run as its
# users run it: /healthz, the Run My Script seed through MCP (the flipped
# image comes back), a session's files kept between calls, the isolation
# check-sandbox names in a default container (the namespaces, with the
# container's /proc and host name) and in the full-jail one (the shipped
# seccomp profile, /proc unmasked: the namespaces), runs there of that isolation, a second run started warm and
# a kernel's name kept between two cells in each, and SIGTERM: the run in
# flight finishes and the container exits 0. Slow (it builds the image): make check-slow.
RMS_JAIL_OPTIONAL=1
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/lib/container.sh"
need curl
container_setup
container_image

# The test's wheels, for the seed's pillow: packages come at run time.
WHEELS=$top_builddir/tests/wheelhouse
[ -d "$WHEELS" ] || bail "no wheelhouse (make check builds it)"

# mcp_seed PORT LABEL: initialize, the seed through run_my_script, its
# flipped.png fetched and checked; a session's file written and read back.
mcp_seed() {
    local port=$1 label=$2
    BASE=http://127.0.0.1:$port
    init
    [ -n "$SID" ]
    ok $? "$label: initialize gives a session"
    H=(-H "$ACCEPT_BOTH" -H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: 2025-11-25")
    seed_call 2 "$top_srcdir/tests/fixtures/seeds/run_my_script_test.py" >"$T/seed.json"
    post "@$T/seed.json" "${H[@]}"
    is "$(jb 'r["result"]["structuredContent"]["status"], [a["path"] for a in r["result"]["structuredContent"]["artifacts"]]')" \
        '["ok", ["flipped.png"]]' "$label: the seed through MCP: ok, flipped.png"
    local url
    url=$(jb '[a["url"] for a in r["result"]["structuredContent"]["artifacts"]][0]')
    curl -sf -o "$T/flipped.png" "$url"
    is "$("$PYTHON3" "$top_srcdir/tests/lib/check_png.py" size "$T/flipped.png" 2>&1)" 256x256 \
        "$label: its flipped.png is fetched from the artifact's URL: a 256x256 PNG"
    ISOLATION=$(jb 'r["result"]["structuredContent"]["isolation"]')
    post '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"run_code","arguments":{"code":"open(\"kept.txt\",\"w\").write(\"kept\")"}}}' "${H[@]}"
    post '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"run_code","arguments":{"code":"print(open(\"kept.txt\").read())"}}}' "${H[@]}"
    is "$(jb 'r["result"]["structuredContent"]["logs"]')" "kept" "$label: a session's file is there for its next call"
}

# warm_and_kernel PORT LABEL: in mcp_seed's session, print(1) twice, the
# second once /healthz says the pool has the environment's zygote (10 s at
# most, at once where no pool serves): its result says how it started, in
# $START; then a kernel's two cells, the second reading the first's name.
warm_and_kernel() {
    local port=$1 label=$2 i
    post '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"run_code","arguments":{"code":"print(1)"}}}' "${H[@]}"
    for i in $(seq 100); do
        curl -s "http://127.0.0.1:$port/healthz" | "$PYTHON3" -c 'import json,sys; w=json.load(sys.stdin)["warm"]; sys.exit(0 if not w["serving"] or w["envs"] >= 1 else 1)' && break
        sleep 0.1
    done
    post '{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"run_code","arguments":{"code":"print(2)"}}}' "${H[@]}"
    START=$(jb 'r["result"]["structuredContent"]["status"] + " " + r["result"]["structuredContent"]["start"]')
    post '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"run_cell","arguments":{"code":"x = 41"}}}' "${H[@]}"
    post '{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"run_cell","arguments":{"code":"print(x + 1)"}}}' "${H[@]}"
    is "$(jb 'r["result"]["structuredContent"]["status"], r["result"]["structuredContent"]["logs"], r["result"]["structuredContent"]["kernel"]["state"], r["result"]["structuredContent"]["kernel"]["cell"]')" \
        '["ok", "42\n", "kept", 2]' "$label: a kernel keeps a name between two cells (the second cell's kernel: kept, cell 2)"
}

# --- a default container: what `docker run -p 8080:8080 ...` gives
P1=$(free_port)
container_run rms-test-default "$P1" -v "$WHEELS:/wheels:ro" -e FIND_LINKS=/wheels "$IMAGE-pil"
container_ready "$P1"
ok $? "a default container answers /healthz"
is "$(curl -s "http://127.0.0.1:$P1/healthz" | "$PYTHON3" -c 'import json,sys; d=json.load(sys.stdin); print(d["status"], d["isolation"])')" \
    "ok namespaces+seccomp" "its /healthz: ok, runs get the namespaces"
out=$($PODMAN exec rms-test-default runmyscript check-sandbox 2>&1)
like "$out" "runs get:              isolation namespaces+seccomp" "check-sandbox in a default container: the namespaces"
like "$out" "a run's /proc:         the container's" "and that a run's /proc is the container's (a fresh one is refused there)"
like "$out" "a run's host name:     the container's" "and its host name the container's (sethostname is refused there)"
out=$($PODMAN exec -e RUNMYSCRIPT_SHARED_PROC=off rms-test-default runmyscript check-sandbox 2>&1)
like "$out" "runs get:              isolation landlock+seccomp" "with shared_proc = off: the fallback there"
like "$out" "a fresh one is refused here, and shared_proc = off" "and check-sandbox says why"
mcp_seed "$P1" "default container"
is "$ISOLATION" namespaces+seccomp "the seed ran in the namespaces"
warm_and_kernel "$P1" "default container"
is "$START" "ok warm" "default container: a second run starts warm (its result says so)"

# --- the full jail: the shipped seccomp profile, /proc unmasked, no capability added
P2=$(free_port)
container_run rms-test-jail "$P2" --security-opt "seccomp=$top_srcdir/deploy/container/seccomp.json" \
    --security-opt systempaths=unconfined -v "$WHEELS:/wheels:ro" -e FIND_LINKS=/wheels "$IMAGE-pil"
container_ready "$P2"
ok $? "a full-jail container answers /healthz"
out=$($PODMAN exec rms-test-jail runmyscript check-sandbox 2>&1)
like "$out" "runs get:              isolation namespaces+seccomp" "check-sandbox in the full-jail container: the namespaces"
mcp_seed "$P2" "full-jail container"
is "$ISOLATION" namespaces+seccomp "the seed ran in the namespaces"
warm_and_kernel "$P2" "full-jail container"
is "$START" "ok warm" "full-jail container: a second run starts warm (its result says so)"

# --- SIGTERM drains: the run in flight finishes, then the container exits 0
curl -s -o "$T/slow.json" -H "Host: 127.0.0.1:$P1" -H 'Content-Type: application/json' \
    --data-binary '{"code":"import time\nprint(\"started\", flush=True)\ntime.sleep(3)\nprint(\"done\")"}' \
    "http://127.0.0.1:$P1/api/run" &
CURL=$!
sleep 1.5
$PODMAN kill --signal TERM rms-test-default >/dev/null
wait $CURL
is "$("$PYTHON3" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["status"], d["logs"].split())' "$T/slow.json" 2>&1)" \
    "ok ['started', 'done']" "SIGTERM: the run in flight finished"
is "$($PODMAN wait rms-test-default 2>&1)" 0 "and the container exited 0"

done_testing
