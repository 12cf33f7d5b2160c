#!/bin/bash
# cluster.sh: deploy/compose/cluster.yaml brought up with podman-compose
# (Debian 12's 1.0.3 reads the file as shipped): two nodes and the front.
# New sessions land on both nodes; a session's calls reach its node; with
# one node stopped, its session gets a clear "Session not found" and a new
# session works on the other. The file's variables give it the image just
# built (no build) and the front's port (a free one of 127.0.0.1); the test
# has its own project name. Nothing is left behind: containers, volumes,
# the network, and the firewall as it was (netavark leaves its chains when
# its last network goes: a table it made is removed). Slow (it builds the
# image): make check-slow.
RMS_JAIL_OPTIONAL=1
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/lib/container.sh"
need curl
command -v podman-compose >/dev/null 2>&1 || skip_all "podman-compose is not installed (./quickstart test installs it)"
container_setup
FW_BEFORE=$(iptables-save 2>/dev/null | grep -v '^#' | sed 's/\[[0-9]*:[0-9]*\]//')
container_image

P=rmscluster$$
FPORT=$(free_port)
compose_cmd() {
    RUNMYSCRIPT_IMAGE=$IMAGE RUNMYSCRIPT_PUBLISH=127.0.0.1:$FPORT \
        podman-compose -p "$P" -f "$top_srcdir/deploy/compose/cluster.yaml" "$@"
}
cluster_down() {
    compose_cmd down -v -t 0 >"$TEST_TMP/down.log" 2>&1
    local c
    for c in $($PODMAN ps -aq --filter "label=io.podman.compose.project=$P"); do
        $PODMAN rm -f -t 0 "$c" >/dev/null 2>&1
    done
    $PODMAN volume rm -f "${P}_n1" "${P}_n2" >/dev/null 2>&1
    $PODMAN network rm -f "${P}_nodes" >/dev/null 2>&1
    firewall_restore
}
cluster_exit() {
    cluster_down
    container_exit
}
trap cluster_exit EXIT

t0=$SECONDS
compose_cmd up -d >"$TEST_TMP/up.log" 2>&1
ok $? "podman-compose up -d brings the cluster up" || tail -20 "$TEST_TMP/up.log" | sed 's/^/# /'
is "$($PODMAN ps --filter "label=io.podman.compose.project=$P" --format '{{.Names}}' | sort | tr '\n' ' ')" \
    "${P}_front_1 ${P}_n1_1 ${P}_n2_1 " "the front and two nodes run"

node_ready() {
    $PODMAN exec "${P}_$1_1" runmyscript-entrypoint healthcheck >/dev/null 2>&1
}
for n in n1 n2; do
    wait_until node_ready $n
    ok $? "node $n answers /healthz"
done
BASE=http://127.0.0.1:$FPORT
HOSTH=(-H "Host: 127.0.0.1:8080")
front_ready() { [ "$(curl -s -o /dev/null -w '%{http_code}' "${HOSTH[@]}" "$BASE/healthz")" = 200 ]; }
wait_until front_ready
ok $? "the front answers /healthz (through a node) on its published port $FPORT"
diag "up and ready in $((SECONDS - t0)) s"

# session: a new MCP session through the front; its id in $SID.
session() {
    post '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"cluster","version":"1"}}}' \
        -H "$ACCEPT_BOTH" "${HOSTH[@]}"
    SID=$(header Mcp-Session-Id)
    [ -n "$SID" ] || return 1
    post '{"jsonrpc":"2.0","method":"notifications/initialized"}' -H "$ACCEPT_BOTH" -H "Mcp-Session-Id: $SID" \
        -H "MCP-Protocol-Version: 2025-11-25" "${HOSTH[@]}"
}
# run_in SID CODE: run_code in that session; the status in $STATUS, the body in $T/b.
run_in() {
    local body
    body=$("$PYTHON3" -c 'import json,sys; print(json.dumps({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run_code","arguments":{"code":sys.argv[1]}}}))' "$2")
    post "$body" -H "$ACCEPT_BOTH" -H "Mcp-Session-Id: $1" -H "MCP-Protocol-Version: 2025-11-25" "${HOSTH[@]}"
}

# --- new sessions spread over both nodes; each session's calls reach its node
declare -A SEEN=()
S1="" S2=""
for i in $(seq 16); do
    session || break
    SEEN[${SID%%-*}]=1
    case $SID in n1-*) S1=$SID ;; n2-*) S2=$SID ;; esac
done
is "$(printf '%s\n' "${!SEEN[@]}" | sort | tr '\n' ' ')" "n1 n2 " "16 new sessions through the front land on both nodes"
[ -n "$S1" ] && [ -n "$S2" ] || bail "no session on each node"
run_in "$S1" 'open("mine.txt","w").write("one")'
is "$STATUS $(jb 'r["result"]["structuredContent"]["status"]')" "200 ok" "a call in a session on n1" || diag "$(cat "$T/b")"
run_in "$S1" 'print(open("mine.txt").read())'
is "$STATUS $(jb 'r["result"]["structuredContent"]["status"], r["result"]["structuredContent"]["logs"].strip()')" \
    '200 ["ok", "one"]' "a session on n1: its second call finds its first call's file"
run_in "$S2" 'print(6 * 7)'
is "$STATUS $(jb 'r["result"]["structuredContent"]["logs"]')" "200 42" "a session on n2 runs"

# --- n1 stopped: its session is told it is gone; a new session works on n2
$PODMAN stop -t 5 "${P}_n1_1" >/dev/null 2>&1
ok $? "node n1 stopped"
run_in "$S1" 'print(1)'
is "$STATUS" 404 "a call in n1's session: 404"
like "$(cat "$T/b")" "Session not found" "and it says Session not found"
all_n2=1
for i in 1 2 3 4; do
    session || { all_n2=0; break; }
    case $SID in n2-*) ;; *) all_n2=0 ;; esac
done
ok $((1 - all_n2)) "new sessions after n1 stopped all land on n2 ($SID)"
run_in "$SID" 'print("still here")'
is "$STATUS $(jb 'r["result"]["structuredContent"]["logs"]')" "200 still here" "and run there"

# --- nothing left behind
cluster_down >/dev/null 2>&1
is "$($PODMAN ps -aq --filter "label=io.podman.compose.project=$P" | wc -l) $($PODMAN volume ls -q | grep -c "^${P}_") $($PODMAN network ls -q --filter "name=${P}_" | wc -l)" \
    "0 0 0" "down: no container, volume or network of the project is left"
FW_AFTER=$(iptables-save 2>/dev/null | grep -v '^#' | sed 's/\[[0-9]*:[0-9]*\]//')
is "$FW_AFTER" "$FW_BEFORE" "the firewall's rules are as they were (iptables-save)"

done_testing
