#!/bin/bash
# The soak's short form: bench/soak for 120 s at 64 clients, every kind of
# call, and a fault every 10 s so that each of the seven faults happens at least
# once (a worker, the warm pool, a zygote and a task process killed, nginx
# reloaded, the server restarted, the state disk filled to 95%). Only what
# must hold on any machine is asserted, never a time: every call got its
# own correct answer or a clear error (none lost, none mixed up, none
# hung), each fault took place, and the server is back to flat at the end
# (no run or task process left, its workers and their descriptors and
# memory as before, no temporary file in the state directory).
. "$top_srcdir/tests/lib/tap.sh"
[ "$(id -u)" = 0 ] || skip_all "the soak needs root: its state directory is a tmpfs of its own"
command -v unshare >/dev/null || skip_all "the soak needs unshare (a private mount namespace)"
NGINX=${NGINX:-/usr/sbin/nginx}
[ -x "$NGINX" ] || skip_all "$NGINX is not installed (./quickstart test installs it)"
"$PYTHON3" "$top_srcdir/bench/soak" --duration "${SOAK_SECONDS:-120}" --fault-every "${SOAK_FAULT_EVERY:-10}" \
    --clients 64 --json "$TEST_TMP/soak.json" --runmyscript "$RUNMYSCRIPT" --nginx "$NGINX" >"$TEST_TMP/soak.out" 2>&1
rc=$?
sed 's/^/# /' "$TEST_TMP/soak.out"
[ -f "$TEST_TMP/soak.json" ] || { ok 1 "the soak ran (exit $rc)"; done_testing; exit 1; }
ok 0 "the soak ran (exit $rc)"
s() { "$PYTHON3" -c 'import json, sys; r = json.load(open(sys.argv[1])); v = eval(sys.argv[2], {"r": r})
print(v if isinstance(v, str) else json.dumps(v))' "$TEST_TMP/soak.json" "$1"; }
ok "$([ "$(s 'r["total"]["calls"]')" -ge 300 ]; echo $?)" "$(s 'r["total"]["calls"]') calls of $(s 'len(r["kinds"])') kinds"
is "$(s 'sorted(r["kinds"])')" '["cancel", "disk", "fail", "flood", "hog", "install", "memory", "mount", "print", "session", "sleep", "slow", "task", "timeout", "workspace"]' \
    "every kind of call was made"
is "$(s 'r["total"]["lost"]')" 0 "none lost (every call got an answer)"
is "$(s 'r["total"]["mixed"]')" 0 "none mixed up (no answer holds another call's token)"
is "$(s 'r["total"]["hung"], r["hung_clients"]')" "[0, 0]" "none hung past its deadline"
# A failure names its calls in the line itself: a CI summary shows that line.
is "$(s 'r["total"]["wrong"], r["total"]["cut"]')" "[0, 0]" "every answer is the call's own correct one or a clear error (none cut outside a fault)$(s '"".join(" [" + k + ": " + e + "]" for k, b in sorted(r["kinds"].items()) if b["wrong"] or b["cut"] for e in b["examples"] if ": wrong: " in e or ": cut: " in e)')"
# Each at least once: a soak whose faults were quick has time for an eighth.
is "$(s 'sorted({f["fault"] for f in r["faults"] if not f["detail"].startswith("skipped")})')" \
    '["fill_disk", "kill_pool", "kill_task", "kill_worker", "kill_zygote", "nginx_reload", "restart"]' \
    "each fault took place: $(s '"; ".join(f["fault"] + ": " + f["detail"] for f in r["faults"])')"
is "$(s 'r["flat"]')" '{"run_procs": true, "task_procs": true, "workers": true, "fds": true, "memory": true}' \
    "back to flat: no run or task process left, the workers, their descriptors and memory as at the start"
is "$(s 'r["leftover_tmp"]')" "[]" "no temporary file left in the state directory"
done_testing
