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
#
# A kernel's state (sandbox/kernel/kernel_save.c is the host's half): between
# cells the host may send {"save": PATH, "limit": BYTES}; the kernel writes
# its state to PATH (through PATH.tmp, renamed into place) and answers
# {"saved": true, "bytes", "names": [[NAME, TYPE]], "skipped": [[NAME, TYPE,
# REASON]]}, or {"saved": false, "over": BYTES} past limit (nothing is
# kept), or {"saved": false, "reason"}. A cell's message may carry
# "restore": PATH: the state is loaded into __main__ before the cell runs,
# and the answer has "restored": {"names", "failed", "skipped", "modules",
# "cells", "python", "differs"}; the cell's number then follows the saved
# kernel's ("cell" in the answer). The saving and the loading run here,
# in the kernel's own jail: the state is the user's code, and a state a
# script of the workspace rewrote runs only where that script could.
# A state is one file: the names, each pickled on its own (cloudpickle
# where the kernel's environment has it: functions, classes and lambdas of
# the cells by value; else the standard pickle), then a JSON header (the
# names, the modules the cells imported, the cell counter and the cells'
# code, the Python version and the packages it was written under), its
# length (8 bytes, big-endian) and the magic STATE_MAGIC.
def _rms_kernel(display_make):
    import ast, builtins, importlib, json, linecache, os, signal, sys, traceback
    show, figures = display_make()
    STATE_MAGIC = b'RMSKST01'
    LIST_MAX = 100          # entries of each list a report carries
    HISTORY_MAX = 1 << 20   # bytes of the cells' code a state keeps
    history = []            # [N, CODE] of the cells this kernel ran (and restored)
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
    cell_modules = set()  # the top-level modules the cells imported (a state re-imports them first)
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

    # ------------------------------------------------------------ state

    class TooBig(Exception):
        pass

    class Capped:
        # A file that refuses to grow past limit bytes: a state too large
        # is given up at once, not written whole first.
        def __init__(self, f, limit):
            self.f, self.limit = f, limit

        def write(self, b):
            # (protocol 5 hands a large array's bytes over as a PickleBuffer)
            n = memoryview(b).nbytes
            if self.f.tell() + n > self.limit:
                raise TooBig(self.f.tell() + n)
            return self.f.write(b)

    def type_name(v):
        t = type(v)
        return t.__name__ if t.__module__ in ('builtins', '__main__') else '%s.%s' % (t.__module__, t.__qualname__)

    def why(e):
        text = '%s: %s' % (type(e).__name__, e)
        return text if len(text) <= 300 else text[:297] + '...'

    def user_names():
        return sorted(k for k in main if not (k.startswith('__') and k.endswith('__')))

    def packages():
        try:
            import importlib.metadata as md
            return {d.metadata['Name']: d.version for d in md.distributions() if d.metadata['Name']}
        except Exception:
            return {}

    def pickler():
        # cloudpickle: the environment's, else the kernel's own beside its
        # script (tools/, which the host links from the package store);
        # else the standard pickle.
        try:
            import cloudpickle
        except ImportError:
            tools = os.path.join(os.path.dirname(kfile), 'tools')
            sys.path.append(tools)
            try:
                import cloudpickle
            except ImportError:
                import pickle
                return pickle, 'pickle'
            finally:
                sys.path.remove(tools)
        return cloudpickle, 'cloudpickle ' + getattr(cloudpickle, '__version__', '?')

    def imported():
        # (an entry of sys.modules a package made that no import finds,
        # pandas' cython_runtime, is not one to import again)
        return sorted(m for m in cell_modules if not m.startswith('_') and
                      getattr(sys.modules.get(m), '__spec__', None) is not None)

    def save(msg):
        import types
        path, limit = msg['save'], msg['limit']
        pk, pk_name = pickler()
        saved, skipped = [], []
        tmp = path + '.tmp'
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(tmp, 'wb') as f:
                w = Capped(f, limit)
                for name in user_names():
                    v = main.get(name)
                    t = type_name(v)
                    if isinstance(v, types.ModuleType):
                        saved.append([name, t, 0, 0, 'module', v.__name__])
                        continue
                    start = f.tell()
                    try:
                        pk.dump(v, w, protocol=5)
                    except TooBig:
                        raise
                    except BaseException as e:
                        f.seek(start)
                        f.truncate()
                        skipped.append([name, t, why(e)])
                        continue
                    saved.append([name, t, start, f.tell() - start, 'pickle', None])
                code, size = [], 0
                for c in reversed(history):
                    size += len(c[1])
                    if size > HISTORY_MAX:
                        break
                    code.append(c)
                meta = {'format': 1, 'python': '%d.%d.%d' % sys.version_info[:3], 'packages': packages(),
                        'pickler': pk_name, 'modules': imported(), 'cells': history[-1][0] if history else 0,
                        'history': code[::-1], 'names': saved, 'skipped': skipped}
                b = json.dumps(meta).encode()
                w.write(b)
                w.write(len(b).to_bytes(8, 'big') + STATE_MAGIC)
                f.flush()
                os.fsync(f.fileno())
                size = f.tell()
            os.replace(tmp, path)
        except TooBig as e:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            return {'saved': False, 'over': e.args[0]}
        except BaseException as e:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            return {'saved': False, 'reason': why(e)}
        return {'saved': True, 'bytes': size, 'names': [x[:2] for x in saved[:LIST_MAX]], 'n_names': len(saved),
                'skipped': skipped[:LIST_MAX], 'n_skipped': len(skipped)}

    def rebind(v):
        # A function of a cell comes back with a globals of its own
        # (cloudpickle's): it is made again over __main__, as it was
        # defined, so that it sees and sets the names of the cells.
        import types
        if isinstance(v, types.FunctionType) and v.__module__ == '__main__' and v.__globals__ is not main:
            f = types.FunctionType(v.__code__, main, v.__name__, v.__defaults__, v.__closure__)
            f.__kwdefaults__, f.__qualname__, f.__doc__ = v.__kwdefaults__, v.__qualname__, v.__doc__
            f.__dict__.update(v.__dict__)
            f.__annotations__ = v.__annotations__
            return f
        return v

    def rebind_class(cls):
        # The methods of a class of the cells, the same way. Once every
        # name is loaded: an instance's state sets its class's methods
        # again as it loads.
        import types
        for k, m in list(vars(cls).items()):
            if isinstance(m, types.FunctionType) and m.__module__ == '__main__' and m.__globals__ is not main:
                try:
                    setattr(cls, k, rebind(m))
                except Exception:
                    pass

    def restore(path):
        import pickle
        pickler()  # a state of cloudpickle's loads with it
        rep = {'names': [], 'failed': [], 'skipped': [], 'modules': [], 'cells': 0, 'python': None, 'differs': []}
        try:
            f = open(path, 'rb')
        except OSError as e:
            rep['failed'].append(['*', 'state', why(e)])
            return rep
        with f:
            try:
                f.seek(-16, 2)
                tail = f.read(16)
                if tail[8:] != STATE_MAGIC:
                    raise ValueError('not a kernel state')
                n = int.from_bytes(tail[:8], 'big')
                f.seek(-16 - n, 2)
                meta = json.loads(f.read(n))
                if not isinstance(meta, dict) or meta.get('format') != 1:
                    raise ValueError('a kernel state of another format')
            except BaseException as e:
                rep['failed'].append(['*', 'state', why(e)])
                return rep
            here = '%d.%d.%d' % sys.version_info[:3]
            rep['python'] = meta.get('python')
            if rep['python'] != here:
                rep['differs'].append('written under Python %s, restored under Python %s' % (rep['python'], here))
            had, now = meta.get('packages') or {}, packages()
            for p in sorted(set(had) | set(now)):
                if had.get(p) != now.get(p) and len(rep['differs']) < 20:
                    rep['differs'].append('%s: %s then, %s now' % (p, had.get(p, 'absent'), now.get(p, 'absent')))
            for m in meta.get('modules') or []:
                try:
                    importlib.import_module(m)
                    cell_modules.add(m)
                    rep['modules'].append(m)
                except BaseException as e:
                    rep['failed'].append([m, 'module', why(e)])
            for name, t, off, size, kind, mod in meta.get('names') or []:
                try:
                    if kind == 'module':
                        v = importlib.import_module(mod)
                    else:
                        f.seek(off)
                        v = pickle.Unpickler(f).load()
                        if f.tell() != off + size:
                            raise ValueError('its bytes do not end where the state says')
                    main[name] = rebind(v)
                    rep['names'].append([name, t])
                except KeyboardInterrupt:
                    raise
                except BaseException as e:
                    rep['failed'].append([name, t, why(e)])
            for name, _ in rep['names']:
                v = main.get(name)
                for cls in (v, type(v)):
                    if isinstance(cls, type) and cls.__module__ == '__main__':
                        rebind_class(cls)
            rep['skipped'] = [list(x) for x in meta.get('skipped') or []]
            cells = meta.get('cells')
            rep['cells'] = cells if isinstance(cells, int) and 0 <= cells < 1 << 40 else 0
            for c in meta.get('history') or []:
                try:
                    cn, cc = int(c[0]), str(c[1])
                    linecache.cache['<cell %d>' % cn] = (len(cc), None, cc.splitlines(True), '<cell %d>' % cn)
                    history.append([cn, cc])
                except Exception:
                    pass
        for k in ('names', 'failed', 'skipped'):
            rep['n_' + k] = len(rep[k])
            rep[k] = rep[k][:LIST_MAX]
        return rep

    def run(msg):
        n, code, out, limit = msg['cell'], msg['code'], msg['out'], msg['limit']
        rep = None
        if msg.get('restore'):
            try:
                sigint(True)
                try:
                    rep = restore(msg['restore'])
                finally:
                    sigint(False)
            except KeyboardInterrupt as e:
                report(e)
                return {'status': 'interrupted', 'exit_code': 1, 'value': None, 'value_truncated': False,
                        'restored': {'names': [], 'failed': [['*', 'state', 'interrupted while it was restored']]}}
            n += rep['cells']  # the cells go on from the saved kernel's (the host's count follows)
        history.append([n, code])
        while sum(len(c[1]) for c in history) > HISTORY_MAX and len(history) > 1:
            del history[0]
        name = '<cell %d>' % n
        linecache.cache[name] = (len(code), None, code.splitlines(True), name)
        if msg.get('site'):
            add_site(msg['site'])
        importlib.invalidate_caches()
        answer = {'status': 'ok', 'exit_code': 0, 'value': None, 'value_truncated': False, 'cell': n}
        if rep is not None:
            answer['restored'] = rep
        try:
            sigint(True)
            try:
                tree = ast.parse(code, name, 'exec')
                last = None
                if tree.body and isinstance(tree.body[-1], ast.Expr):
                    last = ast.Expression(tree.body.pop().value)
                before = set(sys.modules)
                try:
                    exec(compile(tree, name, 'exec'), main)
                finally:
                    cell_modules.update(m.split('.')[0] for m in set(sys.modules) - before)
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
            if 'save' in msg:
                send(save(msg))
                continue
            answer = run(msg)
            flush()
            send(answer)
        except KeyboardInterrupt:
            continue  # an interrupt that came after its cell: dropped
    os._exit(0)


(lambda k, m: (globals().pop('_rms_kernel'), globals().pop('_rms_display_make'), k(m)))(
    _rms_kernel, _rms_display_make)
