#!/bin/bash
# A run sees the package store entries its environment links, and no
# other: an environment's directories are symlinks into STATE/store, so
# the jail binds each entry the environment links at its own host path
# (never the whole store, which would show every package any run
# installed, from whatever index, and the kept resolutions), and the
# fallback's Landlock rules name the same entries. In the four modes of
# tests/lib/modes.sh: a run of an environment with rms-alpha looks for the
# entry of rms-beta (another environment's), for the store's listing and
# for the kept resolutions. The plain fallback (no Landlock) cannot hold
# this: it shows what its uid may read, the store included (as
# doc/isolation.md says of that mode); there the test says skip.
#
# Harmless: the script only lists and reads files.
. "${top_srcdir:?run me through make check, or set top_srcdir}/tests/lib/tap.sh" || exit 99
. "$top_srcdir/tests/lib/modes.sh"
T=$TEST_TMP
[ -f "$WHEELHOUSE/.stamp" ] || skip_all "no wheelhouse (make check builds it)"
# The modes' users read the wheels: a copy of the two the test needs.
mkdir -p $T/wh
cp "$WHEELHOUSE"/rms_alpha-*.whl "$WHEELHOUSE"/rms_beta-*.whl $T/wh/ || skip_all "the wheelhouse lacks rms-alpha or rms-beta"
chmod -R a+rX $T/wh
RMS_MODE_ENV="RUNMYSCRIPT_FIND_LINKS=file://$T/wh RUNMYSCRIPT_INDEX_URL=none"

printf 'import rms_beta\nprint(rms_beta.combine("b"))\n' >$T/beta.py
# What a run with rms-alpha alone can reach of the store. OTHER (the
# entry of rms-beta) is put into the script by the test.
cat >$T/look.py.in <<'PY'
import os, rms_alpha
OTHER = "@OTHER@"
def reach(what, fn):
    try:
        r = fn()
        print("R", what, "open", r if isinstance(r, str) else "")
    except OSError as e:
        print("R", what, "refused", e.strerror)
pkg = os.path.dirname(rms_alpha.__file__)
entry = os.path.dirname(os.path.dirname(os.path.realpath(pkg)))
store = os.path.dirname(os.path.dirname(entry))
print("R own import", rms_alpha.greet("store"))
reach("own entry", lambda: open(os.path.join(entry, "runmyscript-wheel.txt")).read(0))
reach("store listing", lambda: " ".join(sorted(os.listdir(os.path.dirname(entry)))))
reach("other entry", lambda: " ".join(os.listdir(OTHER)))
reach("other file", lambda: open(os.path.join(OTHER, "site", "rms_beta", "__init__.py")).read(1))
reach("other mark", lambda: open(os.path.join(OTHER, "runmyscript-wheel.txt")).read(1))
reach("resolutions", lambda: " ".join(os.listdir(os.path.join(store, "res"))))
PY

for m in $RMS_MODES; do
    mode_enter $m || { skip "$m: $MODE_SKIP"; continue; }
    mode_rms run $T/beta.py --json --no-auto-deps --with rms-beta >$T/$m-beta.json 2>$T/$m-beta.err
    is "$(jget $T/$m-beta.json 'r["status"]')" ok "$m: an environment with rms-beta (and rms-alpha)" ||
        { diag "$(head -c 400 $T/$m-beta.err)"; continue; }
    other=$(dirname "$(dirname "$(ls -d "$MODE_STATE"/store/py*/*/site/rms_beta)")")
    alpha=$(dirname "$(dirname "$(ls -d "$MODE_STATE"/store/py*/*/site/rms_alpha)")")
    sed "s|@OTHER@|$other|" $T/look.py.in >$T/$m-look.py
    mode_file $T/$m-look.py
    mode_rms run $T/$m-look.py --json --no-auto-deps --with rms-alpha >$T/$m.json 2>$T/$m.err
    L=$(jget $T/$m.json 'r["logs"]' 2>/dev/null)
    like "$L" "R own import alpha says hello to store" "$m: the run imports rms_alpha through its environment's symlink" ||
        diag "$(head -c 400 $T/$m.err) $(printf '%s' "$L" | head -c 400)"
    like "$L" "R own entry open" "$m: and reads its own store entry"
    iso=$(jget $T/$m.json 'r["isolation"]' 2>/dev/null)
    case $m:$iso in
    fallback-*:rlimits*)
        skip "$m: no Landlock here ($iso): the plain fallback shows whatever its uid may read, the store included"
        continue
        ;;
    esac
    # The store's directory lists this environment's entry alone (the
    # jail: only its binds are there), or not at all (Landlock).
    listing=$(printf '%s\n' "$L" | sed -n 's/^R store listing open //p')
    if printf '%s\n' "$L" | grep -q '^R store listing refused'; then
        ok 0 "$m: the store's directory cannot be listed"
    else
        is "$listing" "${alpha##*/}" "$m: the store's directory shows only the entry the environment links"
    fi
    like "$L" "R other entry refused" "$m: another environment's entry cannot be listed"
    like "$L" "R other file refused" "$m: nor its files read"
    like "$L" "R other mark refused" "$m: nor its mark"
    like "$L" "R resolutions refused" "$m: the kept resolutions are out of sight"
done

done_testing
