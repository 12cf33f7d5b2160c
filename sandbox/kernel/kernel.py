# kernel.py: a kernel's loop, the Python half of a kernel (its host,
# sandbox/kernel/kernel_host.c, is the C half), built into the program. The host
# writes it after sandbox/jail/display.py as the kernel's script.py, and the
# kernel runs it as a session's script runs (cold, or forked from a zygote):
# it reads cells from fd 0, the host's channel, runs each in __main__ (the
# names one cell defines are there in the next), shows the last
# expression's value as a notebook does, and answers on the channel once
# stdout and stderr (the pipes whose bytes are the cell's log) are flushed.
#
# The channel: frames of a 4-byte big-endian length and a JSON object.
# The host sends {"cell": N, "code": "...", "out": OUTPUT_DIR, "limit":
# VALUE_BYTES, "site": DIR (its extra directory, where the host adds
# packages between cells; absent where it has none)}; the kernel says hello once (one byte that carries a pidfd
# of itself, then {"hello": PID}), then answers per cell
# {"status": "ok" | "error" | "memory" (a MemoryError) | "interrupted",
# "exit_code": N, "value": TEXT
# or null, "value_truncated": BOOL}. The channel moves off fd 0 (which
# becomes /dev/null, as a cell has no input) to a descriptor of its own,
# closed in a child the cell forks. SIGINT (the host's interrupt: a cell's
# timeout, a cancel) raises KeyboardInterrupt in a cell, and between cells
# it is dropped.
def _rms_kernel(display_make):
    import ast, builtins, importlib, json, linecache, os, signal, sys, traceback
    show, figures = display_make()
    kfile = sys._getframe().f_code.co_filename
    chan = os.dup(0)  # not inheritable: no program a cell runs gets it
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    try:
        os.register_at_fork(after_in_child=lambda: os.close(chan))
    except Exception:
        pass
    main = sys.modules['__main__'].__dict__
    for k in ('__file__', '__cached__'):
        main.pop(k, None)
    sys.argv[:] = ['']
    # The workspace is the working directory, first on the path as '' is
    # in the interactive interpreter's; the script's own directory (the
    # kernel's, read-only) is nothing of the user's.
    here = os.path.dirname(kfile)
    sys.path[:] = [''] + [p for p in sys.path if p not in ('', here)]
    # SIGINT: KeyboardInterrupt in a cell (the interpreter's own handler,
    # which adds no frame to the traceback), nothing between cells. A
    # handler a cell installs is the user's, and stays.
    def idle(sig, frame):
        pass
    signal.signal(signal.SIGINT, idle)

    def sigint(cell):
        want, other = (signal.default_int_handler, idle) if cell else (idle, signal.default_int_handler)
        if signal.getsignal(signal.SIGINT) is other:
            signal.signal(signal.SIGINT, want)

    def read_exact(n):
        b = b''
        while len(b) < n:
            try:
                part = os.read(chan, n - len(b))
            except InterruptedError:
                continue
            if not part:
                return None
            b += part
        return b

    def recv():
        head = read_exact(4)
        if head is None:
            return None
        body = read_exact(int.from_bytes(head, 'big'))
        return None if body is None else json.loads(body)

    def send(obj):
        b = json.dumps(obj).encode()
        b = len(b).to_bytes(4, 'big') + b
        while b:
            try:
                b = b[os.write(chan, b):]
            except InterruptedError:
                pass

    def flush():
        for f in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
            try:
                f.flush()
            except BaseException:
                pass

    def user_tb(tb):
        # The kernel's own frames are not the user's.
        while tb is not None and tb.tb_frame.f_code.co_filename == kfile:
            tb = tb.tb_next
        return tb

    def report(e):
        tb = None if isinstance(e, SyntaxError) else user_tb(e.__traceback__)
        sys.last_type, sys.last_value, sys.last_traceback = type(e), e, tb
        try:
            traceback.print_exception(type(e), e, tb)
        except BaseException:
            pass

    # The kernel's extra directory (the host's, read-only here): packages
    # added to the live kernel, after the environment's site-packages on
    # the path; a .pth file an added package brings is read once, as the
    # interpreter's start reads its environment's.
    pth_seen = set()

    def add_site(site):
        if site not in sys.path:
            sys.path.append(site)
        try:
            import site as site_mod
            for p in sorted(os.listdir(site)):
                if p.endswith('.pth') and p not in pth_seen:
                    pth_seen.add(p)
                    site_mod.addpackage(site, p, None)
        except Exception as e:
            report(e)

    def run(msg):
        n, code, out, limit = msg['cell'], msg['code'], msg['out'], msg['limit']
        name = '<cell %d>' % n
        linecache.cache[name] = (len(code), None, code.splitlines(True), name)
        if msg.get('site'):
            add_site(msg['site'])
        importlib.invalidate_caches()
        answer = {'status': 'ok', 'exit_code': 0, 'value': None, 'value_truncated': False}
        try:
            sigint(True)
            try:
                tree = ast.parse(code, name, 'exec')
                last = None
                if tree.body and isinstance(tree.body[-1], ast.Expr):
                    last = ast.Expression(tree.body.pop().value)
                exec(compile(tree, name, 'exec'), main)
                value = eval(compile(last, name, 'eval'), main) if last is not None else None
                if value is not None:
                    builtins._ = value
                    answer['value'], answer['value_truncated'] = show(value, out, 'cell-%d-value' % n, limit)
            finally:
                sigint(False)
        except KeyboardInterrupt as e:
            report(e)
            answer.update(status='interrupted', exit_code=1)
        except SystemExit as e:
            code = e.code
            if code is not None and not isinstance(code, int):
                sys.stderr.write(str(code) + '\n')
                code = 1
            if code:
                answer.update(status='error', exit_code=code)
        except BaseException as e:
            report(e)
            answer.update(status='memory' if isinstance(e, MemoryError) else 'error', exit_code=1)
        try:
            figures(out, 'cell-%d-' % n)
        except BaseException as e:
            report(e)
        return answer

    # The host interrupts the kernel through a pidfd of it, whatever
    # namespace the kernel's pid is in: one byte carries it.
    # (_socket, not socket: what the kernel imports is memory of its own)
    import _socket
    s = _socket.socket(fileno=os.dup(chan))
    try:
        pidfd = os.pidfd_open(os.getpid())
        s.sendmsg([b'h'], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, pidfd.to_bytes(4, sys.byteorder))])
        os.close(pidfd)
    finally:
        s.close()
        s = None
    send({'hello': os.getpid()})
    while True:
        try:
            msg = recv()
            if msg is None:
                break
            answer = run(msg)
            flush()
            send(answer)
        except KeyboardInterrupt:
            continue  # an interrupt that came after its cell: dropped
    os._exit(0)


(lambda k, m: (globals().pop('_rms_kernel'), globals().pop('_rms_display_make'), k(m)))(
    _rms_kernel, _rms_display_make)
