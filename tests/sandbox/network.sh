#!/bin/bash
# A run's network (script_network = on), in the network lab of
# tests/lib/netlab.sh: runmyscript runs in a namespace whose one way out
# leads to the lab's hosts at documentation addresses, so that even a broken
# policy sends no packet to a real address. Each mode of tests/lib/modes.sh
# in turn (the jail as root and unprivileged; the fallback, which must
# refuse the network clearly or hold the same policy):
#
# - an allowed name over HTTP and HTTPS (the lab's CA), over IPv6 too, and
#   the record of it in the result (name, address, port, bytes);
# - a name not allowed, an address not allowed: refused fast, with an error
#   the script's library shows plainly, and the refusal in the record;
# - every address a script must never reach, whatever the allow-list says
#   (loopback, the server's own, private, shared, link-local with the
#   metadata address, unique-local, multicast, unspecified): by address (in
#   its dotted, decimal, octal and IPv4-mapped forms), by a name that
#   resolves to it (a CNAME too), and through a redirect from an allowed
#   host; the lab's traps and the server's own listeners (a tripwire on its
#   loopback and addresses, the FastCGI port of a `runmyscript serve`, an
#   nginx) see nothing;
# - net_connections and net_bytes crossed: the status the script's own,
#   `limit` and `network.limit` saying which;
# - the call's narrowing (`--network`): it narrows, it cannot widen, "off"
#   is none, a bad list is refused before anything runs, and a list where
#   the server gives no network is refused;
# - a kernel's cell and a warm run (jail-root) with the same policy; a cell
#   that asks for another network than its kernel's is refused until a reset;
# - the installer: it reaches its index (on the server's loopback) and no
#   file of the index's on a trap or on a host that is no index;
# - the doors: MCP over stdio (run_code's network argument,
#   structuredContent.network, the text's line) and /api/run over CGI (a
#   JSON body and a form);
# - afterwards, no process of the runs in the server's namespace, no
#   namespace or interface of theirs.
. "${top_srcdir:?run me through make check, or set top_srcdir}/tests/lib/tap.sh" || exit 99
. "$top_srcdir/tests/lib/modes.sh"
. "$top_srcdir/tests/lib/netlab.sh"
T=$TEST_TMP
netlab_up
netlab_tripwire 80 443s 8080
# What the server allows: three names (one on one port), nothing else.
ALLOW="www.lab.test,api.lab.test:443,v6.lab.test"
# An allow-list that names every class a script must never reach: they
# stay unreachable all the same.
WIDE="*.lab.test,10.0.0.0/8,100.64.0.0/10,169.254.0.0/16,127.0.0.0/8,224.0.0.0/4,fd00::/8,198.51.100.0/24,0.0.0.0/8"

# The probe: every URL of its input fetched (redirects followed), each
# verdict with the time it took, on one line of the log.
{
    netlab_py_ca
    cat <<'PY'
import json, os, sys, time, urllib.request, urllib.error
out = {}
for url in json.load(open(os.environ["SCRIPT_INPUT"])):
    t0 = time.monotonic()
    try:
        with urllib.request.urlopen(url, timeout=8, context=LAB_TLS) as r:
            body = r.read()
            v = "ok %d %s" % (r.status, body.decode("latin-1").strip() if len(body) < 200 else "%d bytes" % len(body))
    except urllib.error.HTTPError as e:
        v = "http %d" % e.code
    except urllib.error.URLError as e:
        v = "refused %s: %s" % (type(e.reason).__name__, e.reason)
    except Exception as e:
        v = "refused %s: %s" % (type(e).__name__, e)
    out[url] = [v, round(time.monotonic() - t0, 2)]
print("NETPROBE " + json.dumps(out))
PY
} >$T/probe.py
mode_file $T/probe.py

