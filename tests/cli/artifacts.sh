#!/bin/bash
# What output/ holds: symlinks, FIFOs and hard links shared with files
# outside are neither followed nor listed nor zipped; nested and odd names
# come back intact; the zip is whole; names that are paths to a Windows
# tool (backslashes, drive letters, trailing dots) are safe in the zip.
. "${top_srcdir:?run me through make check, or set top_srcdir}/tests/lib/tap.sh" || exit 99
T=$TEST_TMP
echo "outside secret" >$T/outside.txt

# The hard link shares a file of the workspace outside output/ (the only
# place outside output/ the jail lets a script link from).
cat >$T/traps.py <<PY
import os
out = os.environ["SCRIPT_OUTPUT"]
os.symlink("/etc/passwd", os.path.join(out, "passwd"))
os.symlink("/etc", os.path.join(out, "etc"))
os.mkfifo(os.path.join(out, "fifo"))
open("outside.txt", "w").write("outside secret\\n")
os.link("outside.txt", os.path.join(out, "hardlink"))
os.makedirs(os.path.join(out, "plots", "deep"))
open(os.path.join(out, "plots", "deep", "data.json"), "w").write('{"a": [1, 2]}')
open(os.path.join(out, "a file with spaces.txt"), "w").write("one\\ntwo\\n")
open(os.path.join(out, "caf\u00e9.md"), "w").write("# caf\u00e9\\n")
open(os.path.join(out, "pair-1"), "w").write("shared\\n")
os.link(os.path.join(out, "pair-1"), os.path.join(out, "plots", "pair-2"))
print("set up")
PY
run_json $T/traps.json $T/traps.py --out $T/out
is "$(jget $T/traps.json 'r["status"]')" ok "status ok"
is "$(jget $T/traps.json '[a["path"] for a in r["artifacts"]]')" \
    '["a file with spaces.txt", "caf\u00e9.md", "pair-1", "plots/deep/data.json", "plots/pair-2"]' \
    "listed: regular files only, hard links within output/ kept"
is "$(jget $T/traps.json 'r["artifacts_skipped"]')" 4 "skipped: two symlinks, the FIFO, the hard link to a file outside"
is "$(jget $T/traps.json 'r["artifacts"][3]["summary"]')" "JSON object with 1 key" "nested JSON summarised"
id=$(jget $T/traps.json 'r["run_id"]')
zip=$T/out/$id/artifacts.zip
unzip -tq "$zip" >/dev/null 2>&1
ok $? "the zip passes unzip -t"
is "$(unzip -Z1 "$zip" | LC_ALL=C sort | tr '\n' '|')" "a file with spaces.txt|café.md|pair-1|plots/deep/data.json|plots/pair-2|" \
    "the zip holds exactly the listed files"
unzip -Z1 "$zip" | grep -qE '^/|\.\./|passwd|fifo|hardlink|^etc'
ok $((! $?)) "no absolute, .., symlink, FIFO or outside entries in the zip"
! unzip -p "$zip" 2>/dev/null | grep -q "outside secret\|root:"
ok $? "no byte of /etc/passwd or of the outside file in the zip"
"$PYTHON3" - "$zip" <<'PY'
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
assert z.testzip() is None
for i in z.infolist():
    assert not i.filename.startswith("/") and ".." not in i.filename.split("/")
    assert (i.external_attr >> 28) != 0o12  # no symlink entries
PY
ok $? "Python's zipfile: no absolute, .. or symlink entries"
cmp -s "$T/out/$id/plots/deep/data.json" <(printf '{"a": [1, 2]}')
ok $? "--out keeps nested paths and bytes"
[ -f "$T/out/$id/a file with spaces.txt" ] && [ -f "$T/out/$id/café.md" ]
ok $? "--out keeps odd names"
[ ! -e "$T/out/$id/passwd" ] && [ ! -e "$T/out/$id/hardlink" ]
ok $? "--out holds none of the skipped entries"
is "$(cat $T/outside.txt)" "outside secret" "the outside file is untouched"
is "$(jget $T/traps.json '[a["url"] for a in r["artifacts"]][0]')" "/artifacts/$id/a%20file%20with%20spaces.txt" "URLs are percent-encoded"

