# install.sh: `make install DESTDIR=...` of the build tree into a test's own
# directory. Source it after tap.sh.
#
#   install_tree DEST   installs; sets INST_BIN (the program), INST_DATA
#                       (pkgdatadir), INST_MAN (runmyscript.1) under DEST
install_tree() {
    local dest=$1 log=$TEST_TMP/install.log
    # The test runs inside `make check`: its jobserver and flags are not ours.
    if ! env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u MAKEOVERRIDES \
        make -C "$top_builddir" install DESTDIR="$dest" >"$log" 2>&1; then
        sed 's/^/# /' "$log" | tail -20
        return 1
    fi
    INST_BIN=$(find "$dest" -path '*/bin/runmyscript' -type f | head -1)
    INST_DATA=$(dirname "$(find "$dest" -name import-names.tsv -type f | head -1)")
    INST_MAN=$(find "$dest" -path '*/man1/runmyscript.1' -type f | head -1)
    [ -x "$INST_BIN" ] && [ -d "$INST_DATA" ] && [ -f "$INST_MAN" ]
}
