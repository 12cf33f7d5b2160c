#!/bin/bash
# The network lab itself (tests/lib/netlab.sh), before any run uses it:
# from the server's namespace its names resolve, its hosts answer over
# HTTP and HTTPS (the lab's CA trusted, nothing else), its redirects and
# large file work, nothing leads to a real address, and after it is taken
# down nothing of it is left.
. "${top_srcdir:?run me through make check, or set top_srcdir}/tests/lib/tap.sh" || exit 99
. "$top_srcdir/tests/lib/netlab.sh"
T=$TEST_TMP
netlab_up

# A probe from the server's namespace: the host's python3, no jail.
{
    netlab_py_ca
    cat <<'PY'
import socket, sys, urllib.request, urllib.error
what, arg = sys.argv[1], sys.argv[2]
if what == "resolve":
    try:
        print(" ".join(sorted({a[4][0] for a in socket.getaddrinfo(arg, 80, type=socket.SOCK_STREAM)})))
    except socket.gaierror as e:
        print("gaierror", e.args[0] == socket.EAI_NONAME)
elif what == "get":
    try:
        with urllib.request.urlopen(arg, timeout=5, context=LAB_TLS) as r:
            body = r.read()
            print(r.status, len(body), body[:60].decode("latin-1").strip())
    except Exception as e:
        print("error", type(e).__name__, e)
elif what == "untrusted":
    import ssl
    try:
        urllib.request.urlopen(arg, timeout=5, context=ssl.create_default_context(cafile=None, capath="/nonexistent"))
        print("trusted")
    except Exception as e:
        print("refused", "CERTIFICATE_VERIFY_FAILED" in str(e))
PY
} >$T/probe.py
probe() { netlab_exec "$PYTHON3" $T/probe.py "$@" 2>&1; }

is "$(probe resolve www.lab.test)" "2001:db8:1::10 203.0.113.10" "www.lab.test resolves to its two addresses"
is "$(probe resolve v6.lab.test)" "2001:db8:1::10" "v6.lab.test has only an IPv6 address"
is "$(probe resolve rebind.lab.test)" "127.0.0.1" "rebind.lab.test is a CNAME to loopback"
is "$(probe resolve mapped.lab.test)" "::ffff:127.0.0.1" "mapped.lab.test is an IPv4-mapped loopback"
is "$(probe resolve nosuch.lab.test)" "gaierror True" "an unknown name is NXDOMAIN"
netlab_asked nosuch.lab.test
ok $? "the lab's DNS logs the names it is asked"

like "$(probe get http://www.lab.test/)" "lab 2001:db8:1::10 www.lab.test" "HTTP to www.lab.test (IPv6 first)"
is "$(probe get http://203.0.113.10/ | cut -d' ' -f1,3-)" "200 lab 203.0.113.10 203.0.113.10" "HTTP to its IPv4 address"
is "$(probe get 'http://[2001:db8:1::10]/' | cut -d' ' -f1,3-)" "200 lab 2001:db8:1::10 [2001:db8:1::10]" "HTTP over IPv6"
like "$(probe get https://www.lab.test/)" "lab 2001:db8:1::10 www.lab.test" "HTTPS to www.lab.test, the lab's CA trusted"
is "$(probe get https://api.lab.test/ | cut -d' ' -f1,3-)" "200 lab 203.0.113.11 api.lab.test" "HTTPS to api.lab.test"
is "$(probe untrusted https://www.lab.test/)" "refused True" "the lab's certificate is refused without the lab's CA"
is "$(probe get http://www.lab.test/big/1048576 | cut -d' ' -f1,2)" "200 1048576" "the large-file endpoint"
is "$(probe get 'http://www.lab.test/redirect?to=http://api.lab.test/' | cut -d' ' -f1,3-)" "200 lab 203.0.113.11 api.lab.test" "a redirect is followed"
for trap in 10.0.0.1 100.64.0.1 169.254.169.254; do
    like "$(probe get http://$trap/)" "200" "the trap $trap answers (a policy that lets it through is seen)"
    netlab_reached $trap
    ok $? "the lab's log says $trap was reached"
done
like "$(probe get 'http://[fd00::1]/')" "200" "the trap fd00::1 answers"
netlab_reached 203.0.113.20 && r=1 || r=0
ok $r "nothing reached other.example's address, which nothing asked for"

# Nothing leads out of the lab (routes asked for, no packet sent).
netlab_out ip route get 192.0.2.1 >/dev/null 2>&1 && r=1 || r=0
ok $r "the outside has no route beyond the lab"
netlab_out ip -6 route get 2001:4860::1 >/dev/null 2>&1 && r=1 || r=0
ok $r "nor an IPv6 one"
is "$(netlab_exec ip route get 192.0.2.1 | grep -o 'via [0-9.]*')" "via 198.51.100.1" "the server's one way out is the lab's router"
is "$(netlab_exec ip -o link show | grep -vc ': lo:')" "1" "the server's namespace has one link besides lo"

# A process left in the server's namespace is ended with the lab.
ip netns exec "$NL_SRV" sleep 300 &
sleeper=$!
# (once ip has entered the namespace and become sleep)
srv_holds() { [ "$(netlab_pids_srv)" = "$1" ]; }
wait_until srv_holds $sleeper
is "$(netlab_pids_srv)" "$sleeper" "the lab sees the process in the server's namespace"
leaks=$(netlab_leaks)
like "$leaks" "namespace $NL_SRV" "netlab_leaks lists the live lab"
netlab_down
ended_within 5 $sleeper
ok $? "netlab_down ended it"
wait $sleeper 2>/dev/null
is "$(netlab_leaks)" "" "after netlab_down nothing of the lab is left"
[ -e /etc/netns/$NL_SRV ] && r=1 || r=0
ok $r "nor its resolv.conf"
done_testing