# lab_run NAME URL... [-- ARGS]: the probe in the current mode, in the
# server's namespace, with the lab's network; J the result, V the verdicts.
lab_run() {
    local name=$1 urls=() args=()
    shift
    while [ $# -gt 0 ] && [ "$1" != -- ]; do urls+=("$1"); shift; done
    [ "${1:-}" = -- ] && shift
    args=("$@")
    "$PYTHON3" -c 'import json,sys; print(json.dumps(sys.argv[1:]))' "${urls[@]}" >$T/$MODE-$name.in
    mode_file $T/$MODE-$name.in
    J=$T/$MODE-$name.json
    V=$T/$MODE-$name.v
    RC=0
    netlab_exec "${MODE_RUNAS[@]}" env -u RUNMYSCRIPT_CONFIG RUNMYSCRIPT_STATE_DIR="$MODE_STATE" \
        RUNMYSCRIPT_ISOLATION=$MODE_ISOLATION RUNMYSCRIPT_REQUIRE_ISOLATION=off ${RMS_MODE_ENV:-} \
        "$RUNMYSCRIPT" run $T/probe.py --input $T/$MODE-$name.in --json --timeout 120 \
        --set script_network=on --set "egress_allow=${LAB_ALLOW:-$ALLOW}" "${args[@]}" >$J 2>$J.err || RC=$?
    jget $J 'next((l[9:] for l in r["logs"].splitlines() if l.startswith("NETPROBE ")), "{}")' >$V 2>/dev/null ||
        echo '{}' >$V
    [ -s $J ] || diag "$MODE $name: no result: $(head -c 400 $J.err)"
}
# verdict URL: what the probe said of URL ("ok 200 ...", "refused ...").
verdict() { jget $V "r.get('''$1''', ['none', 0])[0]" 2>/dev/null; }
took() { jget $V "r.get('''$1''', ['none', 99])[1]" 2>/dev/null; }
# net EXPR: a Python expression on the result's network (n), e.g.
# "[d['name'] for d in n['reached']]".
net() { jget $J "(lambda n: $1)(r.get('network'))" 2>/dev/null; }
refusal_of() { # refusal_of NAME_OR_ADDRESS: "reason detail" of its first refusal
    net "next(('%s %s' % (f['reason'], f.get('detail')) for f in (n or {}).get('refused') or [] if '''$1''' in (f.get('name'), f.get('address'))), 'none')"
}
# refused_fast URL WHAT: the probe's verdict is a refusal that came
# within 3 s, and nothing of the lab answered it.
refused_fast() {
    local v t
    v=$(verdict "$1")
    t=$(took "$1")
    like "$v" "refused" "$MODE: $2: refused ($1)"
    "$PYTHON3" -c "import sys; sys.exit(0 if float('$t') < 3 else 1)" 2>/dev/null
    ok $? "$MODE: $2: refused fast (${t}s)"
}

NEVER_ADDR=(
    "http://127.0.0.1/"                  # the run's (and the server's) loopback
    "http://127.0.0.1:8080/"
    "http://[::1]/"
    "http://2130706433/"                 # 127.0.0.1 as one decimal number
    "http://0177.0.0.1/"                 # 127.0.0.1 in octal
    "http://[::ffff:127.0.0.1]/"         # IPv4-mapped loopback
    "http://0.0.0.0/"
    "http://198.51.100.2/"               # the server's own address
    "http://[2001:db8::2]/"              # and its IPv6 one
    "http://10.0.0.1/"                   # RFC 1918 (a trap of the lab answers there)
    "http://100.64.0.1/"                 # CGNAT
    "http://169.254.169.254/latest/meta-data/" # the cloud's metadata address
    "http://[fd00::1]/"                  # unique-local
    "http://224.0.0.1/"                  # multicast
)
NEVER_NAME=(
    "http://loopback.lab.test/" "http://mapped.lab.test/" "http://rebind.lab.test/" "http://zero.lab.test/"
    "http://server.lab.test/" "http://private.lab.test/" "http://cgnat.lab.test/" "http://metadata.lab.test/"
    "http://ula.lab.test/" "http://multicast.lab.test/"
)
NEVER_REDIRECT=(
    "http://www.lab.test/redirect?to=http://127.0.0.1:8080/"
    "http://www.lab.test/redirect?to=http://10.0.0.1/"
    "http://www.lab.test/redirect?to=http://169.254.169.254/latest/meta-data/"
    "http://www.lab.test/redirect?to=http://[fd00::1]/"
)
TRAPS="10.0.0.1 100.64.0.1 169.254.169.254 fd00::1"
nothing_reached() { # nothing_reached WHAT: no trap of the lab, no listener of the server, was reached
    local a hit=""
    for a in $TRAPS; do netlab_reached "$a" && hit="$hit $a"; done
    netlab_tripped && hit="$hit the-server's-own($(head -c 200 "$NL_SRV_LOG" | tr '\n' ';'))"
    is "$hit" "" "$MODE: $1: no trap and no listener of the server was reached"
}

# (RMS_NET_MODES: the modes to run, for one at a time by hand)
for m in ${RMS_NET_MODES-$RMS_MODES}; do
    mode_enter $m || { skip "$m: $MODE_SKIP"; continue; }
    case $m in
    fallback-*)
        # The fallback has no namespace of its own: it refuses the
        # network clearly, or holds the same policy (then every check
        # below must hold as in the jail).
        lab_run fb http://www.lab.test/ "${NEVER_ADDR[@]}" "${NEVER_NAME[@]}" -- --set "egress_allow=$WIDE"
        if [ "$RC" != 0 ] || [ "$(jget $J 'r["status"]')" != ok ]; then
            like "$(jget $J 'r.get("error") or ""' 2>/dev/null)$(cat $J.err)" "network" \
                "$MODE: network on is refused, and the reason names the network"
            nothing_reached "refused"
            continue
        fi
        diag "$MODE: the fallback gives the network: its policy is checked as the jail's"
        ;;
    esac

    # --- allowed names
    lab_run allowed http://www.lab.test/ https://www.lab.test/ https://api.lab.test/ 'http://v6.lab.test/'
    is "$(jget $J 'r["status"]')" ok "$MODE: the probe ran ($(head -c 200 $J.err))"
    like "$(verdict http://www.lab.test/)" "ok 200 lab" "$MODE: an allowed name over HTTP"
    like "$(verdict http://www.lab.test/)" "www.lab.test" "$MODE: (the lab's host answered, by its name)"
    like "$(verdict https://www.lab.test/)" "ok 200 lab" "$MODE: over HTTPS, the lab's CA trusted"
    like "$(verdict https://api.lab.test/)" "ok 200 lab 203.0.113.11 api.lab.test" "$MODE: a name allowed on one port, on it"
    like "$(verdict http://v6.lab.test/)" "ok 200 lab 2001:db8:1::10" "$MODE: a name with only an IPv6 address"
    is "$(net "n['mode']")" on "$MODE: the result's network.mode is on"
    like "$(net "sorted({'%s:%s' % (d['name'], d['port']) for d in n['reached']})")" '"www.lab.test:80"' \
        "$MODE: network.reached names www.lab.test:80"
    like "$(net "sorted({'%s:%s' % (d['name'], d['port']) for d in n['reached']})")" '"www.lab.test:443"' \
        "$MODE: and www.lab.test:443"
    is "$(net "all(d['bytes_in'] > 0 and d['bytes_out'] > 0 and d['address'] for d in n['reached'])")" true \
        "$MODE: each destination reached has its address and bytes both ways"
    is "$(net "n['connections'] >= 4 and n['bytes_in'] >= sum(d['bytes_in'] for d in n['reached'])")" \
        true "$MODE: the totals hold the destinations"
    is "$(net "n['limit']")" null "$MODE: no limit stopped the network"

    # --- not allowed
    lab_run denied http://other.example/ http://203.0.113.20/ http://api.lab.test/ 'http://[2001:db8:1::20]/'
    refused_fast http://other.example/ "a name not allowed"
    like "$(verdict http://other.example/)" "gaierror" "$MODE: a name not allowed is an unknown name to the script"
    like "$(refusal_of other.example)" "name_not_allowed" "$MODE: the record: other.example, name_not_allowed"
    refused_fast http://203.0.113.20/ "an address not allowed"
    like "$(verdict http://203.0.113.20/)" "ConnectionResetError" "$MODE: an address not allowed is a connection reset to the script"
    like "$(refusal_of 203.0.113.20)" "not_allowed" "$MODE: the record: 203.0.113.20, not_allowed"
    refused_fast http://api.lab.test/ "an allowed name on a port not allowed"
    refused_fast 'http://[2001:db8:1::20]/' "an IPv6 address not allowed"
    netlab_reached 203.0.113.20 || netlab_reached 2001:db8:1::20
    ok $((!$?)) "$MODE: other.example's host saw nothing"

    # --- never reachable, whatever the allow-list
    LAB_ALLOW=$WIDE lab_run never "${NEVER_ADDR[@]}" "${NEVER_NAME[@]}" "${NEVER_REDIRECT[@]}" http://www.lab.test/
    like "$(verdict http://www.lab.test/)" "ok 200" "$MODE: (with the wide allow-list an allowed host still answers)"
    for u in "${NEVER_ADDR[@]}"; do refused_fast "$u" "never reachable by address"; done
    for u in "${NEVER_NAME[@]}"; do refused_fast "$u" "never reachable by name"; done
    for u in "${NEVER_REDIRECT[@]}"; do refused_fast "$u" "never reachable through a redirect"; done
    like "$(refusal_of 127.0.0.1)" "never_reachable" "$MODE: the record: 127.0.0.1 never_reachable"
    like "$(refusal_of 169.254.169.254)" "never_reachable" "$MODE: the record: the metadata address never_reachable"
    like "$(refusal_of 10.0.0.1)" "never_reachable" "$MODE: the record: 10.0.0.1 never_reachable"
    nothing_reached "never reachable"

    # --- the server's own FastCGI port and nginx, on its loopback
    if [ $m = jail-root ]; then
        FPORT=$((20000 + $$ % 20000))
        ip netns exec "$NL_SRV" "$RUNMYSCRIPT" serve --listen 127.0.0.1:$FPORT --workers 1 >$T/serve.log 2>&1 &
        SERVE_PID=$!
        NGX=$(command -v nginx || echo /usr/sbin/nginx)
        if [ -x "$NGX" ]; then
            mkdir -p $T/ngx/logs $T/ngx/tmp
            printf 'daemon off; pid %s/ngx/nginx.pid; error_log %s/ngx/logs/error.log;\nevents {}\nhttp { access_log %s/ngx/logs/access.log; client_body_temp_path %s/ngx/tmp; proxy_temp_path %s/ngx/tmp; fastcgi_temp_path %s/ngx/tmp; uwsgi_temp_path %s/ngx/tmp; scgi_temp_path %s/ngx/tmp;\n server { listen 127.0.0.1:%s; listen [::1]:%s; listen 198.51.100.2:%s; location / { return 200 "nginx\\n"; } } }\n' \
                $T $T $T $T $T $T $T $T $((FPORT + 1)) $((FPORT + 1)) $((FPORT + 1)) >$T/ngx/nginx.conf
            ip netns exec "$NL_SRV" "$NGX" -p $T/ngx -c $T/ngx/nginx.conf >$T/ngx/out 2>&1 &
            NGX_PID=$!
        fi
        # Both answer in the server's namespace: what the run is refused
        # is there.
        listening() { netlab_exec "$PYTHON3" -c "import socket,sys; socket.create_connection(('127.0.0.1', int(sys.argv[1])), 1)" "$1" 2>/dev/null; }
        wait_until listening $FPORT
        ok $? "$MODE: runmyscript serve listens on the server's 127.0.0.1:$FPORT"
        if [ -n "${NGX_PID:-}" ]; then
            wait_until listening $((FPORT + 1))
            ok $? "$MODE: nginx listens on the server's 127.0.0.1:$((FPORT + 1))"
        fi
        LAB_ALLOW=$WIDE lab_run own "http://127.0.0.1:$FPORT/" "http://127.0.0.1:$((FPORT + 1))/" \
            "http://[::1]:$((FPORT + 1))/" "http://198.51.100.2:$((FPORT + 1))/"
        refused_fast "http://127.0.0.1:$FPORT/" "the server's FastCGI port"
        refused_fast "http://127.0.0.1:$((FPORT + 1))/" "nginx on the server's loopback"
        refused_fast "http://[::1]:$((FPORT + 1))/" "nginx on the server's IPv6 loopback"
        refused_fast "http://198.51.100.2:$((FPORT + 1))/" "nginx on the server's own address"
        [ -s $T/ngx/logs/access.log ] && r=1 || r=0
        ok $r "$MODE: nginx logged no request"
        kill $SERVE_PID ${NGX_PID:-} 2>/dev/null
        wait $SERVE_PID ${NGX_PID:-} 2>/dev/null
    fi

    # --- limits
    lab_run conns http://www.lab.test/ http://www.lab.test/ http://www.lab.test/ http://www.lab.test/ \
        http://www.lab.test/ -- --set net_connections=3
    is "$(jget $J 'r["status"]')" ok "$MODE: net_connections: the status is the script's own"
    is "$(jget $J 'r["limit"]')" net_connections "$MODE: net_connections: limit says so"
    is "$(net "n['limit']")" net_connections "$MODE: net_connections: network.limit says so"
    is "$(net "n['connections']")" 3 "$MODE: net_connections: three connections made"
    like "$(net "[f['reason'] for f in n['refused']]")" '"limit"' "$MODE: net_connections: the one past it refused as limit"
    lab_run bytes http://www.lab.test/big/4194304 -- --set net_bytes=256k
    like "$(verdict http://www.lab.test/big/4194304)" "refused" "$MODE: net_bytes: the download is cut"
    is "$(jget $J 'r["limit"]')" net_bytes "$MODE: net_bytes: limit says so"
    is "$(net "n['limit']")" net_bytes "$MODE: net_bytes: network.limit says so"
    is "$(net "n['bytes_in'] < 1048576")" true "$MODE: net_bytes: well under the 4 MiB asked for came in"
    lab_run big http://www.lab.test/big/8388608
    is "$(verdict http://www.lab.test/big/8388608)" "ok 200 8388608 bytes" "$MODE: 8 MiB within the limits"
    is "$(net "n['bytes_in'] >= 8388608")" true "$MODE: the record counts them"

    # --- the call's narrowing
    lab_run narrow http://www.lab.test/ https://api.lab.test/ -- --network "api.lab.test:443"
    like "$(verdict https://api.lab.test/)" "ok 200" "$MODE: --network api.lab.test:443: it is reached"
    refused_fast http://www.lab.test/ "--network api.lab.test:443: what it leaves out"
    lab_run widen http://other.example/ http://203.0.113.20/ -- --network "other.example,203.0.113.0/24"
    refused_fast http://other.example/ "--network cannot widen to a name the server does not allow"
    refused_fast http://203.0.113.20/ "--network cannot widen to a range the server does not allow"
    LAB_ALLOW=$WIDE lab_run widen2 http://10.0.0.1/ http://127.0.0.1:8080/ -- --network "10.0.0.0/8,127.0.0.0/8"
    refused_fast http://10.0.0.1/ "--network cannot open a private range"
    refused_fast http://127.0.0.1:8080/ "--network cannot open the loopback"
    lab_run off http://www.lab.test/ -- --network off
    like "$(verdict http://www.lab.test/)" "refused" "$MODE: --network off: no network"
    is "$(net "n")" null "$MODE: --network off: the result's network is null"
    lab_run bad http://www.lab.test/ -- --network "www.lab.test:notaport"
    is "$RC" 65 "$MODE: a bad --network: exit 65 (bad script, input or requirement), nothing run"
    like "$(cat $J.err)" "network" "$MODE: a bad --network: the reason names it"
    netlab_exec "${MODE_RUNAS[@]}" env -u RUNMYSCRIPT_CONFIG RUNMYSCRIPT_STATE_DIR="$MODE_STATE" \
        RUNMYSCRIPT_ISOLATION=$MODE_ISOLATION RUNMYSCRIPT_REQUIRE_ISOLATION=off \
        "$RUNMYSCRIPT" run $T/probe.py --input-text '[]' --network www.lab.test --json >$T/$m-offsrv.json 2>$T/$m-offsrv.err
    is "$?" 65 "$MODE: --network where the server gives none (script_network off): refused"
    like "$(cat $T/$m-offsrv.err)" "script_network" "$MODE: and the reason says the server's script_network is off"

    # --- nothing of the runs is left in the server's namespace
    left=$(for p in $(netlab_pids_srv); do [ "$(cat /proc/$p/comm 2>/dev/null)" = python3 ] && grep -q netlab_http /proc/$p/cmdline 2>/dev/null || echo "$p:$(cat /proc/$p/comm 2>/dev/null)"; done)
    is "$left" "" "$MODE: no process of the runs is left in the server's namespace"