# Names that are one file on Linux but a path on Windows: the listing keeps
# them, the zip's entries are safe for a Windows unzip tool.
cat >$T/windows.py <<'PY'
import os
out = os.environ["SCRIPT_OUTPUT"]
for name in ["..\\..\\x.bat", "C:\\evil.txt", "c:evil2.txt", "a\\b\\c.txt", "dots...", ".. ", "ctl\x01name",
             "stream.txt:hidden", "ok.txt"]:
    open(os.path.join(out, name), "w").write(name)
os.makedirs(os.path.join(out, "..."))
open(os.path.join(out, "...", "in.txt"), "w").write("in")
PY
run_json $T/windows.json $T/windows.py --out $T/outw
is "$(jget $T/windows.json 'len(r["artifacts"])')" 10 "Windows-hostile names: all ten listed"
wid=$(jget $T/windows.json 'r["run_id"]')
"$PYTHON3" - "$T/outw/$wid/artifacts.zip" >$T/windows.out 2>&1 <<'PY'
import ntpath, os, sys, tempfile, zipfile
z = zipfile.ZipFile(sys.argv[1])
bad = []
names = z.namelist()
for name in names:
    # What a Windows tool does with the name: '/' and '\\' both separate,
    # a drive or a root is absolute, trailing dots and blanks are dropped.
    dest = "C:\\dest"
    target = ntpath.normpath(ntpath.join(dest, name.replace("/", "\\")))
    comps = name.replace("\\", "/").split("/")
    if (not target.lower().startswith(dest.lower() + "\\") or ntpath.splitdrive(name)[0] or ":" in name
            or any(c.rstrip(". ") in ("", "..") and c != "" for c in comps) or any(ord(ch) < 32 for ch in name)):
        bad.append(name)
print("bad:", bad)
print("count:", len(names))
# And Python's own extraction stays in its directory.
d = tempfile.mkdtemp()
z.extractall(d)
for root, dirs, files in os.walk(d):
    for f in files:
        assert os.path.realpath(os.path.join(root, f)).startswith(os.path.realpath(d) + os.sep)
print("extracted")
PY
is "$(grep '^bad:' $T/windows.out)" "bad: []" "unpacked as a Windows tool would: no entry leaves the directory, none names a drive, a stream or the parent"
is "$(grep -c '^count: 10$\|^extracted$' $T/windows.out)" 2 "all ten are in the zip, and Python's zipfile extracts them in place"
is "$(unzip -p "$T/outw/$wid/artifacts.zip" 'ok.txt')" ok.txt "an ordinary name keeps its name"

printf 'print("nothing to see")\n' >$T/none.py
run_json $T/none.json $T/none.py --out $T/out2
is "$(jget $T/none.json 'r["artifacts"]')" "[]" "no artifacts"
is "$(jget $T/none.json 'r["zip_url"]')" null "and no zip"
[ ! -e $T/out2 ]
ok $? "--out is not created when there is nothing to copy"

# A later run cannot read an earlier run's files (in the jail it cannot see
# them; in the fallback they are no longer its uid's, and runs/ cannot be
# listed).
cat >$T/secret.py <<'PY'
import os
open(os.path.join(os.environ["SCRIPT_OUTPUT"], "secret.txt"), "w").write("earlier run's secret\n")
PY
run_json $T/secret.json $T/secret.py
sid=$(jget $T/secret.json 'r["run_id"]')
cat >$T/peek.py <<PY
import os
for p in ["$RUNMYSCRIPT_STATE_DIR/runs/$sid/output/secret.txt", "$RUNMYSCRIPT_STATE_DIR/runs"]:
    try:
        if os.path.isdir(p):
            print("R listed", os.listdir(p))
        else:
            print("R read", open(p).read().strip())
    except OSError as e:
        print("R refused", e.errno)
PY
run_json $T/peek.json $T/peek.py
! grep -q "R read\|R listed" <<<"$(jget $T/peek.json 'r["logs"]')"
ok $? "a later run can neither read an earlier run's files nor list the runs"
if [ "$(id -u)" = 0 ]; then
    is "$(stat -c %u "$RUNMYSCRIPT_STATE_DIR/runs/$sid" "$RUNMYSCRIPT_STATE_DIR/runs/$sid/output/secret.txt" | sort -u)" 0 \
        "after the run its files belong to the server again, not to the run's uid"
else
    skip "run uids are given and taken back only when the server is root"
fi

done_testing
