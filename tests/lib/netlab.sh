# netlab.sh: a network lab of the test's own, for the tests of a run's
# network. Source it after tap.sh; netlab_up makes it (or says skip where
# the machine cannot), and it is taken down on exit, failed or not.
#
# Two network namespaces, named after the test's pid, joined by one veth
# pair and by nothing else:
#
#   NL_SRV  "the server": the test runs runmyscript in it (netlab_exec),
#           the CLI or `serve`. Its one route leads to NL_OUT, and its
#           resolv.conf (/etc/netns/NL_SRV/resolv.conf) names the lab's DNS.
#           It has 198.51.100.2 and 2001:db8::2 on the veth.
#   NL_OUT  "the outside": the lab's router (198.51.100.1, 2001:db8::1), its
#           DNS on those addresses, and its test hosts, every one with an
#           HTTP server on port 80 and an HTTPS one on 443. It has no other
#           link: nothing in the lab can reach a real address, whatever a
#           broken policy lets a script try.
#
# The hosts of NL_OUT (netlab_dns.py answers their names):
#
#   www.lab.test    203.0.113.10, 2001:db8:1::10   a host to allow
#   api.lab.test    203.0.113.11                    a second one (a *.lab.test wildcard)
#   other.example   203.0.113.20, 2001:db8:1::20   a host never allowed
#   v6.lab.test     2001:db8:1::10 (AAAA only)
#   and traps, addresses a script must never reach, which answer too so
#   that a policy that lets one through is seen reaching it:
#   private.lab.test   10.0.0.1
#   cgnat.lab.test     100.64.0.1
#   metadata.lab.test  169.254.169.254
#   ula.lab.test       fd00::1
#   names of places the lab cannot hold, tried all the same:
#   loopback.lab.test  127.0.0.1       mapped.lab.test  ::ffff:127.0.0.1
#   multicast.lab.test 224.0.0.1       zero.lab.test    0.0.0.0
#   rebind.lab.test    CNAME to loopback.lab.test
#
# The web server's paths: / ("lab ADDRESS HOST"), /big/N (N bytes),
# /redirect?to=URL (a 302). NL_HTTP_LOG has a line per request
# ("ADDRESS PORT PATH HOST"), NL_DNS_LOG one per query ("NAME TYPE"):
# netlab_reached ADDRESS says whether any request reached ADDRESS.
#
# HTTPS: the lab makes a CA (NL_CA, a PEM file) and a certificate for
# every name and address above. A script trusts it through
# `netlab_py_ca`, a line of Python that defines LAB_CA (the PEM) and
# LAB_TLS (an ssl context that trusts it), since a run's environment
# takes nothing from the caller.
#
# netlab_tripwire PORT...: the same web server in the server's namespace,
# on its loopback and its own addresses (127.0.0.1, ::1, 198.51.100.2,
# 2001:db8::2) at PORT... (default 80 443s), logging to NL_SRV_LOG: what a
# script must never reach on the machine that runs it.
# netlab_tripped: true when anything reached it.
#
# netlab_leaks prints what of the lab is left (namespaces, interfaces,
# processes); after netlab_down it prints nothing.
NL_ID=rmslab$$
NL_SRV=$NL_ID-srv
NL_OUT=$NL_ID-out
NL_IF_SRV=rl$$s
NL_IF_OUT=rl$$o
NL_DIR=
NL_PIDS=
NL_UP=0
NL_DNS_ADDR=198.51.100.1
NL_SRV_ADDR=198.51.100.2
NL_SRV_ADDR6=2001:db8::2
# name  type  value: the lab's zone
NL_ZONE='www.lab.test A 203.0.113.10
www.lab.test AAAA 2001:db8:1::10
api.lab.test A 203.0.113.11
other.example A 203.0.113.20
other.example AAAA 2001:db8:1::20
v6.lab.test AAAA 2001:db8:1::10
private.lab.test A 10.0.0.1
cgnat.lab.test A 100.64.0.1
metadata.lab.test A 169.254.169.254
ula.lab.test AAAA fd00::1
loopback.lab.test A 127.0.0.1
mapped.lab.test AAAA ::ffff:127.0.0.1
multicast.lab.test A 224.0.0.1
zero.lab.test A 0.0.0.0
server.lab.test A 198.51.100.2
rebind.lab.test CNAME loopback.lab.test'
# The outside's addresses beside its router's: its hosts and its traps.
NL_HOSTS4="203.0.113.10 203.0.113.11 203.0.113.20 10.0.0.1 100.64.0.1 169.254.169.254"
NL_HOSTS6="2001:db8:1::10 2001:db8:1::20 fd00::1"