done

# --- a kernel's cell and a warm run, in the jail as root
if mode_enter jail-root; then
    . "$top_srcdir/tests/lib/warm.sh"
    export RUNMYSCRIPT_STATE_DIR=$MODE_STATE
    export RUNMYSCRIPT_WARM_WAIT=60s
    RUNAS=(ip netns exec "$NL_SRV" env RUNMYSCRIPT_SCRIPT_NETWORK=on "RUNMYSCRIPT_EGRESS_ALLOW=$WIDE")
    if warm_serve; then
        trap 'warm_stop; netlab_down; cleanup_tmp' EXIT
        export RMS_TEST_SERVER=$WARM_SERVE_PID
        # A warm run: the second of its environment.
        for i in 1 2; do
            LAB_ALLOW=$WIDE lab_run warm$i http://www.lab.test/ http://127.0.0.1:8080/ http://metadata.lab.test/ \
                "http://www.lab.test/redirect?to=http://10.0.0.1/"
        done
        is "$(jget $J 'r["start"]')" warm "warm: the run started warm (networked spares)"
        like "$(verdict http://www.lab.test/)" "ok 200 lab" "warm: an allowed name"
        refused_fast http://127.0.0.1:8080/ "warm: the loopback"
        refused_fast http://metadata.lab.test/ "warm: the metadata address by name"
        refused_fast "http://www.lab.test/redirect?to=http://10.0.0.1/" "warm: a private address through a redirect"
        is "$(net "n['mode']")" on "warm: the record is there"
        # A spare made after a networked run holds its network ready (its
        # rules and sockets, not its route): a run without network that
        # takes one reaches nothing, by name or by address, at once.
        LAB_ALLOW=$WIDE lab_run warmoff http://www.lab.test/ http://203.0.113.10/ "http://[2001:db8:1::10]/" \
            -- --network off
        is "$(jget $J 'r["start"]')" warm "warm, network off after networked runs: the run started warm"
        is "$(net "(n or {}).get('mode', 'off')")" off "warm, network off: the record says off (or there is none)"
        refused_fast http://www.lab.test/ "warm, network off: an allowed name"
        refused_fast http://203.0.113.10/ "warm, network off: an allowed address"
        refused_fast "http://[2001:db8:1::10]/" "warm, network off: an allowed IPv6 address"
        like "$(verdict http://203.0.113.10/)" "unreachable" "warm, network off: the address is unreachable (no route)"
        # A cell of a kernel.
        cellcode="$(netlab_py_ca)
