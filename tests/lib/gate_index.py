"""gate_index.py: a PEP 503 index on 127.0.0.1 whose wheel downloads wait
at a gate, so that a test can hold an installer in the middle of a build
(to start a second run against it, or to kill it there) without guessing
at timings.

    gate_index.py DIR PORTFILE LOGFILE GATEFILE [PORT]

Serves DIR (a wheelhouse with simple/) on a free port of 127.0.0.1 and
writes the port to PORTFILE once it listens. Every request path is
appended to LOGFILE as it arrives. A request for a .whl waits until
GATEFILE exists, then is served. Runs until it is killed.
"""
import functools
import http.server
import os
import sys
import time


class Handler(http.server.SimpleHTTPRequestHandler):
    def do_GET(self):
        with open(LOG, "a") as f:
            f.write(self.path + "\n")
        if self.path.split("#")[0].endswith(".whl"):
            while not os.path.exists(GATE):
                time.sleep(0.02)
        super().do_GET()

    def log_message(self, *args):
        pass


def main():
    global LOG, GATE
    root, portfile, LOG, GATE = sys.argv[1:5]
    port = int(sys.argv[5]) if len(sys.argv) > 5 else 0  # the same port again after a restart
    handler = functools.partial(Handler, directory=root)
    http.server.ThreadingHTTPServer.allow_reuse_address = True
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    srv.daemon_threads = True
    tmp = portfile + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(tmp, portfile)
    srv.serve_forever()


if __name__ == "__main__":
    main()
