#!/bin/bash
# The systemd unit that make install puts in place: installed under the
# prefix's systemd directory with the install's paths, restarted on
# failure, reloaded with SIGHUP, hardened without what would take the
# jail's namespaces, mounts or cgroups away; and `systemd-analyze verify`
# finds nothing wrong in it (skipped where systemd is not installed).
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/install.sh"
trap cleanup_tmp EXIT

D=$TEST_TMP/inst
install_tree "$D"
ok $? "make install DESTDIR=..."
UNIT=$(find "$D" -path '*/systemd/system/runmyscript.service' -type f | head -1)
[ -n "$UNIT" ]
ok $? "installed: runmyscript.service under the prefix's lib/systemd/system"
[ -n "$UNIT" ] || { done_testing; exit 1; }

val() { sed -n "s/^$1=//p" "$UNIT" | head -1; }
is "$(val ExecStart)" "${INST_BIN#"$D"} serve --listen unix:/run/runmyscript/fcgi.sock" \
    "ExecStart: the installed program's serve on nginx's socket"
is "$(val Restart)" on-failure "Restart=on-failure"
is "$(val ExecReload)" '/bin/kill -HUP $MAINPID' "reload: SIGHUP"
is "$(val NoNewPrivileges)" yes "hardened: NoNewPrivileges"
is "$(val ProtectSystem)" full "hardened: ProtectSystem=full"
ok "$(grep -q '@[a-z]*@' "$UNIT" && echo 1 || echo 0)" "every path filled in"
# What the jail needs is not taken away: its namespaces (RestrictNamespaces,
# PrivateUsers), its filters and mounts (SystemCallFilter), a /proc it can
# mount a new one beside (ProtectKernelTunables, ProtectProc, ProcSubset),
# its cgroups (ProtectControlGroups), its capabilities.
for k in RestrictNamespaces PrivateUsers SystemCallFilter ProtectKernelTunables ProtectProc ProcSubset \
    ProtectControlGroups CapabilityBoundingSet MemoryDenyWriteExecute DynamicUser; do
    ok "$(grep -q "^$k=" "$UNIT" && echo 1 || echo 0)" "not set: $k (it would break the jail)"
done

if command -v systemd-analyze >/dev/null 2>&1; then
    # verify checks that ExecStart's program exists: the copy points at the
    # program installed under DESTDIR.
    mkdir -p "$TEST_TMP/unit"
    sed "s|^ExecStart=[^ ]*|ExecStart=$INST_BIN|" "$UNIT" >"$TEST_TMP/unit/runmyscript.service"
    OUT=$(SYSTEMD_LOG_LEVEL=warning systemd-analyze verify --man=no "$TEST_TMP/unit/runmyscript.service" 2>&1)
    RC=$?
    ok $RC "systemd-analyze verify: the unit is valid"
    # Lines about other units (nginx.service is not installed here, nor
    # is this machine's systemd running) are not the unit's.
    MINE=$(printf '%s\n' "$OUT" | grep 'runmyscript.service' | grep -v 'nginx.service')
    is "$MINE" "" "and says nothing of it" || printf '%s\n' "$OUT" | sed 's/^/# /'
else
    skip "systemd is not installed (./quickstart test installs it): no systemd-analyze verify"
fi
done_testing