$(sed -n '/^import json/,$p' $T/probe.py | sed 's|json.load(open(os.environ\["SCRIPT_INPUT"\]))|URLS|')"
        mkdir -p $T/cellws
        for pass in first second; do
            J=$T/cell-$pass.json
            V=$T/cell-$pass.v
            netlab_exec env RUNMYSCRIPT_STATE_DIR=$MODE_STATE RUNMYSCRIPT_SCRIPT_NETWORK=on "RUNMYSCRIPT_EGRESS_ALLOW=$WIDE" \
                RMS_TEST_SERVER=$RMS_TEST_SERVER "$top_builddir/tests/sandbox/cell" cell $T/cellws \
                "URLS = ['http://www.lab.test/', 'http://127.0.0.1:8080/', 'http://private.lab.test/', 'http://[::ffff:169.254.169.254]/', 'http://www.lab.test/redirect?to=http://100.64.0.1/']
$cellcode" >$J 2>$J.err
            jget $J 'next((l[9:] for l in r["logs"].splitlines() if l.startswith("NETPROBE ")), "{}")' >$V 2>/dev/null
        done
        MODE="cell"
        is "$(jget $J 'r["kernel"]["cell"]')" 2 "cell: the second cell of one kernel"
        like "$(verdict http://www.lab.test/)" "ok 200 lab" "cell: an allowed name"
        refused_fast http://127.0.0.1:8080/ "the loopback"
        refused_fast http://private.lab.test/ "a private address by name"
        refused_fast 'http://[::ffff:169.254.169.254]/' "the metadata address, IPv4-mapped"
        refused_fast 'http://www.lab.test/redirect?to=http://100.64.0.1/' "CGNAT through a redirect"
        is "$(net "n['mode']")" on "cell: the record is there"
        # The record is the cell's own traffic, not its kernel's since
        # its start: the second cell's names what it reached and refused,
        # and a cell that uses no network has an empty one.
        is "$(net "sorted({d['name'] for d in n['reached']})")" '["www.lab.test"]' "cell: its record names what it reached"
        like "$(refusal_of private.lab.test)" "never_reachable" "cell: its record: private.lab.test refused, never_reachable"
        is "$(net "n['connections'] == sum(d['connections'] for d in n['reached'])")" true \
            "cell: its connections are those of its destinations"
        first=$(jget $T/cell-first.json 'r["network"]["connections"]' 2>/dev/null)
        is "$(net "n['connections']")" "$first" "cell: the second cell counts its own connections, as many as the first's"
        J=$T/cell-quiet.json
        netlab_exec env RUNMYSCRIPT_STATE_DIR=$MODE_STATE RUNMYSCRIPT_SCRIPT_NETWORK=on "RUNMYSCRIPT_EGRESS_ALLOW=$WIDE" \
            RMS_TEST_SERVER=$RMS_TEST_SERVER "$top_builddir/tests/sandbox/cell" cell $T/cellws "print('quiet')" >$J 2>$J.err
        is "$(jget $J 'r["kernel"]["cell"]')" 3 "cell: a third cell of the kernel"
        is "$(net "[n['mode'], n['connections'], n['bytes_in'], len(n['reached']), len(n['refused'])]")" '["on", 0, 0, 0, 0]' \
            "cell: a cell that used no network has a record of its own, with nothing in it"
        # A kernel's network is its first cell's: a cell that asks for
        # another is refused until a reset; after it the narrower one holds.
        kcell() { # kcell NAME NETWORK URLS: a cell with --network NETWORK
            J=$T/cell-$1.json
            V=$T/cell-$1.v
            RC=0
            netlab_exec env RUNMYSCRIPT_STATE_DIR=$MODE_STATE RUNMYSCRIPT_SCRIPT_NETWORK=on "RUNMYSCRIPT_EGRESS_ALLOW=$WIDE" \
                RMS_TEST_SERVER=$RMS_TEST_SERVER "$top_builddir/tests/sandbox/cell" cell --network "$2" $T/cellws \
                "URLS = $3
$cellcode" >$J 2>$J.err || RC=$?
            jget $J 'next((l[9:] for l in r["logs"].splitlines() if l.startswith("NETPROBE ")), "{}")' >$V 2>/dev/null
        }
        kcell other api.lab.test:443 "['https://api.lab.test/']"
        is "$(verdict https://api.lab.test/)" none "cell: a cell with another network than its kernel's does not run"
        like "$(jget $J 'r["error"]' 2>/dev/null)" "network" "cell: and the reason names the network"
        netlab_exec env RUNMYSCRIPT_STATE_DIR=$MODE_STATE RMS_TEST_SERVER=$RMS_TEST_SERVER \
            "$top_builddir/tests/sandbox/cell" reset $T/cellws >/dev/null 2>&1
        kcell narrow api.lab.test:443 "['https://api.lab.test/', 'http://www.lab.test/']"
        like "$(verdict https://api.lab.test/)" "ok 200 lab 203.0.113.11" "cell: after a reset, the narrower network: api.lab.test reached"
        refused_fast http://www.lab.test/ "after a reset, the narrower network: what it leaves out"
        netlab_exec env RUNMYSCRIPT_STATE_DIR=$MODE_STATE RMS_TEST_SERVER=$RMS_TEST_SERVER \
            "$top_builddir/tests/sandbox/cell" end $T/cellws >/dev/null 2>&1
        MODE=jail-root
        nothing_reached "warm and cell"
        warm_stop
    else
        skip "warm runs and cells: the server did not start ($(tail -2 $T/warm-serve.log 2>/dev/null))"
    fi
    export RUNMYSCRIPT_STATE_DIR=$TEST_TMP/state
