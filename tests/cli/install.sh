#!/bin/bash
# make install / make uninstall into a DESTDIR, and the man page: every file
# the program needs at run time lands, the installed program runs, the man
# page documents every configuration key, and uninstall leaves nothing.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/install.sh"
trap cleanup_tmp EXIT

D=$TEST_TMP/inst
install_tree "$D"
ok $? "make install DESTDIR=... installs the program, its data and the man page"

for f in import-names.tsv runmyscript.conf.sample www/index.html nginx/site.conf.in nginx/dev.conf.in \
    nginx/fastcgi-params.conf apache/htaccess apache/cgi-bin.htaccess; do
    [ -s "$INST_DATA/$f" ]
    ok $? "installed: $f"
done
[ -x "$INST_DATA/nginx/render" ]
ok $? "installed: nginx/render, executable"

# The installed program runs the seed example's standard-library twin.
RUNMYSCRIPT_STATE_DIR=$TEST_TMP/state RUNMYSCRIPT_REQUIRE_ISOLATION=off \
    "$INST_BIN" run --json - <<<'print("installed", 6 * 7)' >"$TEST_TMP/run.json"
is "$(jget "$TEST_TMP/run.json" 'r["status"] + " " + r["logs"].strip()')" "ok installed 42" "the installed program runs a script"
like "$("$INST_BIN" --version)" "runmyscript " "the installed program says its version"

# The sample configuration is a valid one: every line a comment or a key.
"$INST_BIN" config --config "$INST_DATA/runmyscript.conf.sample" >/dev/null
ok $? "the sample configuration loads"
# and with its commented keys switched on, each is a real key.
sed -n 's/^# \([a-z_]* = .*\)$/\1/p' "$INST_DATA/runmyscript.conf.sample" \
    | sed "s|^state_dir = .*|state_dir = $TEST_TMP/state|; s|^find_links = .*|find_links = none|" >"$TEST_TMP/sample-on.conf"
"$INST_BIN" config --config "$TEST_TMP/sample-on.conf" >"$TEST_TMP/sample-on.out" 2>&1
ok $? "the sample's commented keys, switched on, load" || sed 's/^/# /' "$TEST_TMP/sample-on.out"

# The man page: every key `runmyscript config` prints is an entry of it, and
# so are the exit statuses; it renders without a warning.
keys=$("$INST_BIN" config | sed -n 's/^\([a-z_0-9]*\) = .*/\1/p')
[ "$(printf '%s\n' "$keys" | wc -l)" -gt 40 ]
ok $? "runmyscript config lists the keys"
missing=""
for k in $keys; do
    grep -qxF "\\fB$k\\fR" "$INST_MAN" || missing="$missing $k"
done
is "$missing" "" "the man page has an entry for every configuration key"
missing=""
for s in 64 65 66 78 120 121 122 124 125 130; do
    grep -qx "$s" "$INST_MAN" || missing="$missing $s"
done
is "$missing" "" "the man page lists the exit statuses"
missing=""
for sec in NAME SYNOPSIS DESCRIPTION MODES CONFIGURATION LIMITS "EXIT STATUS" FILES; do
    grep -q "^\.SH \"\{0,1\}$sec" "$INST_MAN" || missing="$missing [$sec]"
done
is "$missing" "" "the man page has its sections"
if command -v groff >/dev/null 2>&1; then
    # Every warning but "break" (a long path that cannot be justified on a
    # line, as a distcheck prefix is: typography, not an error).
    warn=$(groff -man -Tutf8 -ww -Wbreak -z "$INST_MAN" 2>&1)
    is "$warn" "" "groff renders the man page without a warning"
else
    skip "groff is not installed"
fi
if grep -v '^\.\\"' "$INST_MAN" | grep -Eq '@TABLE|%%[A-Z]+%%'; then ok 1 "no placeholder left in the man page"; else ok 0 "no placeholder left in the man page"; fi

env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u MAKEOVERRIDES make -C "$top_builddir" uninstall DESTDIR="$D" >"$TEST_TMP/un.log" 2>&1
ok $? "make uninstall"
is "$(find "$D" -type f -o -type l | sed "s|^$D||")" "" "make uninstall removes every file it installed"

done_testing