netlab__ip() { ip "$@" >>"$NL_DIR/ip.log" 2>&1; }

# netlab_up: makes the lab; skip_all (with the reason) where this machine
# cannot, Bail out where it should have and did not.
netlab_up() {
    [ "$(id -u)" = 0 ] || skip_all "the network lab needs root (network namespaces and a veth pair)"
    command -v ip >/dev/null || skip_all "ip (iproute2) is missing"
    command -v openssl >/dev/null || skip_all "openssl is missing (the lab's certificate)"
    NL_DIR=$TEST_TMP/netlab
    mkdir -p "$NL_DIR"
    trap "netlab_down; ${NETLAB_ON_EXIT:-cleanup_tmp}" EXIT
    trap 'exit 130' INT TERM
    ip netns add "$NL_SRV" 2>"$NL_DIR/netns.err" ||
        skip_all "this machine cannot make a network namespace: $(head -c 200 "$NL_DIR/netns.err")"
    NL_UP=1
    ip netns add "$NL_OUT" || netlab__bail "ip netns add $NL_OUT"
    ip netns exec "$NL_SRV" true 2>"$NL_DIR/netns.err" ||
        skip_all "this machine cannot enter a network namespace (ip netns exec): $(head -c 200 "$NL_DIR/netns.err")"
    [ -e /proc/sys/net/ipv6 ] && [ "$(cat /proc/sys/net/ipv6/conf/all/disable_ipv6 2>/dev/null)" != 1 ] ||
        skip_all "IPv6 is off on this machine, and the lab's hosts have IPv6 addresses"
    # /etc/netns/NAME/ is what `ip netns exec` mounts over /etc: the
    # lab's DNS, and no search domain of the machine's.
    mkdir -p "/etc/netns/$NL_SRV"
    printf 'nameserver %s\noptions timeout:1 attempts:2\n' "$NL_DNS_ADDR" >"/etc/netns/$NL_SRV/resolv.conf"
    netlab__ip link add "$NL_IF_OUT" netns "$NL_OUT" type veth peer name "$NL_IF_SRV" netns "$NL_SRV" ||
        skip_all "this machine cannot make a veth pair: $(tail -1 "$NL_DIR/ip.log")"
    local a
    netlab__ip -n "$NL_OUT" link set lo up &&
        netlab__ip -n "$NL_OUT" link set "$NL_IF_OUT" up &&
        netlab__ip -n "$NL_OUT" addr add 198.51.100.1/24 dev "$NL_IF_OUT" &&
        netlab__ip -n "$NL_OUT" addr add 2001:db8::1/64 dev "$NL_IF_OUT" nodad &&
        netlab__ip -n "$NL_SRV" link set lo up &&
        netlab__ip -n "$NL_SRV" link set "$NL_IF_SRV" up &&
        netlab__ip -n "$NL_SRV" addr add "$NL_SRV_ADDR/24" dev "$NL_IF_SRV" &&
        netlab__ip -n "$NL_SRV" addr add "$NL_SRV_ADDR6/64" dev "$NL_IF_SRV" nodad &&
        netlab__ip -n "$NL_SRV" route add default via 198.51.100.1 &&
        netlab__ip -n "$NL_SRV" -6 route add default via 2001:db8::1 ||
        netlab__bail "the lab's addresses"
    # The outside answers for every address the server sends it; the way
    # back is the veth (198.51.100.0/24, 2001:db8::/64 are on it).
    for a in $NL_HOSTS4; do netlab__ip -n "$NL_OUT" addr add "$a/32" dev lo || netlab__bail "address $a"; done
    for a in $NL_HOSTS6; do netlab__ip -n "$NL_OUT" addr add "$a/128" dev lo nodad || netlab__bail "address $a"; done
    netlab__cert || netlab__bail "the lab's certificate: $(tail -3 "$NL_DIR/openssl.log")"
    printf '%s\n' "$NL_ZONE" >"$NL_DIR/zone"
    NL_HTTP_LOG=$NL_DIR/http.log
    NL_DNS_LOG=$NL_DIR/dns.log
    : >"$NL_HTTP_LOG"
    : >"$NL_DNS_LOG"
    ip netns exec "$NL_OUT" "$PYTHON3" "$top_srcdir/tests/lib/netlab_dns.py" "$NL_DIR/zone" "$NL_DNS_LOG" \
        "$NL_DIR/dns.ready" 198.51.100.1 2001:db8::1 >"$NL_DIR/dns.out" 2>&1 &
    NL_PIDS="$NL_PIDS $!"
    ip netns exec "$NL_OUT" "$PYTHON3" "$top_srcdir/tests/lib/netlab_http.py" "$NL_DIR/host.pem" "$NL_DIR/host.key" \
        "$NL_HTTP_LOG" "$NL_DIR/http.ready" >"$NL_DIR/http.out" 2>&1 &
    NL_PIDS="$NL_PIDS $!"
    wait_until netlab__ready
    [ -e "$NL_DIR/dns.ready" ] || netlab__bail "the lab's DNS did not start: $(tail -3 "$NL_DIR/dns.out")"
    [ -e "$NL_DIR/http.ready" ] || netlab__bail "the lab's web server did not start: $(tail -3 "$NL_DIR/http.out")"
    NL_CA=$NL_DIR/ca.pem
    chmod -R a+rX "$NL_DIR"
}