else
    skip "warm runs and cells: $MODE_SKIP"
fi

# --- warm runs unprivileged: the spares hold their network ready there too
if mode_enter jail-user; then
    export RUNMYSCRIPT_STATE_DIR=$MODE_STATE
    RUNAS=(ip netns exec "$NL_SRV" "${MODE_RUNAS[@]}" env RUNMYSCRIPT_SCRIPT_NETWORK=on "RUNMYSCRIPT_EGRESS_ALLOW=$WIDE")
    if warm_serve; then
        trap 'warm_stop; netlab_down; cleanup_tmp' EXIT
        for i in 1 2 3; do
            LAB_ALLOW=$WIDE lab_run uwarm$i http://www.lab.test/ http://127.0.0.1:8080/
        done
        is "$(jget $J 'r["start"]')" warm "jail-user: warm: the run started warm (networked spares)"
        like "$(verdict http://www.lab.test/)" "ok 200 lab" "jail-user: warm: an allowed name"
        refused_fast http://127.0.0.1:8080/ "warm: the loopback"
        LAB_ALLOW=$WIDE lab_run uwarmoff http://203.0.113.10/ -- --network off
        is "$(jget $J 'r["start"]')" warm "jail-user: warm, network off after networked runs: the run started warm"
        refused_fast http://203.0.113.10/ "warm, network off: an allowed address"
        nothing_reached "warm unprivileged"
        warm_stop
    else
        skip "warm runs unprivileged: the server did not start ($(tail -2 $T/warm-serve.log 2>/dev/null))"
    fi
    export RUNMYSCRIPT_STATE_DIR=$TEST_TMP/state
