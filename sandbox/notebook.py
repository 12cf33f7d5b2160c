# notebook.py: a notebook's driver, built into the program after
# sandbox/jail/display.py. A run of an .ipynb (exec_spec.notebook) runs
# this as its script.py, with the call below added by nb_script()
# (sandbox/nb.c):
#   _rms_notebook(display_make, DATA, NAME, VALUE_LIMIT, TEXT_LIMIT)
# DATA is the notebook's JSON (nbformat 4, its outputs cleared) as a string. Its
# code cells run in order in one namespace, __main__'s, as a kernel runs
# them: what one cell defines is there in the next. Each cell's outputs
# are caught as Jupyter's kernel gives them: what it prints (stream
# outputs, and on the real stdout and stderr too, so the run's log shows
# them), its last expression's value (execute_result; a DataFrame's HTML
# too; a PIL image or a figure as image/png), the matplotlib figures still
# open at its end (display_data image/png, also saved as
# output/cell-N-figure-M.png), and the exception that ended it (error,
# with the traceback of the cell's own frames). A cell that raises stops
# the run there: the cells after it keep no outputs, the last line on
# stderr says "[runmyscript] the notebook failed at cell N: ..." (the
# result's error) and the exit status is 1. The executed notebook, with
# papermill's metadata, is written as output/NAME before each cell (that
# cell "running", the ones after it "pending") and at the end, so that a
# run stopped from outside (its timeout, a limit) leaves what was done.
# What the cells print beyond TEXT_LIMIT characters stays in the log only.
def _rms_notebook(display_make, data, name, value_limit, text_limit):
    import ast, base64, builtins, datetime, json, linecache, os, sys, time, traceback
    show, figures = display_make()
    nb = json.loads(data)
    out = os.environ.get('SCRIPT_OUTPUT') or 'output'
    kfile = sys._getframe().f_code.co_filename
    main = sys.modules['__main__'].__dict__
    for k in ('_rms_notebook', '_rms_display_make'):
        main.pop(k, None)

    def now():
        return datetime.datetime.now(datetime.timezone.utc).isoformat().replace('+00:00', 'Z')

    class Tee:
        # A stream of the cell's: its text into the cell's outputs (up to
        # TEXT_LIMIT) and on to the real stream, for the log.
        def __init__(self, real, stream, sink):
            self.real, self.stream, self.sink = real, stream, sink

        def write(self, s):
            self.sink(self.stream, s)
            return self.real.write(s)

        def flush(self):
            self.real.flush()

        def __getattr__(self, attr):
            return getattr(self.real, attr)

    def lines(text):
        return text.splitlines(True)

    def user_tb(tb):
        while tb is not None and tb.tb_frame.f_code.co_filename == kfile:
            tb = tb.tb_next
        return tb

    def png(path):
        try:
            with open(path, 'rb') as f:
                return base64.b64encode(f.read()).decode('ascii')
        except OSError:
            return None

    # nbformat 4.5 gives every cell an id: one is made where it is missing,
    # as nbformat's normalize() does.
    minor = nb.get('nbformat_minor')
    if isinstance(minor, int) and minor >= 5:
        import uuid
        for cell in nb['cells']:
            if not isinstance(cell.get('id'), str) or not cell['id']:
                cell['id'] = uuid.uuid4().hex[:8]
    used = [0]
    start = now()
    t0 = time.monotonic()

    def pending(status):
        return {'exception': None, 'status': status, 'start_time': None, 'end_time': None, 'duration': None}

    def save(failed):
        # The notebook as it stands, by a rename: a run stopped from outside
        # (its timeout, a limit, a cancel) leaves the cells done so far.
        nb['metadata']['papermill'] = {
            'start_time': start, 'end_time': now(), 'duration': round(time.monotonic() - t0, 6),
            'exception': failed is not None, 'input_path': name, 'output_path': name,
            'parameters': {}, 'environment_variables': {}, 'version': None}
        try:
            os.makedirs(out, exist_ok=True)
            tmp = os.path.join(out, '.%s.tmp' % name)
            with open(tmp, 'w', encoding='utf-8') as f:
                json.dump(nb, f, indent=1, ensure_ascii=False)
                f.write('\n')
            os.replace(tmp, os.path.join(out, name))
            return True
        except Exception as e:
            sys.stderr.write('[runmyscript] the executed notebook could not be written: %r\n' % (e,))
            return False

    for cell in nb['cells']:
        if cell.get('cell_type') == 'code':
            if not isinstance(cell.get('metadata'), dict):
                cell['metadata'] = {}
            cell['metadata']['papermill'] = pending('pending')
    if not isinstance(nb.get('metadata'), dict):
        nb['metadata'] = {}
    failed = None
    count = 0
    for cell in nb['cells']:
        if cell.get('cell_type') != 'code':
            continue
        count += 1
        n = count
        cell['metadata']['papermill'] = pending('running')
        save(None)
        src = cell.get('source', '')
        if isinstance(src, list):
            src = ''.join(src)
        outputs = []

        def sink(stream, s):
            if used[0] >= text_limit or not s:
                return
            s = s[:text_limit - used[0]]
            used[0] += len(s)
            if outputs and outputs[-1]['output_type'] == 'stream' and outputs[-1]['name'] == stream:
                outputs[-1]['text'] += s
            else:
                outputs.append({'output_type': 'stream', 'name': stream, 'text': s})

        meta = cell['metadata']
        cell_start, c0 = now(), time.monotonic()
        fname = '<cell %d>' % n
        linecache.cache[fname] = (len(src), None, lines(src), fname)
        real_out, real_err = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = Tee(real_out, 'stdout', sink), Tee(real_err, 'stderr', sink)
        error = None
        try:
            tree = ast.parse(src, fname, 'exec')
            last = None
            if tree.body and isinstance(tree.body[-1], ast.Expr):
                last = ast.Expression(tree.body.pop().value)
            exec(compile(tree, fname, 'exec'), main)
            value = eval(compile(last, fname, 'eval'), main) if last is not None else None
            if value is not None:
                builtins._ = value
                stem = 'cell-%d-value' % n
                text, _ = show(value, out, stem, value_limit)
                if text is None:
                    b = png(os.path.join(out, stem + '.png'))
                    if b:
                        outputs.append({'output_type': 'display_data', 'data': {'image/png': b,
                                        'text/plain': '<%s>' % type(value).__name__}, 'metadata': {}})
                else:
                    d = {'text/plain': text}
                    html = getattr(value, '_repr_html_', None)
                    if callable(html):
                        try:
                            h = html()
                            if isinstance(h, str) and len(h) <= value_limit:
                                d['text/html'] = h
                        except Exception:
                            pass
                    outputs.append({'output_type': 'execute_result', 'execution_count': n, 'data': d,
                                    'metadata': {}})
        except BaseException as e:
            error = e
        finally:
            for f in (sys.stdout, sys.stderr):
                try:
                    f.flush()
                except Exception:
                    pass
            sys.stdout, sys.stderr = real_out, real_err
        try:
            before = set(os.listdir(out))
            figures(out, 'cell-%d-' % n)
            for f in sorted(set(os.listdir(out)) - before):
                if f.startswith('cell-%d-figure-' % n) and f.endswith('.png'):
                    b = png(os.path.join(out, f))
                    if b:
                        outputs.append({'output_type': 'display_data', 'data': {'image/png': b,
                                        'text/plain': '<Figure>'}, 'metadata': {}})
        except Exception:
            pass
        if error is not None:
            if isinstance(error, SystemExit) and not error.code:
                error = None
        if error is not None:
            tb = None if isinstance(error, SyntaxError) else user_tb(error.__traceback__)
            tbl = traceback.format_exception(type(error), error, tb)
            sys.stderr.write(''.join(tbl))
            outputs.append({'output_type': 'error', 'ename': type(error).__name__, 'evalue': str(error),
                            'traceback': [t.rstrip('\n') for t in tbl]})
        cell['outputs'] = outputs
        cell['execution_count'] = n
        meta['papermill'] = {'exception': error is not None, 'status': 'failed' if error is not None else 'completed',
                             'start_time': cell_start, 'end_time': now(),
                             'duration': round(time.monotonic() - c0, 6)}
        meta['execution'] = {'iopub.execute_input': cell_start, 'shell.execute_reply': now()}
        if error is not None:
            failed = (n, '%s: %s' % (type(error).__name__, error) if str(error) else type(error).__name__)
            break
    if not save(failed):
        return 1
    if failed is not None:
        sys.stderr.write('[runmyscript] the notebook failed at cell %d: %s\n' % failed)
        return 1
    return 0
