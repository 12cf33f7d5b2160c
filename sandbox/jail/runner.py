# runner.py: a script that ends in an expression (or that draws with
# matplotlib) run so that a notebook's display of it can be had, built into
# the program after sandbox/jail/display.py. The same text starts both
# kinds of runs, so that a script gives the same result warm and cold:
# cold as `python3 -c RUNNER` (the call below added by exec_script.c), warm
# in the zygote (jail_zygote.c runs it once, and each run calls main()
# through the same kind of line). It leaves nothing in __main__ but a
# module outside it, _rms_run:
#   main(script, value_file, limit, cold)  runs SCRIPT in __main__ as
#       `python3 SCRIPT` does (argv, sys.path[0], __file__, __loader__, the
#       traceback as the interpreter prints it, without this file's
#       frames), but with its last statement, when that is an expression,
#       evaluated apart: its value shown as a notebook shows it
#       (display.py) into VALUE_FILE ('0' or '1', truncated, then the
#       text), a PIL image or a figure as OUTPUT/value.png; every figure
#       still open at the end saved as OUTPUT/figure-N.png. Then the end:
#       cold, the exception (if any) printed and raised again for the
#       interpreter's own end (its exit status, a KeyboardInterrupt's
#       death by SIGINT); warm, it is left in _rms_run.exc for zygote.py's
#       end().
# What the script sees besides `python3 SCRIPT`: two frames below its own
# (inspect.stack()), and _rms_run gone from sys.modules before it starts.
def _rms_runner_make(display_make):
    import sys
    # Cold (`python3 -c`), the working directory is first on the path:
    # nothing of it is imported here.
    cwd_first = sys.path[:1] == ['']
    if cwd_first:
        del sys.path[0]
    # _ast, the interpreter's own, not ast.py and what it imports: a cold
    # run pays for every import here.
    import _ast, importlib.machinery, os
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

    def main(script, value_file, limit, cold):
        exc = go(script, value_file, limit)
        if not cold:
            me.exc = exc
            return
        if exc is None:
            return
        if not isinstance(exc, SystemExit):
            # Printed as the interpreter prints it, then raised again with
            # nothing more printed: the interpreter's end is its own.
            sys.last_type, sys.last_value, sys.last_traceback = type(exc), exc, exc.__traceback__
            try:
                sys.excepthook(type(exc), exc, exc.__traceback__)
            except BaseException:
                sys.__excepthook__(type(exc), exc, exc.__traceback__)
            sys.excepthook = lambda *a: None
        raise exc

    me.main = main
    sys.modules['_rms_run'] = me


_rms_runner_make(_rms_display_make)
del _rms_runner_make, _rms_display_make