else
    skip "warm runs unprivileged: $MODE_SKIP"
fi

# --- the installer: its network reaches the index's host and port alone
if mode_enter jail-root; then
    IPORT=$((20000 + ($$ + 7) % 20000))
    ip netns exec "$NL_SRV" "$PYTHON3" "$top_srcdir/tests/lib/netlab_http.py" "$NL_DIR/host.pem" "$NL_DIR/host.key" \
        $T/index.log $T/index.ready $IPORT >$T/index.out 2>&1 &
    INDEX_PID=$!
    wait_until test -e $T/index.ready
    printf 'import labpkg\n' >$T/needs.py
    for v in 3.0 2.0; do
        netlab_exec env -u RUNMYSCRIPT_FIND_LINKS RUNMYSCRIPT_STATE_DIR=$MODE_STATE RUNMYSCRIPT_ISOLATION=namespaces \
            "$RUNMYSCRIPT" run $T/needs.py --json --no-auto-deps --with labpkg==$v --set script_network=on \
            --set "egress_allow=$WIDE,203.0.113.0/24" --set installer=pip --set index_url=http://127.0.0.1:$IPORT/simple/ \
            --set extra_index_url=none --set find_links=none >$T/install-$v.json 2>$T/install-$v.err
        is "$(jget $T/install-$v.json 'r["status"]')" install_failed "installer: labpkg==$v: install_failed"
    done
    like "$(jget $T/install-3.0.json 'r["install_log"]')" "host='10.0.0.1'" "installer: it tried the file on 10.0.0.1, and was refused"
    like "$(jget $T/install-2.0.json 'r["install_log"]')" "host='203.0.113.20'" "installer: it tried the file on 203.0.113.20, and was refused"
    grep -q " /simple/labpkg/ " $T/index.log
    ok $? "installer: it reached the index on the server's loopback (its index_url)"
    netlab_reached 10.0.0.1 && r=1 || r=0
    ok $r "installer: a file of the index's on a private address: never fetched"
    netlab_reached 203.0.113.20 && r=1 || r=0
    ok $r "installer: a file of the index's on a host that is no index: never fetched, whatever egress_allow says"
    # The fallback has no namespace to hold the installer's network in: a
    # remote source is refused there, with the reason, and is not reached
    # (through the host's network it would be: the index is on the
    # server's loopback); local sources still install.
    if mode_enter fallback-root; then
        cp $T/index.log $T/index-before.log
        netlab_exec env -u RUNMYSCRIPT_FIND_LINKS RUNMYSCRIPT_STATE_DIR=$MODE_STATE RUNMYSCRIPT_ISOLATION=rlimits \
            RUNMYSCRIPT_REQUIRE_ISOLATION=off "$RUNMYSCRIPT" run $T/needs.py --json --no-auto-deps --with labpkg==1.0 \
            --set installer=pip --set index_url=http://127.0.0.1:$IPORT/simple/ --set extra_index_url=none \
            --set find_links=none >$T/install-fb.json 2>$T/install-fb.err
        st=$(jget $T/install-fb.json 'r["status"]' 2>/dev/null)
        [ -n "$st" ] && [ "$st" != ok ]
        ok $? "fallback installer: a remote index: the run does not run (status $st)"
        like "$(jget $T/install-fb.json '(r.get("error") or "") + (r.get("install_log") or "")')" \
            "rlimits fallback, which has no network of its own" "fallback installer: and the reason names the network"
        cmp -s $T/index.log $T/index-before.log
        ok $? "fallback installer: the index (on the server's loopback) was not reached"
        like "$(jget $T/install-fb.json '(r.get("error") or "") + (r.get("install_log") or "")')" \
            "fallback_installer_network = on" "fallback installer: and names the key that would give it the host's network"
        # The operator's explicit choice: the host's network, unfiltered.
        netlab_exec env -u RUNMYSCRIPT_FIND_LINKS RUNMYSCRIPT_STATE_DIR=$MODE_STATE RUNMYSCRIPT_ISOLATION=rlimits \
            RUNMYSCRIPT_REQUIRE_ISOLATION=off "$RUNMYSCRIPT" run $T/needs.py --json --no-auto-deps --with labpkg==1.0 \
            --set installer=pip --set index_url=http://127.0.0.1:$IPORT/simple/ --set extra_index_url=none \
            --set find_links=none --set fallback_installer_network=on >$T/install-fb-host.json 2>$T/install-fb-host.err
        ! cmp -s $T/index.log $T/index-before.log
        ok $? "fallback installer, fallback_installer_network = on: it reaches the index through the host's network ($(jget $T/install-fb-host.json 'r.get("status")' 2>/dev/null))"
        if ls "${WHEELHOUSE:-/nonexistent}"/rms_alpha-*.whl >/dev/null 2>&1; then
            printf 'import rms_alpha\nprint("alpha", rms_alpha.__name__)\n' >$T/needs-local.py
            netlab_exec env -u RUNMYSCRIPT_FIND_LINKS RUNMYSCRIPT_STATE_DIR=$MODE_STATE RUNMYSCRIPT_ISOLATION=rlimits \
                RUNMYSCRIPT_REQUIRE_ISOLATION=off "$RUNMYSCRIPT" run $T/needs-local.py --json --no-auto-deps \
                --with rms_alpha --set installer=pip --set index_url=none --set extra_index_url=none \
                --set "find_links=$WHEELHOUSE" >$T/install-fb-local.json 2>$T/install-fb-local.err
            is "$(jget $T/install-fb-local.json 'r["status"]')" ok \
                "fallback installer: local sources install ($(jget $T/install-fb-local.json 'r.get("error")' 2>/dev/null))"
            like "$(jget $T/install-fb-local.json 'r["logs"]')" "alpha rms_alpha" "fallback installer: the script ran with it"
        else
            skip "fallback installer, local sources: the test wheelhouse is missing (WHEELHOUSE)"
        fi
    else
        skip "fallback installer: $MODE_SKIP"
    fi
    kill $INDEX_PID 2>/dev/null
    wait $INDEX_PID 2>/dev/null
