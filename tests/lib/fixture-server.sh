# fixture-server.sh: the file server of the transfer tests (tests/cli/fetch.sh,
# tests/e2e/files.sh): a real nginx on free loopback ports (nginx.sh) serving
# fixture files, with a slow endpoint, a chunked one, a redirect chain, a
# redirect to another port, a 404 and WebDAV PUT. Source it after tap.sh and
# nginx.sh, then call fixture_server_start. It sets:
#   F            the files' root (data/small.bin 5000 B, data/big.bin 1 MiB,
#                data/pixel.png, data/table.csv, slow/big.bin 200 KiB and
#                slow/mid.bin 4 KiB at 2 KiB/s,
#                chunked/big.txt 1 MiB without Content-Length, many/f1..8.bin)
#   DAV          where PUTs to /put/... land (client_max_body_size 64k);
#                logs/put.log has "METHOD URI CONTENT-TYPE" of each
#   PORT1        those files, /r1../r6 (a chain of 1..6 redirects to
#                data/small.bin), /to-port2, /to-ftp, /to-file
#   PORT2        the same files on another port (logs/port2.log)
#   PORT3        free, for a test's own listener
#   PORT4        [::1] when has_ipv6 = 1
#   PORT5        https with a self-signed certificate when has_tls = 1
# NGINX_PREFIX may be set first (default $TEST_TMP/nginx); NGINX_ON_EXIT is
# what else runs at exit (default cleanup_tmp).
# sha FILE: the file's SHA-256 in hex.
sha() { sha256sum "$1" | cut -d' ' -f1; }

fixture_server_start() {
    local T=$TEST_TMP/fixture-server
    mkdir -p $T
    has_ipv6=0
    "$PYTHON3" -c 'import socket; s=socket.socket(socket.AF_INET6); s.bind(("::1", 0))' 2>/dev/null && has_ipv6=1

    cat >$T/servers.conf <<'EOF'
log_format put_type '$request_method $uri $content_type';
server {
    listen 127.0.0.1:@PORT1@;
    root @PREFIX@/files;
    location = /r1 { return 302 /data/small.bin; }
    location = /r2 { return 302 /r1; }
    location = /r3 { return 302 /r2; }
    location = /r4 { return 302 /r3; }
    location = /r5 { return 302 /r4; }
    location = /r6 { return 302 /r5; }
    location = /to-port2 { return 302 http://127.0.0.1:@PORT2@/data/small.bin; }
    location = /to-ftp { return 302 ftp://127.0.0.1:@PORT1@/data/small.bin; }
    location = /to-file { return 302 file:///etc/passwd; }
    location /slow/ { limit_rate 2k; }
    # SSI drops Content-Length: the body comes chunked, its size unknown
    # until it ends.
    location /chunked/ { ssi on; ssi_types *; }
    location /put/ {
        root @PREFIX@/dav;
        dav_methods PUT;
        create_full_put_path on;
        client_max_body_size 64k;
        client_body_temp_path @PREFIX@/tmp/dav;
        access_log @PREFIX@/logs/put.log put_type;
    }
}
server {
    listen 127.0.0.1:@PORT2@;
    access_log @PREFIX@/logs/port2.log;
    root @PREFIX@/files;
}
EOF
    if [ $has_ipv6 = 1 ]; then
        cat >>$T/servers.conf <<'EOF'
server {
    listen [::1]:@PORT4@;
    root @PREFIX@/files;
}
EOF
    fi
    # https with a certificate nobody trusts: verification must refuse it.
    has_tls=0
    if command -v openssl >/dev/null; then
        mkdir -p $T/tls
        if openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 \
            -keyout $T/tls/key.pem -out $T/tls/cert.pem >/dev/null 2>&1; then
            has_tls=1
            cat >>$T/servers.conf <<EOF
server {
    listen 127.0.0.1:@PORT5@ ssl;
    ssl_certificate $T/tls/cert.pem;
    ssl_certificate_key $T/tls/key.pem;
    access_log @PREFIX@/logs/tls.log;
    root @PREFIX@/files;
}
EOF
        fi
    fi
    nginx_start $T/servers.conf
    F=$NGINX_PREFIX/files
    mkdir -p $F/data $F/slow $F/chunked $F/many $NGINX_PREFIX/dav
    head -c 5000 /dev/urandom >$F/data/small.bin
    head -c 1048576 /dev/urandom >$F/data/big.bin
    head -c 204800 /dev/urandom >$F/slow/big.bin
    head -c 4096 /dev/urandom >$F/slow/mid.bin
    head -c 1048576 /dev/zero | tr '\0' a >$F/chunked/big.txt
    printf 'x,y\n1,2\n3,4\n' >$F/data/table.csv
    "$PYTHON3" - $F/data/pixel.png <<'PY'
import struct, sys, zlib
def chunk(t, d):
    return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xffffffff)
png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)) \
    + chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00")) + chunk(b"IEND", b"")
open(sys.argv[1], "wb").write(png)
PY
    for i in 1 2 3 4 5 6 7 8; do head -c $((100000 + i * 1000)) /dev/urandom >$F/many/f$i.bin; done
    chmod -R a+rX $F
    DAV=$NGINX_PREFIX/dav
}
