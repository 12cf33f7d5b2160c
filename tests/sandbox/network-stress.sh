#!/bin/bash
# 64 networked runs at once (script_network = on), in the network lab of
# tests/lib/netlab.sh, in the jail as root: none has the server's network, each
# reaches the lab's allowed host and is refused the lab's trap and the
# server's loopback, each result has its record (the destination reached,
# the private and the metadata address refused); afterwards nothing of them
# is left: no process in the server's namespace, no network namespace or
# interface beyond what was there before, no nftables table of theirs.
. "${top_srcdir:?run me through make check, or set top_srcdir}/tests/lib/tap.sh" || exit 99
. "$top_srcdir/tests/lib/netlab.sh"
T=$TEST_TMP
N=${RMS_NET_STRESS:-64}
netlab_up
netlab_tripwire 8080

cat >$T/probe.py <<'PY'
import socket, urllib.request
out = []
try:
    out.append(urllib.request.urlopen("http://www.lab.test/", timeout=20).read().decode().strip())
except Exception as e:
    out.append("refused %s" % type(e).__name__)
for url in ("http://10.0.0.1/", "http://127.0.0.1:8080/", "http://metadata.lab.test/"):
    try:
        urllib.request.urlopen(url, timeout=5).read()
        out.append("REACHED " + url)
    except Exception as e:
        out.append("refused")
# Its own network: the namespace's inode.
import os
out.append(os.readlink("/proc/self/ns/net"))
print("|".join(out))
PY
chmod 644 $T/probe.py

# What the server's namespace holds before: its links, its processes.
links_before=$(netlab_exec ip -o link show | wc -l)
# A namespace outlives its processes only when something holds it: a bind
# mount of it (nsfs) outside ip netns's own directory, which other tests
# of the machine use at the same time.
pinned() {
    awk '{ for (i = 7; i < NF; i++) if ($i == "-") { if ($(i + 1) == "nsfs" && $5 !~ "^/run/netns/") print $5; break } }' \
        /proc/self/mountinfo | sort
}
pinned_before=$(pinned)

start=$(date +%s)
pids=()
for i in $(seq $N); do
    netlab_exec env RUNMYSCRIPT_STATE_DIR=$T/state RUNMYSCRIPT_SCRIPT_NETWORK=on \
        RUNMYSCRIPT_EGRESS_ALLOW='*.lab.test' RUNMYSCRIPT_MAX_CONCURRENT_RUNS=$N RUNMYSCRIPT_QUEUE_WAIT=300s \
        "$RUNMYSCRIPT" run $T/probe.py --json --timeout 240 >$T/r$i.json 2>$T/r$i.err &
    pids+=($!)
done
failed=0
for p in "${pids[@]}"; do wait $p || failed=$((failed + 1)); done
diag "$N runs at once: $(($(date +%s) - start)) s"
is "$failed" 0 "$N networked runs at once: every one exited 0"

ok_runs=0 shown=0 recorded=0
declare -A nsids
for i in $(seq $N); do
    line=$(jget $T/r$i.json 'r["logs"].strip().splitlines()[-1]' 2>/dev/null)
    case "$line" in
    "lab "*"www.lab.test|refused|refused|refused|net:"*) ok_runs=$((ok_runs + 1)) ;;
    *) [ $((shown += 1)) -le 3 ] && diag "run $i: $line $(head -c 200 $T/r$i.err)" ;;
    esac
    nsids[${line##*|}]=1
    [ "$(jget $T/r$i.json 'r["network"]["mode"] == "on" and [d["name"] for d in r["network"]["reached"]] == ["www.lab.test"] and {"10.0.0.1", "169.254.169.254"} <= {f["address"] for f in r["network"]["refused"]}' 2>/dev/null)" = true ] &&
        recorded=$((recorded + 1))
done
is "$ok_runs" "$N" "each reached the allowed host and was refused the trap, the loopback and the metadata address"
# (inode numbers come back once a namespace is gone: runs that did not
# overlap may share one, so the count is a figure, not a test)
diag "distinct network namespaces among the runs: ${#nsids[@]}"
srv_ns=$(netlab_exec readlink /proc/self/ns/net)
host_ns=$(readlink /proc/self/ns/net)
is "${nsids[$srv_ns]:-}${nsids[$host_ns]:-}" "" "none ran in the server's network namespace, nor the host's"
is "$recorded" "$N" "each result has its record"
netlab_reached 10.0.0.1 && r=1 || r=0
ok $r "the lab's trap saw nothing"
netlab_tripped && r=1 || r=0
ok $r "the server's loopback saw nothing"

# Nothing left behind.
sleep 1
left=$(for p in $(netlab_pids_srv); do grep -q netlab_http /proc/$p/cmdline 2>/dev/null || echo "$p:$(cat /proc/$p/comm 2>/dev/null)"; done)
is "$left" "" "no process of the runs is left in the server's namespace"
is "$(netlab_exec ip -o link show | wc -l)" "$links_before" "no interface of theirs is left in the server's namespace"
is "$(pinned)" "$pinned_before" "no namespace of theirs is held by a mount"
if command -v nft >/dev/null; then
    is "$(netlab_exec nft list tables 2>/dev/null | wc -l)" 0 "no nftables table of theirs in the server's namespace"
else
    skip "nft is missing: the rules are not looked for"
fi
netlab_down
is "$(netlab_leaks)" "" "the lab is gone"
done_testing