fi

# --- the doors: MCP over stdio and /api/run over CGI, in the server's namespace
if mode_enter jail-root; then
    cat >$T/mcp.py <<'PY'
import json, os, subprocess, sys
p = subprocess.Popen([os.environ["RUNMYSCRIPT"], "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
def call(msg):
    p.stdin.write(json.dumps(msg) + "\n"); p.stdin.flush()
    if "id" not in msg: return None
    while True:
        m = json.loads(p.stdout.readline())
        if m.get("id") == msg["id"]: return m
call({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
call({"jsonrpc": "2.0", "method": "notifications/initialized"})
code = open(sys.argv[1]).read()
out = {}
for i, (tool, args) in enumerate([
        ("run_code", {"code": code, "input": '["http://www.lab.test/", "http://10.0.0.1/"]'}),
        ("run_code", {"code": code, "input": '["http://www.lab.test/", "https://api.lab.test/"]', "network": "api.lab.test:443"}),
        ("run_my_script", {"code": code, "user_input": '["http://www.lab.test/"]', "network": "off"}),
        ("run_code", {"code": code, "input": "[]", "network": "www.lab.test:x"}),
        ("run_code", {"code": code, "input": "[]", "network": 7})]):
    out[str(i)] = call({"jsonrpc": "2.0", "id": 10 + i, "method": "tools/call", "params": {"name": tool, "arguments": args}})
p.stdin.close(); p.wait()
print(json.dumps(out))
PY
    netlab_exec env RUNMYSCRIPT_STATE_DIR=$MODE_STATE RUNMYSCRIPT_ISOLATION=namespaces RUNMYSCRIPT_SCRIPT_NETWORK=on \
        "RUNMYSCRIPT_EGRESS_ALLOW=$ALLOW" RUNMYSCRIPT="$RUNMYSCRIPT" "$PYTHON3" $T/mcp.py $T/probe.py >$T/mcp.json 2>$T/mcp.err
    mcp() { jget $T/mcp.json "$1" 2>/dev/null; }
    like "$(mcp "r['0']['result']['structuredContent']['logs']")" '"http://www.lab.test/": ["ok 200 lab' \
        "MCP run_code: an allowed name reached ($(head -c 200 $T/mcp.err))"
    is "$(mcp "sorted({d['name'] for d in r['0']['result']['structuredContent']['network']['reached']})")" '["www.lab.test"]' \
        "MCP: structuredContent.network.reached"
    like "$(mcp "[f['reason'] for f in r['0']['result']['structuredContent']['network']['refused']]")" "never_reachable" \
        "MCP: structuredContent.network.refused"
    like "$(mcp "r['0']['result']['content'][0]['text']")" "network: " "MCP: the text result has the network's line"
    like "$(mcp "r['0']['result']['content'][0]['text']")" "reached www.lab.test:80" "MCP: which names what was reached"
    like "$(mcp "r['0']['result']['content'][0]['text']")" "refused 10.0.0.1:80 (never_reachable: private)" \
        "MCP: and what was refused, with why"
    like "$(mcp "r['1']['result']['structuredContent']['logs']")" '"https://api.lab.test/": ["ok 200' \
        "MCP run_code network=api.lab.test:443: api.lab.test reached"
    like "$(mcp "r['1']['result']['structuredContent']['logs']")" '"http://www.lab.test/": ["refused' \
        "MCP run_code network=api.lab.test:443: www.lab.test refused"
    is "$(mcp "r['2']['result']['structuredContent']['network']")" null "MCP run_my_script network=off: no network"
    is "$(mcp "r['3']['result']['isError']")" true "MCP: a bad network is an isError result"
    like "$(mcp "r['3']['result']['content'][0]['text']")" "network" "MCP: which names the network"
    like "$(mcp "r['4']['result']['content'][0]['text']")" "network must be" "MCP: a network that is no string is refused"

    cgi() { # cgi BODYFILE [CONTENT_TYPE]: POST /api/run as CGI; the answer in $T/cgi.out
        netlab_exec env -i PATH=/usr/bin:/bin RUNMYSCRIPT_STATE_DIR="$MODE_STATE" \
            RUNMYSCRIPT_ISOLATION=namespaces RUNMYSCRIPT_SCRIPT_NETWORK=on "RUNMYSCRIPT_EGRESS_ALLOW=$ALLOW" \
            GATEWAY_INTERFACE=CGI/1.1 REQUEST_METHOD=POST REQUEST_URI=/api/run \
            "CONTENT_TYPE=${2:-application/json}" CONTENT_LENGTH=$(wc -c <"$1") HTTP_HOST=localhost \
            HTTP_ACCEPT=application/json "$RUNMYSCRIPT" <"$1" >$T/cgi.out 2>$T/cgi.err
        sed '1,/^\r\?$/d' $T/cgi.out >$T/cgi.json
    }
    "$PYTHON3" -c 'import json,sys; print(json.dumps({"code": open(sys.argv[1]).read(), "input": "[\"http://www.lab.test/\", \"https://api.lab.test/\"]", "network": sys.argv[2]}))' $T/probe.py "api.lab.test:443" >$T/body.json
    cgi $T/body.json
    like "$(head -1 $T/cgi.out)" "200" "/api/run with network: 200"
    is "$(jget $T/cgi.json "sorted({d['name'] for d in r['network']['reached']})")" '["api.lab.test"]' \
        "/api/run: network narrowed to api.lab.test, the record says so"
    like "$(jget $T/cgi.json "r['logs']")" '"http://www.lab.test/": ["refused' "/api/run: www.lab.test refused"
    # The page's form: multipart, the field network.
    "$PYTHON3" - $T/probe.py >$T/body.form <<'PY'
import sys
b = "rmsnetlab"
parts = [("code", open(sys.argv[1]).read()), ("input", '["http://www.lab.test/"]'), ("network", "off")]
sys.stdout.write("".join('--%s\r\nContent-Disposition: form-data; name="%s"\r\n\r\n%s\r\n' % (b, k, v) for k, v in parts) + "--%s--\r\n" % b)
PY
    cgi $T/body.form "multipart/form-data; boundary=rmsnetlab"
    like "$(head -1 $T/cgi.out)" "200" "/api/run, a form with network=off: 200"
    is "$(jget $T/cgi.json "r['network']")" null "/api/run, a form with network=off: no network"
    like "$(jget $T/cgi.json "r['logs']")" '"http://www.lab.test/": ["refused' "/api/run, a form with network=off: www.lab.test unreachable"
    "$PYTHON3" -c 'import json,sys; print(json.dumps({"code": "print(1)", "network": "bad rule!"}))' >$T/body.json
    cgi $T/body.json
    like "$(head -1 $T/cgi.out)" "400" "/api/run with a bad network: 400"
    like "$(cat $T/cgi.out)" "network" "/api/run: the reason names the network"
fi

# --- nothing left
nothing_reached "the whole suite"
netlab_down
is "$(netlab_leaks)" "" "after the lab: no namespace, interface or process of it is left"
left=$(ip netns list 2>/dev/null | grep -c "^rms" || true)
diag "network namespaces named rms* on the machine after the suite: $left (other tests may hold some)"
done_testing
