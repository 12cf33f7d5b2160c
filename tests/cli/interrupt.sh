#!/bin/bash
# Ctrl-C at a terminal, as a person presses it: on a pseudo-terminal that is
# the command's controlling terminal, the interrupt character typed once the
# run has reached a phase. In the script's run and in an install alike it
# is a cancel: status cancelled, exit 130, nothing of "killed by signal 2"
# (the terminal's SIGINT goes to the foreground process group, which the
# jail's processes are not in).
# Runs in the jail where the host has it, in the rlimits fallback elsewhere
# (interrupt-rlimits.sh runs it there too).
RMS_JAIL_OPTIONAL=1
. "${top_srcdir:?run me through make check, or set top_srcdir}/tests/lib/tap.sh" || exit 99
T=$TEST_TMP
PTY="$PYTHON3 $top_srcdir/tests/lib/pty_run.py"
[ -f "$WHEELHOUSE/.stamp" ] || skip_all "no wheelhouse (make check builds it)"

# --- in the script's run ---
printf 'import time\nprint("the script has started", flush=True)\ntime.sleep(60)\nprint("never")\n' >$T/sleep.py
$PTY --interrupt-on "the script has started" $T/run.tty "$RUNMYSCRIPT" run $T/sleep.py --out $T/out
is "$?" 130 "Ctrl-C while the script runs: exit 130 (cancelled)"
shown=$(tr -d '\033' <$T/run.tty)
like "$shown" "--- cancelled" "the summary says cancelled"
like "$shown" "[runmyscript] the run was cancelled" "and the log says the run was cancelled"
case "$shown" in *"signal 2"* | *KeyboardInterrupt*) ok 1 "the script never saw the terminal's SIGINT" ;;
*) ok 0 "the script never saw the terminal's SIGINT (no KeyboardInterrupt, no signal 2)" ;; esac
case "$shown" in *never*) ok 1 "the script did not run on" ;; *) ok 0 "the script did not run on" ;; esac

# --- in an install: the installer held at a gate (tests/lib/gate_index.py) ---
. "$top_srcdir/tests/lib/gate.sh"
gate_start
printf 'import rms_alpha\nprint(rms_alpha.greet("c"))\n' >$T/alpha.py
$PTY --interrupt-on "[runmyscript] installing" $T/install.tty "$RUNMYSCRIPT" run $T/alpha.py "${INDEX[@]}" --out $T/out
is "$?" 130 "Ctrl-C during the install: exit 130 (cancelled)"
shown=$(tr -d '\033' <$T/install.tty)
like "$shown" "--- cancelled" "the summary says cancelled"
case "$shown" in *"alpha says hello"*) ok 1 "the script did not run" ;; *) ok 0 "the script did not run" ;; esac
is "$(ls -d $RUNMYSCRIPT_STATE_DIR/envs/*/ 2>/dev/null | grep -vc '/base-')" 0 "no environment was published"

done_testing