netlab__ready() { [ -e "$NL_DIR/dns.ready" ] && [ -e "$NL_DIR/http.ready" ]; }

netlab__bail() {
    diag "$(tail -5 "$NL_DIR/ip.log" 2>/dev/null)"
    echo "Bail out! the network lab: $1"
    exit 1
}

# The CA and the hosts' certificate (every name and address of the lab).
netlab__cert() {
    local san="DNS:www.lab.test,DNS:api.lab.test,DNS:other.example,DNS:v6.lab.test,DNS:private.lab.test"
    san="$san,DNS:cgnat.lab.test,DNS:metadata.lab.test,DNS:ula.lab.test,DNS:loopback.lab.test,DNS:mapped.lab.test"
    local a
    for a in $NL_HOSTS4 $NL_HOSTS6 127.0.0.1 198.51.100.1 198.51.100.2; do san="$san,IP:$a"; done
    {
        openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=runmyscript test lab CA" \
            -keyout "$NL_DIR/ca.key" -out "$NL_DIR/ca.pem" -addext "basicConstraints=critical,CA:TRUE" \
            -addext "keyUsage=critical,keyCertSign,cRLSign" &&
            openssl req -newkey rsa:2048 -nodes -subj "/CN=www.lab.test" -keyout "$NL_DIR/host.key" \
                -out "$NL_DIR/host.csr" &&
            printf 'subjectAltName=%s\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' "$san" >"$NL_DIR/host.ext" &&
            openssl x509 -req -in "$NL_DIR/host.csr" -CA "$NL_DIR/ca.pem" -CAkey "$NL_DIR/ca.key" \
                -CAcreateserial -days 2 -extfile "$NL_DIR/host.ext" -out "$NL_DIR/host.pem"
    } >"$NL_DIR/openssl.log" 2>&1
}

