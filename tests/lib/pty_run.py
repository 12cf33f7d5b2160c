#!/usr/bin/env python3
# pty_run.py: runs a command with its stderr, and its stdout unless --stdout
# FILE sends that to a file, on a new pseudo-terminal, and saves every byte
# the terminal received: what a person at a terminal would have been shown.
# usage: pty_run.py [--stdout FILE] [--interrupt-on TEXT] TTYFILE COMMAND [ARG]...
# The terminal is put in raw mode first, so that its driver does not turn
# "\n" into "\r\n" and the file holds exactly the bytes the command wrote.
# With --interrupt-on, the terminal is the command's controlling terminal
# (the command leads a session of its own, as a shell's job does), its
# driver still turns the interrupt character into SIGINT, and once TEXT has
# appeared on it the interrupt character (Ctrl-C) is typed, once: what a
# person pressing Ctrl-C sees.
# Exits with the command's status (128 + N when killed by signal N).
import fcntl
import os
import select
import subprocess
import sys
import termios
import tty


def main():
    args = sys.argv[1:]
    out_file = interrupt_on = None
    if args[:1] == ["--stdout"]:
        out_file, args = args[1], args[2:]
    if args[:1] == ["--interrupt-on"]:
        interrupt_on, args = args[1].encode(), args[2:]
    if len(args) < 2:
        sys.exit("usage: pty_run.py [--stdout FILE] [--interrupt-on TEXT] TTYFILE COMMAND [ARG]...")
    tty_file, cmd = args[0], args[1:]
    master, slave = os.openpty()
    tty.setraw(slave)
    extra = {}
    if interrupt_on is not None:
        attrs = termios.tcgetattr(slave)
        attrs[3] |= termios.ISIG
        termios.tcsetattr(slave, termios.TCSANOW, attrs)
        intr = attrs[6][termios.VINTR]

        def controlling_terminal():
            os.setsid()
            fcntl.ioctl(slave, termios.TIOCSCTTY, 0)

        extra = {"preexec_fn": controlling_terminal, "pass_fds": (slave,)}
    stdout = open(out_file, "wb") if out_file else slave
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=stdout, stderr=slave, close_fds=True, **extra)
    os.close(slave)
    if out_file:
        stdout.close()
    got = bytearray()
    # Read until the command has ended and the terminal has nothing more (a
    # process it left behind may still hold the terminal open: not waited
    # for). The 0.1 s is how often to look, not a limit on anything.
    while True:
        ready, _, _ = select.select([master], [], [], 0.1)
        if ready:
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: every holder of the terminal closed it
                data = b""
            if data:
                got += data
                if interrupt_on is not None and interrupt_on in got:
                    os.write(master, intr)
                    interrupt_on = None
                continue
            break
        if proc.poll() is not None:
            break
    rc = proc.wait()
    with open(tty_file, "wb") as f:
        f.write(got)
    sys.exit(128 - rc if rc < 0 else rc)


main()
