#!/usr/bin/python3
"""netlab_http.py: the network lab's web server (tests/lib/netlab.sh).

HTTP on port 80 and HTTPS on 443 (the certificate the lab made), on every
address of the lab's outside namespace, IPv4 and IPv6, so that each test
host, and each trap address a script must never reach, answers. Paths:

    /                   "lab ADDRESS HOST": which address and name answered
    /big/N              N bytes (for the limits and the throughput)
    /redirect?to=URL    302 to URL (a redirect to a place never reachable)
    /simple/NAME/       an index's page for NAME whose files are on a trap
                        (3.0), on a host that is no index (2.0) and here (1.0)

Every request is logged ("ADDRESS PORT PATH HOST") to the log file, so
that a test can say that nothing reached a trap.

    netlab_http.py CERT KEY LOG READY [PORT | PORTs]...

The ports (default 80 443s; "s": HTTPS) on every address of the
namespace it runs in.
"""
import http.server
import socket
import socketserver
import ssl
import sys
import threading
import urllib.parse

LOG = None
LOCK = threading.Lock()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def do_GET(self):
        addr = self.connection.getsockname()[0]
        if addr.startswith("::ffff:"):
            addr = addr[7:]
        port = self.connection.getsockname()[1]
        host = self.headers.get("Host", "-")
        with LOCK, open(LOG, "a", encoding="utf-8") as f:
            f.write("%s %d %s %s\n" % (addr, port, self.path.replace(" ", "%20"), host.replace(" ", "_")))
        url = urllib.parse.urlsplit(self.path)
        if url.path.startswith("/big/"):
            n = int(url.path[5:])
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(n))
            self.end_headers()
            chunk = b"\0" * 65536
            while n > 0:
                piece = chunk[:min(n, len(chunk))]
                try:
                    self.wfile.write(piece)
                except OSError:
                    return
                n -= len(piece)
            return
        if url.path.startswith("/simple/") and url.path.count("/") == 3:
            # A package index's page (PEP 503) whose files are elsewhere:
            # 3.0 on a trap, 2.0 on a host that is no index, 1.0 here.
            name = url.path.split("/")[2]
            links = ["http://10.0.0.1/%s-3.0-py3-none-any.whl" % name,
                     "http://203.0.113.20/%s-2.0-py3-none-any.whl" % name,
                     "%s-1.0-py3-none-any.whl" % name]
            body = "".join('<a href="%s">%s</a>\n' % (l, l.rsplit("/", 1)[-1]) for l in links).encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        if url.path == "/redirect":
            to = urllib.parse.parse_qs(url.query).get("to", ["/"])[0]
            self.send_response(302)
            self.send_header("Location", to)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body = ("lab %s %s\n" % (addr, host)).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, family, addr, tls):
        self.address_family = family
        self.tls = tls
        super().__init__(addr, Handler, bind_and_activate=False)
        if family == socket.AF_INET6:
            self.socket.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        self.server_bind()
        self.server_activate()

    def finish_request(self, request, client_address):
        # The handshake in the request's own thread: a slow client holds
        # no other.
        if self.tls is not None:
            request.settimeout(10)
            try:
                request = self.tls.wrap_socket(request, server_side=True)
            except OSError:
                return
            request.settimeout(None)
        super().finish_request(request, client_address)

    def handle_error(self, request, client_address):
        pass


def main():
    global LOG
    cert, key, LOG, ready = sys.argv[1:5]
    ports = sys.argv[5:] or ["80", "443s"]
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(cert, key)
    servers = []
    for family, any_addr in ((socket.AF_INET, "0.0.0.0"), (socket.AF_INET6, "::")):
        for p in ports:
            servers.append(Server(family, (any_addr, int(p.rstrip("s"))), tls if p.endswith("s") else None))
    for s in servers:
        threading.Thread(target=s.serve_forever, daemon=True).start()
    with open(ready, "w", encoding="ascii") as f:
        f.write("ready\n")
    threading.Event().wait()


if __name__ == "__main__":
    main()