# netlab_exec CMD...: CMD in the server's namespace (with the lab's
# resolv.conf).
netlab_exec() { ip netns exec "$NL_SRV" "$@"; }
# netlab_out CMD...: CMD in the outside namespace.
netlab_out() { ip netns exec "$NL_OUT" "$@"; }

# netlab_py_ca: a line of Python defining LAB_CA (the lab's CA, PEM) and
# LAB_TLS (an ssl context that trusts it and nothing else).
netlab_py_ca() {
    printf 'import ssl as _lab_ssl; LAB_CA = %s; LAB_TLS = _lab_ssl.create_default_context(cadata=LAB_CA)\n' \
        "$("$PYTHON3" -c 'import sys; print(repr(open(sys.argv[1]).read()))' "$NL_CA")"
}

netlab_tripwire() {
    NL_SRV_LOG=$NL_DIR/server-http.log
    : >"$NL_SRV_LOG"
    rm -f "$NL_DIR/tripwire.ready"
    ip netns exec "$NL_SRV" "$PYTHON3" "$top_srcdir/tests/lib/netlab_http.py" "$NL_DIR/host.pem" "$NL_DIR/host.key" \
        "$NL_SRV_LOG" "$NL_DIR/tripwire.ready" "$@" >"$NL_DIR/tripwire.out" 2>&1 &
    NL_PIDS="$NL_PIDS $!"
    wait_until test -e "$NL_DIR/tripwire.ready" && return 0
    netlab__bail "the server's tripwire did not start: $(tail -3 "$NL_DIR/tripwire.out")"
}
netlab_tripped() { [ -s "$NL_SRV_LOG" ]; }

# netlab_reached ADDRESS: true when a request of the lab's log reached
# ADDRESS (on any port).
netlab_reached() { grep -q "^$1 " "$NL_HTTP_LOG"; }
# netlab_asked NAME: true when the lab's DNS was asked NAME.
netlab_asked() { grep -qi "^$1 " "$NL_DNS_LOG"; }

# netlab_leaks: what of the lab is left: its namespaces, its interfaces
# (in the machine's namespace, where a broken teardown would leave one),
# the processes in its namespaces. Prints nothing when nothing is.
netlab_leaks() {
    local ns
    ip netns list 2>/dev/null | grep -o "^$NL_ID-[a-z]*" | sed 's/^/namespace /'
    ip -o link show 2>/dev/null | grep -E ": ($NL_IF_SRV|$NL_IF_OUT)[@:]" | sed 's/^/interface /'
    for ns in $NL_SRV $NL_OUT; do
        [ -e "/run/netns/$ns" ] || continue
        ip netns pids "$ns" 2>/dev/null | sed "s/^/process in $ns: /"
    done
}

# netlab_pids_srv: the processes in the server's namespace (the lab's own
# ones are in the outside's).
netlab_pids_srv() { ip netns pids "$NL_SRV" 2>/dev/null; }

# netlab_down: ends the lab's processes (its servers, and whatever the
# test left running in its namespaces: only this test's processes are in
# them), removes the namespaces (the veth goes with them) and
# /etc/netns/NL_SRV. Safe to call twice.
netlab_down() {
    [ "$NL_UP" = 1 ] || return 0
    local p ns
    for p in $NL_PIDS; do kill "$p" 2>/dev/null; done
    for ns in $NL_SRV $NL_OUT; do
        [ -e "/run/netns/$ns" ] || continue
        for p in $(ip netns pids "$ns" 2>/dev/null); do kill -TERM "$p" 2>/dev/null; done
    done
    for p in $NL_PIDS; do wait "$p" 2>/dev/null; done
    for ns in $NL_SRV $NL_OUT; do
        [ -e "/run/netns/$ns" ] || continue
        for p in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
        ip netns del "$ns" 2>/dev/null
    done
    rm -rf "/etc/netns/$NL_SRV"
    NL_UP=0
}
