#!/bin/bash
# The single-site setup of doc/serving.md with the defaults: nginx/site.conf.in
# rendered, a system-like nginx (workers as www-data) with it, runmyscript
# serve as root with the jail and no configuration, and a run's file
# downloaded through nginx (as root the runs belong to per-run uids, which
# www-data cannot read: the default accel_redirect must not hand them to it).
. "$top_srcdir/tests/lib/tap.sh"
T=$TEST_TMP
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
[ "$(id -u)" = 0 ] || skip_all "the documented site runs runmyscript as root"
[ -x "$NGINX" ] || skip_all "nginx is not installed (./quickstart test installs it)"
id www-data >/dev/null 2>&1 || skip_all "no www-data user for nginx's workers"
PIDS=""
on_exit() {
    for p in $PIDS; do kill -TERM "$p" 2>/dev/null; done
    for p in $PIDS; do wait "$p" 2>/dev/null; done
    cleanup_tmp
}
trap on_exit EXIT
port=$("$PYTHON3" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir -p "$T/ngx" "$T/sock"
chmod 755 "$T/sock"
"$top_srcdir/nginx/render" "$top_srcdir/nginx/site.conf.in" "$T/ngx/site.conf" SERVER_NAME=localhost \
    "WWW=$top_srcdir/www" "FASTCGI=unix:$T/sock/fcgi.sock" "STATE=$RUNMYSCRIPT_STATE_DIR" MAX_BODY=96m
ok $? "site.conf.in renders"
cp "$top_srcdir/nginx/fastcgi-params.conf" "$T/ngx/runmyscript-fastcgi.conf"
# As the doc's /etc/nginx would hold it, but in the test's own directory
# and on a free port of loopback.
sed -i -e "s|listen 80;|listen 127.0.0.1:$port;|" -e "s|/etc/nginx/runmyscript-fastcgi.conf|$T/ngx/runmyscript-fastcgi.conf|" \
    "$T/ngx/site.conf"
cat >"$T/ngx/nginx.conf" <<NGX
user www-data;
pid $T/ngx/nginx.pid;
error_log $T/ngx/error.log warn;
events {}
http {
    include /etc/nginx/mime.types;
    access_log off;
    client_body_temp_path $T/ngx/body;
    fastcgi_temp_path $T/ngx/fastcgi;
    proxy_temp_path $T/ngx/proxy;
    uwsgi_temp_path $T/ngx/uwsgi;
    scgi_temp_path $T/ngx/scgi;
    include $T/ngx/site.conf;
}
NGX
"$RUNMYSCRIPT" serve --listen "unix:$T/sock/fcgi.sock" --workers 2 2>"$T/serve.log" &
PIDS="$PIDS $!"
"$NGINX" -p "$T/ngx" -c "$T/ngx/nginx.conf" -g 'daemon off;' 2>"$T/ngx/start.log" &
PIDS="$PIDS $!"
for _ in $(seq 100); do
    curl -sf -o /dev/null "http://localhost:$port/healthz" && break
    sleep 0.2
done
curl -sf -o /dev/null "http://localhost:$port/healthz"
ok $? "nginx and runmyscript serve answer" || { sed 's/^/# /' "$T/ngx/error.log" "$T/serve.log"; done_testing; exit 1; }
curl -s -H 'Content-Type: application/json' -o "$T/run.json" "http://localhost:$port/api/run" \
    --data '{"code": "import os\nopen(os.environ[\"SCRIPT_OUTPUT\"] + \"/out.txt\", \"w\").write(\"made by the run\\n\")"}'
is "$(jget "$T/run.json" 'r["status"]')" ok "a run through the site"
url=$(jget "$T/run.json" 'r["artifacts"][0]["url"]')
is "$(curl -s -w '%{http_code}' -o "$T/dl" "http://localhost:$port$url")" 200 "its file downloads through nginx"
is "$(cat "$T/dl")" "made by the run" "with the bytes the run wrote"
zip=$(jget "$T/run.json" 'r["zip_url"]')
is "$(curl -s -w '%{http_code}' -o "$T/dl.zip" "http://localhost:$port$zip")" 200 "and so does its zip"
done_testing
