# nginx.sh: a real nginx on loopback for the end-to-end tests. Source it
# after tap.sh, write the server blocks into a file, then
#   nginx_start SERVERS_FILE   (sets NGINX_PID; @PREFIX@ and @PORTn@ in the
#                               file are replaced, ports are free ones)
# nginx runs in the foreground of a background job with master_process off,
# so it is one process of this test's own, stopped by its pid on exit.
NGINX=${NGINX:-$(command -v nginx || echo /usr/sbin/nginx)}
NGINX_PID=

# free_ports N: prints N TCP ports free on 127.0.0.1 and ::1 right now.
free_ports() {
    "$PYTHON3" - "$1" <<'PY'
import socket, sys
socks, ports = [], []
while len(ports) < int(sys.argv[1]):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    try:
        s6 = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
        s6.bind(("::1", port))
        socks.append(s6)
    except OSError:
        pass
    socks.append(s)
    ports.append(port)
print(" ".join(map(str, ports)))
PY
}

nginx_stop() {
    if [ -n "$NGINX_PID" ]; then
        kill "$NGINX_PID" 2>/dev/null
        wait "$NGINX_PID" 2>/dev/null
        NGINX_PID=
    fi
}

# nginx_start SERVERS_FILE: starts nginx with the http{} servers in the file
# in NGINX_PREFIX (default $TEST_TMP/nginx); fills PORT1..PORT5. At exit it
# is stopped, then NGINX_ON_EXIT runs (default cleanup_tmp). Skips the whole test (with the reason)
# when there is no nginx; bails out when it is there and does not start.
nginx_start() {
    [ -x "$NGINX" ] || skip_all "nginx is not installed (quickstart installs it; apt-get install nginx)"
    NGINX_PREFIX=${NGINX_PREFIX:-$TEST_TMP/nginx}
    mkdir -p "$NGINX_PREFIX/tmp" "$NGINX_PREFIX/logs"
    local tries=0
    while :; do
        read -r PORT1 PORT2 PORT3 PORT4 PORT5 <<<"$(free_ports 5)"
        {
            cat <<EOF
daemon off;
master_process off;
worker_processes 1;
error_log $NGINX_PREFIX/logs/error.log warn;
pid $NGINX_PREFIX/nginx.pid;
events { worker_connections 256; }
http {
    access_log $NGINX_PREFIX/logs/access.log;
    client_body_temp_path $NGINX_PREFIX/tmp/body;
    proxy_temp_path $NGINX_PREFIX/tmp/proxy;
    fastcgi_temp_path $NGINX_PREFIX/tmp/fastcgi;
    uwsgi_temp_path $NGINX_PREFIX/tmp/uwsgi;
    scgi_temp_path $NGINX_PREFIX/tmp/scgi;
    default_type application/octet-stream;
    sendfile off;
EOF
            sed -e "s|@PREFIX@|$NGINX_PREFIX|g" -e "s|@PORT1@|$PORT1|g" -e "s|@PORT2@|$PORT2|g" \
                -e "s|@PORT3@|$PORT3|g" -e "s|@PORT4@|$PORT4|g" -e "s|@PORT5@|$PORT5|g" "$1"
            echo "}"
        } >"$NGINX_PREFIX/nginx.conf"
        "$NGINX" -p "$NGINX_PREFIX" -e "$NGINX_PREFIX/logs/error.log" -c "$NGINX_PREFIX/nginx.conf" \
            >"$NGINX_PREFIX/logs/stdout" 2>&1 &
        NGINX_PID=$!
        trap "nginx_stop; ${NGINX_ON_EXIT:-cleanup_tmp}" EXIT
        # Ready when it answers on its first port (or gone: a port was taken).
        local i
        for i in $(seq 1 100); do
            kill -0 "$NGINX_PID" 2>/dev/null || break
            if "$PYTHON3" -c "import socket,sys; socket.create_connection(('127.0.0.1', $PORT1), 1)" 2>/dev/null; then
                return 0
            fi
            sleep 0.1
        done
        nginx_stop
        tries=$((tries + 1))
        if [ $tries -ge 3 ]; then
            diag "$(cat "$NGINX_PREFIX/logs/error.log" "$NGINX_PREFIX/logs/stdout" 2>/dev/null | tail -5)"
            echo "Bail out! nginx did not start (three tries; see the diagnostics above)"
            exit 1
        fi
    done
}
