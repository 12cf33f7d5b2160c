#!/bin/bash
# The system a script sees is the host's: every symlink under /usr/lib and
# /usr/bin that resolves on the host resolves in a run too, in every
# isolation mode (tests/lib/modes.sh). Debian reaches libblas.so.3,
# liblapack.so.3, java, editor... through /etc/alternatives, the
# interpreter's sitecustomize.py through /etc/python3.X: a jail whose /etc
# lacks them leaves those links dangling, and an extension linked against
# the system BLAS fails to import. One link stays out on purpose:
# /etc/environment (systemd's environment.d links it), the host's
# variables, which may hold credentials.
#
# Harmless: the scripts only list and stat files.
. "${top_srcdir:?run me through make check, or set top_srcdir}/tests/lib/tap.sh" || exit 99
. "$top_srcdir/tests/lib/modes.sh"
T=$TEST_TMP

# A link resolves when what it leads to can be opened (stat alone would
# pass Landlock, which does not govern it).
cat >$T/links.py <<'PY'
import os, sys
def opens(p):
    try:
        os.close(os.open(p, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY))
        return True
    except OSError:
        return False
seen = []
for top in ("/usr/lib", "/usr/bin"):
    for dp, dns, fns in os.walk(top):
        for n in dns + fns:
            p = os.path.join(dp, n)
            if os.path.islink(p) and opens(p):
                seen.append(p)
sys.stdout.write("".join(p + "\n" for p in sorted(seen)))
PY
cat >$T/blas.py <<'PY'
import ctypes
for name in ("libblas.so.3", "liblapack.so.3"):
    try:
        ctypes.CDLL(name)
        print("R", name, "loaded")
    except OSError as e:
        print("R", name, "failed:", e)
PY
mode_file $T/links.py $T/blas.py
HAVE_BLAS=0
[ -e /usr/lib/x86_64-linux-gnu/libblas.so.3 ] || ldconfig -p 2>/dev/null | grep -q 'libblas\.so\.3 '
[ $? = 0 ] && HAVE_BLAS=1

for m in $RMS_MODES; do
    mode_enter $m || { skip "$m: $MODE_SKIP"; continue; }
    # The host's view, as a user of no privilege (a run never has root's:
    # /usr/lib/ssl/private leads to root's 0700 /etc/ssl/private).
    UNPRIV=()
    [ "$(id -u)" = 0 ] && UNPRIV=(setpriv --reuid=$RMS_NOBODY --regid=$RMS_NOBODY --clear-groups)
    "${UNPRIV[@]}" "$PYTHON3" $T/links.py >$T/$m-host.txt 2>/dev/null
    mode_rms run $T/links.py --json >$T/$m.json 2>$T/$m.err
    is "$(jget $T/$m.json 'r["status"]')" ok "$m: the walk ran" || diag "$m: $(head -c 300 $T/$m.err)"
    jget $T/$m.json 'r["logs"]' 2>/dev/null | grep '^/' | sort >$T/$m-got.txt
    grep -v -x -F /usr/lib/environment.d/99-environment.conf $T/$m-host.txt | sort >$T/$m-want.txt
    missing=$(comm -23 $T/$m-want.txt $T/$m-got.txt)
    [ -s $T/$m-want.txt ] && [ -z "$missing" ]
    ok $? "$m: every link that resolves on the host ($(wc -l <$T/$m-want.txt)) resolves in the run"
    [ -z "$missing" ] || diag "$m: dangling in the run: $(echo "$missing" | head -8 | tr '\n' ' ')"
    grep -q -x -F /usr/lib/environment.d/99-environment.conf $T/$m-got.txt
    ok $((!$?)) "$m: but not /etc/environment's link, the host's variables"
    if [ $HAVE_BLAS = 1 ]; then
        mode_rms run $T/blas.py --json >$T/$m-blas.json 2>&1
        like "$(jget $T/$m-blas.json 'r["logs"]')" "R libblas.so.3 loaded" "$m: ctypes loads libblas.so.3 (reached through /etc/alternatives)"
    else
        skip "$m: libblas.so.3: libblas3 is not installed"
    fi
done

done_testing
