#!/bin/bash
# The 2026-07-28 revision over raw HTTP through nginx, beside a legacy
# session on the same server: every transport rule (lib.sh's modern_cases),
# the workspace handles, tasks; cgi.sh and apache.sh run the same cases.
# Then the keys of its own: tools_list_ttl, task_ttl (and its reaping).
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib.sh"
STACK_CONF="task_after = 1s\ntask_ttl = 3s\ntools_list_ttl = 42s"
stack_start serve || { ok 1 "the server starts"; done_testing; exit 1; }
modern_cases serve

mpost tools/list ""
is "$(jb 'r["result"]["ttlMs"]')" 42000 "tools_list_ttl is tools/list's ttlMs"
mpost server/discover ""
is "$(jb 'r["result"]["ttlMs"]')" 42000 "and server/discover's"
CAPS=$TASKS_CAP mpost tools/call '"name":"run_my_script","arguments":{"code":"import time\ntime.sleep(1.5)"}' -H "Mcp-Name: run_my_script"
tid=$(jb 'r["result"]["taskId"]')
is "$(jb 'r["result"]["ttlMs"]')" 3000 "task_ttl is a task's ttlMs"
task_poll "$tid"
is "$(jb 'r["result"]["status"]')" completed "the task ends"
sleep 3.5
# The reaper scans at most once a minute (its stamp); the next task's
# creation scans once the stamp is gone.
rm -f "$T/state/tasks/.reaped"
CAPS=$TASKS_CAP mpost tools/call '"name":"run_my_script","arguments":{"code":"import time\ntime.sleep(1.5)"}' -H "Mcp-Name: run_my_script"
[ ! -e "$T/state/tasks/$tid" ]
ok $? "a task that ended more than task_ttl ago is removed"
CAPS=$TASKS_CAP mpost tasks/get '"taskId":"'"$tid"'"' -H "Mcp-Name: $tid"
is "$(jb 'r["error"]["code"]')" -32602 "and tasks/get says it is unknown"
# A task whose directory goes (the state directory cleaned) stops its run:
# nobody can ask for its result any more.
CAPS=$TASKS_CAP mpost tools/call '"name":"run_my_script","arguments":{"code":"# orphaned\nimport time\ntime.sleep(60)"}' -H "Mcp-Name: run_my_script"
tid=$(jb 'r["result"]["taskId"]')
wait_for sh -c 'test -s "$1"' - "$T/state/tasks/$tid/run"
run=$(cat "$T/state/tasks/$tid/run" 2>/dev/null)
rm -rf "${T:?}/state/tasks/$tid"
wait_for grep -q '"status":"cancelled"' "$T/state/runs/$run/result.json"
ok $? "a task removed from the state directory stops its run (status cancelled)"

# At most 64 task ids in one subscriptions/listen (LISTEN_TASKS_MAX).
ids=$("$PYTHON3" -c 'import json; print(json.dumps(["%032x" % i for i in range(65)]))')
CAPS=$TASKS_CAP mpost subscriptions/listen '"notifications":{"taskIds":'"$ids"'}'
is "$(jb 'r["error"]["code"]')" -32602 "subscriptions/listen with 65 task ids is refused"
done_testing
