# zygote.py: the Python half of a zygote (jail_zygote.c is the C half),
# built into the program. The zygote runs it once, in __main__, before its
# imports; it leaves nothing there but a module outside it, _rms_warm:
#   imp(names)   the imports of what the environment's scripts import, each
#                in its own try (one that fails is skipped, one that leaves a
#                thread or a socket ends the zygote: the pool remembers
#                both, and says so), and with numpy BLAS's thread setters,
#                found once;
#   child(blob)  called once in each run, before its script: makes the
#                interpreter what `python3 SCRIPT` would have made it (argv,
#                sys.path[0] and PYTHONPATH, the environment, __main__'s
#                __file__ and __loader__, fresh seeds, BLAS's threads), and
#                takes _rms_warm out of sys.modules, so the script finds
#                nothing of it;
#   ahead(blob)  called once in a run's process made ahead of its run
#                (jail_zygote_run.c: ahead_main), with a stand-in for the run's
#                blob (this process's own environment): what child() does
#                to the interpreter, with nothing of it kept, so that the
#                pages child() writes (each copied from the zygote's on its
#                first write) are this process's own before the run comes.
# A run's end is runner.py's end(), which the zygote also loads.
def _rms_make():
    # What child() and runner.py's end() use, imported once here rather
    # than in every run (an import finds its files on disk).
    import atexit, gc, importlib.machinery, os, random, signal, sys, threading, traceback

    setters = []  # BLAS's thread setters, found once (blas_setters)
    WARM_REPORT_MAX = 65536  # bytes of one message to the pool (warm_pool.c's WARM_REPORT_MAX)
    # What a run of a headless interpreter goes on to import: matplotlib's
    # default backend there is Agg (no display), which pyplot loads at the
    # first figure or matplotlib.use("Agg").
    HEADLESS = {'matplotlib.pyplot': ('matplotlib.backends.backend_agg',)}

    def imp(names):
        # The imports, in order, each as the script would make it (`import
        # a.b`; `from a import b`, where b may be a module or a name), and
        # what became of each, told to the pool (fd 0) before "ready":
        # 'i' and the modules imported, 's' and one skipped (it failed).
        # One that leaves a thread or a socket behind (a thread cannot live
        # across a fork; a socket, a display's, would be closed in every
        # run) is unsafe: 'u' tells the pool, which starts the zygote again
        # without it, and this one ends at once.
        done, report = [], []
        for n in names:
            before = open_sockets()
            try:
                parent, _, last = n.rpartition('.')
                if parent:
                    __import__(parent, fromlist=[last])
                else:
                    __import__(n)
            except BaseException as e:
                report.append('s %s failed (%s)' % (n, type(e).__name__))
                continue
            why = ('a thread' if len(os.listdir('/proc/self/task')) > 1 else
                   'a socket' if open_sockets() - before else None)
            if why:
                tell('u%s %s' % (n, why))
                os._exit(0)
            if n in sys.modules:
                done.append(n)
            for extra in HEADLESS.get(n, ()):
                try:
                    __import__(extra)
                except Exception:
                    pass
        tell('i' + ' '.join(done))
        for line in report:
            tell(line)
        if 'numpy' in sys.modules:
            blas_setters()
        # What the zygote holds from here on is never collected: a run's
        # collections walk only the objects of its own (and do not write
        # into every page the zygote's objects are on).
        gc.collect()
        gc.freeze()

    def open_sockets():
        found = set()
        for fd in os.listdir('/proc/self/fd'):
            try:
                if os.readlink('/proc/self/fd/' + fd).startswith('socket:') and fd != '0':
                    found.add(fd)
            except OSError:
                pass
        return found

    def tell(text):
        try:
            os.write(0, text.encode('utf-8', 'replace')[:WARM_REPORT_MAX])
        except OSError:
            pass

    def blas_setters():
        # The zygote started BLAS with one thread (no thread may live across
        # a fork); each run gets the library's default back through these.
        setters[:] = []
        try:
            import ctypes
            with open('/proc/self/maps') as f:
                libs = {l.split()[-1] for l in f if 'blas' in l and '.so' in l}
            for lib in libs:
                h = ctypes.CDLL(lib)
                for sym in ('openblas_set_num_threads', 'openblas_set_num_threads64_'):
                    fn = getattr(h, sym, None)
                    if fn is not None:
                        setters.append(fn)
        except Exception:
            pass

    def start(blob, run):
        # child() (run) or ahead() (not: a stand-in, and nothing kept that
        # child() does not make again).
        parts = bytes.fromhex(blob).decode('utf-8', 'surrogateescape').split('\0')
        script, env = parts[0], parts[1:]
        threads = os.environ.get('RUNMYSCRIPT_WARM_THREADS')
        os.environ.clear()
        for kv in env:
            if '=' in kv:
                k, v = kv.split('=', 1)
                os.environ[k] = v
        sys.argv[:] = [script]
        sys.orig_argv[:] = [sys.executable, script]
        extra = [p for p in os.environ.get('PYTHONPATH', '').split(':') if p]
        sys.path[0:0] = [os.path.dirname(script)] + extra
        if not run:
            del sys.path[:1 + len(extra)]
        # What the interpreter gives __main__ for a file (and takes back
        # once it has run: end()).
        main = sys.modules['__main__'].__dict__
        main['__file__'] = script
        main['__cached__'] = None
        main['__loader__'] = importlib.machinery.SourceFileLoader('__main__', script)
        random.seed()
        npr = sys.modules.get('numpy.random')
        if npr is not None:
            try:
                npr.seed()
            except Exception:
                pass
        # (BLAS's threads only in the run: a thread started in ahead() would
        # not be dropped with the process)
        for fn in setters if threads and run else ():
            try:
                fn(int(threads))
            except Exception:
                pass
        if not run:
            gc.collect()

    def child(blob):
        sys.modules.pop('_rms_warm')
        start(blob, True)

    def ahead(blob):
        start(blob, False)

    m = type(sys)('_rms_warm')
    m.imp, m.child, m.ahead = imp, child, ahead
    sys.modules['_rms_warm'] = m


_rms_make()
del _rms_make
