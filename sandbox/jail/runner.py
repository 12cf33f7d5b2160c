# runner.py: the start and the end of a script's run, built into the
# program after sandbox/jail/display.py. The same text serves both kinds of
# runs, so that a script gives the same result warm and cold: cold as
# `python3 -c RUNNER` (the call below added by exec_script.c) for a script
# whose last expression is shown or that draws with matplotlib, warm in the
# zygote (jail_zygote.c runs it once; each run calls main() through the
# same kind of line, or end() from C after a script run as a file). It
# leaves nothing in __main__ but a module outside it, _rms_run:
#   main(script, value_file, limit, cold)  runs SCRIPT in __main__ as
#       `python3 SCRIPT` does (argv, sys.path[0], __file__, __loader__, the
#       traceback as the interpreter prints it, without this file's
#       frames), but with its last statement, when that is an expression,
#       evaluated apart: its value shown as a notebook shows it
#       (display.py) into VALUE_FILE ('0' or '1', truncated, then the
#       text), a PIL image or a figure as OUTPUT/value.png; every figure
#       still open at the end saved as OUTPUT/figure-N.png. Then, cold, the
#       end (end() below), and the interpreter's exit with its status;
#       warm, the exception (if any) is left in _rms_run.exc for the
#       zygote's C half, which calls end() itself.
#   end(exc)  called once the script is over (exc: the exception it ended
#       with, or none): what the interpreter's own end does that a script
#       can see (the traceback or sys.exit's message, the threads that are
#       not daemons, atexit, the standard streams, __main__'s names cleared
#       and a collection, which runs the script's __del__ methods and
#       closes the files it left open). It returns the exit status. Warm,
#       the zygote's fork then ends without the teardown of every module
#       the zygote imported; cold, every object is frozen first
#       (gc.freeze), so that the interpreter's teardown frees what it frees
#       without walking all of them again in its collections (a tenth of a
#       second with pandas and matplotlib, which no one can see).
# What the script sees besides `python3 SCRIPT`: three frames below its own
# (inspect.stack()), and _rms_run gone from sys.modules before it starts.
def _rms_runner_make(display_make):
    import sys
    # Cold (`python3 -c`), the working directory is first on the path:
    # nothing of it is imported here.
    cwd_first = sys.path[:1] == ['']
    if cwd_first:
        del sys.path[0]
    # _ast, the interpreter's own, not ast.py and what it imports: a cold
    # run pays for every import here (atexit and gc are built in; what
    # end() needs only at times is imported then, or is the zygote's).
    import _ast, atexit, gc, importlib.machinery, os
    if cwd_first:
        sys.path.insert(0, '')
    show, figures = display_make()
    me = type(sys)('_rms_run')
    me.exc = None

    def strip(tb):
        # The frames of this text (compiled as <string>, cold and warm)
        # come first: they are not the script's.
        while tb is not None and tb.tb_frame.f_code.co_filename == '<string>':
            tb = tb.tb_next
        return tb

    def go(script, value_file, limit):
        main = sys.modules['__main__'].__dict__
        sys.argv[:] = [script]
        sys.orig_argv[:] = [sys.executable, script]
        sys.path[0] = os.path.dirname(script)
        main['__file__'] = script
        main['__cached__'] = None
        main['__loader__'] = importlib.machinery.SourceFileLoader('__main__', script)
        out = os.environ.get('SCRIPT_OUTPUT', '')
        try:
            with open(script, 'rb') as f:
                source = f.read()
            tree = compile(source, script, 'exec', _ast.PyCF_ONLY_AST)
        except BaseException as e:
            return e.with_traceback(None)
        last = None
        if tree.body and isinstance(tree.body[-1], _ast.Expr):
            last = _ast.Expression(tree.body.pop().value)
        exc = None
        try:
            exec(compile(tree, script, 'exec'), main)
            text = None
            if last is not None:
                value = eval(compile(last, script, 'eval'), main)
                text, cut = show(value, out, 'value', limit)
        except BaseException as e:
            exc = e.with_traceback(strip(e.__traceback__))
        if exc is None and text is not None:
            try:
                with open(value_file, 'w', encoding='utf-8', errors='surrogateescape') as f:
                    f.write(('1' if cut else '0') + text)
            except Exception:
                pass  # output/ gone or full: the value is lost, not the run
        try:
            if out:
                figures(out, '')
        except BaseException:
            pass
        return exc

    def flush(status, drop=False):
        # The standard streams: a failed flush of stdout is exit status 120
        # (said once, as the interpreter says it), of stderr nothing. With
        # drop, a stream that fails is taken away (sys.NAME = None), so that
        # the interpreter's exit after it does not say it again.
        for name in ('stderr', 'stdout'):
            f = getattr(sys, name, None)
            try:
                if f is not None and not f.closed:
                    f.flush()
            except Exception as e:
                if drop:
                    setattr(sys, name, None)
                if name == 'stdout' and status != 120:
                    import traceback
                    sys.stderr.write('Exception ignored in: %r\n' % (f,) +
                                     ''.join(traceback.format_exception_only(type(e), e)))
                    status = 120
        return status

    def system_exit(e):
        # sys.exit(code): None is 0, an int is itself, anything else is
        # printed to stderr and is 1.
        code = e.code
        if code is None:
            return 0
        if isinstance(code, int):
            return code
        err = getattr(sys, 'stderr', None)
        if err is not None:
            try:
                err.write(str(code) + '\n')
            except Exception:
                pass
        return 1

    def end(exc=None):
        status, sigint = 0, False
        main = sys.modules['__main__'].__dict__
        if isinstance(exc, SystemExit):
            status = system_exit(exc)
        elif exc is not None:
            sys.last_type, sys.last_value, sys.last_traceback = type(exc), exc, exc.__traceback__
            try:
                sys.excepthook(type(exc), exc, exc.__traceback__)
            except BaseException:
                sys.__excepthook__(type(exc), exc, exc.__traceback__)
            status, sigint = 1, isinstance(exc, KeyboardInterrupt)
        for name in ('stderr', 'stdout'):
            try:
                getattr(sys, name).flush()
            except BaseException:
                pass
        if not isinstance(exc, SystemExit):
            # (sys.exit ends the interpreter before they are taken back)
            main.pop('__file__', None)
            main.pop('__cached__', None)
        exc = None
        # The interpreter's end, in its order: the threads that are not
        # daemons (threading's, when it was imported: as the interpreter
        # waits for them), atexit, the standard streams, then __main__'s
        # names cleared (_-names first, as the interpreter does), which
        # runs the script's __del__ methods and closes the files it left
        # open.
        threading = sys.modules.get('threading')
        try:
            if threading is not None:
                threading._shutdown()
        except BaseException:
            pass
        atexit._run_exitfuncs()
        status = flush(status)
        for first in (True, False):
            for k in list(main):
                if k != '__builtins__' and (not first or (k[:1] == '_' and k[1:2] != '_')):
                    main[k] = None
        gc.collect()
        status = flush(status)
        if sigint:
            # As python's main: die of the SIGINT the script did not handle.
            import signal
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGINT)
        return status

    def main(script, value_file, limit, cold):
        exc = go(script, value_file, limit)
        if not cold:
            me.exc = exc
            return
        status = flush(end(exc), drop=True)
        # What the interpreter's exit does after this (the teardown of every
        # module, C's atexit and stdio) walks none of these objects again.
        gc.freeze()
        raise SystemExit(status)

    me.main, me.end = main, end
    sys.modules['_rms_run'] = me


_rms_runner_make(_rms_display_make)
del _rms_runner_make, _rms_display_make
