#!/bin/bash
# Installing from a PEP 503 simple index over HTTP: the wheelhouse served by
# nginx on a free port of 127.0.0.1 (nginx started here, stopped by its pid).
# Runs in the jail where the host has it, in the rlimits fallback elsewhere.
RMS_JAIL_OPTIONAL=1
. "${top_srcdir:?run me through make check, or set top_srcdir}/tests/lib/tap.sh" || exit 99
T=$TEST_TMP
[ -f "$WHEELHOUSE/.stamp" ] || skip_all "no wheelhouse (make check builds it)"
NGINX=$(command -v nginx || ls /usr/sbin/nginx 2>/dev/null)
[ -n "$NGINX" ] || skip_all "nginx is not installed (apt-get install nginx)"

PORT=$("$PYTHON3" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
P=$T/nginx
mkdir -p $P/tmp
user=""
[ "$(id -u)" = 0 ] && user="user root;"
cat >$P/nginx.conf <<EOF
$user
daemon off;
worker_processes 1;
pid $P/nginx.pid;
error_log $P/error.log;
events { worker_connections 64; }
http {
    access_log $P/access.log;
    client_body_temp_path $P/tmp/body;
    proxy_temp_path $P/tmp/proxy;
    fastcgi_temp_path $P/tmp/fastcgi;
    uwsgi_temp_path $P/tmp/uwsgi;
    scgi_temp_path $P/tmp/scgi;
    types { text/html html; application/octet-stream whl; }
    server {
        listen 127.0.0.1:$PORT;
        root $WHEELHOUSE;
        index index.html;
    }
}
EOF
"$NGINX" -p $P -c $P/nginx.conf -e $P/error.log &
NGINX_PID=$!
stop_nginx() { kill "$NGINX_PID" 2>/dev/null; wait "$NGINX_PID" 2>/dev/null; cleanup_tmp; }
trap stop_nginx EXIT
up() { "$PYTHON3" -c "import urllib.request as u; u.urlopen('http://127.0.0.1:$PORT/simple/', timeout=2)" 2>/dev/null; }
if ! wait_until up; then
    diag "$(cat $P/error.log)"
    echo "Bail out! nginx did not start"
    exit 1
fi
ok 0 "nginx serves the wheelhouse as a PEP 503 index on 127.0.0.1:$PORT"
INDEX=(--set "index_url=http://127.0.0.1:$PORT/simple/" --set find_links=none)

printf 'import rms_beta\nprint(rms_beta.combine("web"))\n' >$T/beta.py
run_json $T/b.json $T/beta.py "${INDEX[@]}"
is "$RC" 0 "import rms_beta installs from the index"
is "$(jget $T/b.json 'r["requirements"]')" '["rms-alpha==1.0", "rms-beta==2.0"]' "with its dependency"
like "$(jget $T/b.json 'r["install_log"]')" "Looking in indexes: http://127.0.0.1:$PORT/simple/" \
    "the installer used the index, not find-links"
grep -q "GET /simple/rms-beta/ " $P/access.log
ok $? "nginx served the project page"
grep -q "GET /rms_beta-2.0-py3-none-any.whl " $P/access.log
ok $? "and the wheel"

S=$top_srcdir/tests/fixtures
if ls "$WHEELHOUSE"/pillow-*.whl >/dev/null 2>&1; then
    run_json $T/seed.json "$S/seeds/run_my_script_test.py" --input "$S/seeds/run_my_script_test_input.json" \
        --out $T/out "${INDEX[@]}"
    is "$RC" 0 "the seed script, pillow from the index"
    is "$(jget $T/seed.json 'r["env_cache"]')" built "a new environment (index settings are part of the key)"
    id=$(jget $T/seed.json 'r["run_id"]')
    "$PYTHON3" - "$S/seeds/run_my_script_test_input.json" $T/orig.png <<'PY'
import base64, json, sys
open(sys.argv[2], "wb").write(base64.b64decode(json.load(open(sys.argv[1]))["img"]))
PY
    "$PYTHON3" "$top_srcdir/tests/lib/check_png.py" mirror $T/orig.png "$T/out/$id/flipped.png"
    ok $? "flipped.png is the mirror image"
else
    skip "no pillow wheel: $(cat "$WHEELHOUSE/.no-pillow" 2>/dev/null)"
fi

run_json $T/f.json $T/beta.py --no-auto-deps --with rms_broken "${INDEX[@]}"
is "$(jget $T/f.json 'r["status"]')" install_failed "a failing install through the index"
is "$(jget $T/f.json 'r["failed_requirement"]')" rms-broken "names rms-broken"

kill "$NGINX_PID"
wait "$NGINX_PID" 2>/dev/null
! up
ok $? "nginx is stopped"
done_testing
