#!/usr/bin/env python3
# check_notebook.py: a notebook as Jupyter sees it, for the notebook tests.
#   check_notebook.py FILE [HTML]  validates FILE against nbformat's schema
#       (nbformat.validate, the Debian package python3-nbformat) and, with
#       HTML, converts it with `jupyter nbconvert --to html` into HTML;
#       prints one JSON object: {"valid": true | "the reason", "nbformat":
#       [4, MINOR], "cells": [[TYPE, COUNT, [OUTPUT TYPE or STREAM NAME,
#       ...]], ...], "error": [ENAME, EVALUE, TRACEBACK LINES] of the first
#       error output or null, "images": N image/png outputs, "html": true |
#       "the reason" | null}.
# Exit status 0 when it could say, 2 when nbformat is missing (skip).
import json, subprocess, sys

try:
    import nbformat
except ImportError:
    print('nbformat is not installed (python3-nbformat)', file=sys.stderr)
    sys.exit(2)

path = sys.argv[1]
out = {'valid': True, 'nbformat': None, 'cells': [], 'error': None, 'images': 0, 'html': None}
with open(path, encoding='utf-8') as f:
    nb = nbformat.read(f, as_version=nbformat.NO_CONVERT)
out['nbformat'] = [nb.get('nbformat'), nb.get('nbformat_minor')]
try:
    nbformat.validate(nb)
except nbformat.ValidationError as e:
    out['valid'] = str(e).splitlines()[0]
for c in nb.cells:
    kinds = []
    for o in c.get('outputs', []):
        kinds.append(o.get('name') if o.output_type == 'stream' else o.output_type)
        if o.output_type == 'error' and out['error'] is None:
            out['error'] = [o.ename, o.evalue, o.traceback]
        if 'image/png' in o.get('data', {}):
            out['images'] += 1
    out['cells'].append([c.cell_type, c.get('execution_count'), kinds])
if len(sys.argv) > 2:
    p = subprocess.run(['jupyter', 'nbconvert', '--to', 'html', '--output', sys.argv[2], path],
                       capture_output=True, text=True)
    out['html'] = True if p.returncode == 0 else (p.stderr.strip().splitlines() or ['exit %d' % p.returncode])[-1]
print(json.dumps(out))
