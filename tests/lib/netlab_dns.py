#!/usr/bin/python3
"""netlab_dns.py: the network lab's DNS server (tests/lib/netlab.sh).

Answers A and AAAA queries from a zone file of lines "NAME TYPE VALUE"
(TYPE A, AAAA or CNAME), over UDP and TCP on each address given, and
NXDOMAIN for every other name: the lab has no upstream, so a name it does
not know resolves nowhere. Each query is logged ("NAME TYPE") to the log
file, so that a test can tell which names reached the lab's DNS.

    netlab_dns.py ZONE LOG READY ADDR...

READY is a file written once every socket is bound.
"""
import ipaddress
import socket
import struct
import sys
import threading

TYPES = {"A": 1, "AAAA": 28, "CNAME": 5}


def load_zone(path):
    zone = {}
    with open(path, encoding="ascii") as f:
        for line in f:
            parts = line.split()
            if len(parts) != 3 or parts[0].startswith("#"):
                continue
            name, rtype, value = parts[0].lower().rstrip("."), parts[1].upper(), parts[2]
            zone.setdefault(name, []).append((rtype, value))
    return zone


def encode_name(name):
    out = b""
    for label in name.rstrip(".").split("."):
        out += bytes([len(label)]) + label.encode("ascii")
    return out + b"\0"


def parse_question(msg):
    pos, labels = 12, []
    while True:
        n = msg[pos]
        pos += 1
        if n == 0:
            break
        if n & 0xC0:
            raise ValueError("compressed question")
        labels.append(msg[pos:pos + n].decode("ascii", "replace"))
        pos += n
    qtype, qclass = struct.unpack("!HH", msg[pos:pos + 4])
    return ".".join(labels).lower(), qtype, qclass, msg[12:pos + 4]


def rdata(rtype, value):
    if rtype == "A":
        return ipaddress.IPv4Address(value).packed
    if rtype == "AAAA":
        return ipaddress.IPv6Address(value).packed
    return encode_name(value)


def answer(zone, msg, log):
    (qid, flags) = struct.unpack("!HH", msg[:4])
    try:
        name, qtype, _, question = parse_question(msg)
    except (ValueError, IndexError):
        return struct.pack("!HHHHHH", qid, 0x8001, 0, 0, 0, 0)  # FORMERR
    with open(log, "a", encoding="ascii") as f:
        f.write("%s %s\n" % (name, {v: k for k, v in TYPES.items()}.get(qtype, qtype)))
    answers, rcode = [], 0
    seen = set()
    cur = name
    while cur in zone and cur not in seen:
        seen.add(cur)
        nxt = None
        for rtype, value in zone[cur]:
            if rtype == "CNAME":
                answers.append((cur, rtype, value))
                nxt = value.lower().rstrip(".")
            elif TYPES[rtype] == qtype:
                answers.append((cur, rtype, value))
        if nxt is None:
            break
        cur = nxt
    if name not in zone:
        rcode = 3  # NXDOMAIN
    out = struct.pack("!HHHHHH", qid, 0x8400 | (flags & 0x0100) | rcode, 1, len(answers), 0, 0)
    out += question
    for owner, rtype, value in answers:
        data = rdata(rtype, value)
        out += encode_name(owner) + struct.pack("!HHIH", TYPES[rtype], 1, 5, len(data)) + data
    return out


def serve_udp(sock, zone, log):
    while True:
        msg, peer = sock.recvfrom(4096)
        if len(msg) >= 12:
            sock.sendto(answer(zone, msg, log), peer)


def serve_tcp(sock, zone, log):
    while True:
        conn, _ = sock.accept()
        with conn:
            try:
                conn.settimeout(5)
                n = struct.unpack("!H", conn.recv(2))[0]
                msg = b""
                while len(msg) < n:
                    chunk = conn.recv(n - len(msg))
                    if not chunk:
                        break
                    msg += chunk
                out = answer(zone, msg, log)
                conn.sendall(struct.pack("!H", len(out)) + out)
            except (OSError, struct.error):
                pass


def main():
    zone_path, log, ready = sys.argv[1:4]
    zone = load_zone(zone_path)
    threads = []
    for addr in sys.argv[4:]:
        family = socket.AF_INET6 if ":" in addr else socket.AF_INET
        u = socket.socket(family, socket.SOCK_DGRAM)
        u.bind((addr, 53))
        t = socket.socket(family, socket.SOCK_STREAM)
        t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        t.bind((addr, 53))
        t.listen(16)
        threads.append(threading.Thread(target=serve_udp, args=(u, zone, log), daemon=True))
        threads.append(threading.Thread(target=serve_tcp, args=(t, zone, log), daemon=True))
    for t in threads:
        t.start()
    with open(ready, "w", encoding="ascii") as f:
        f.write("ready\n")
    for t in threads:
        t.join()


if __name__ == "__main__":
    main()
