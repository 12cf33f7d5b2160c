#!/usr/bin/python3
"""Validate import-names.tsv (import name -> distribution map).

Usage:
    check-import-names.py [--names-list FILE] [--site DIR ...] [TSV]

TSV defaults to import-names.tsv next to this script.

Checks (all errors, exit status 1 if any):
  * LF line endings, ASCII, final newline, no blank lines;
  * at least one '#' header comment, and comments only before the data;
  * each data line is IMPORT<TAB>DIST with exactly one tab and no spaces;
  * IMPORT is a valid Python identifier, not a keyword, not a stdlib module;
  * DIST is a valid PEP 508 project name;
  * no identity mappings after PEP 503 normalisation;
  * import names strictly increasing in byte order (sorted + unique).

Optional cross-checks (stdlib only, no network):
  --names-list FILE  a file whose first column (tab-separated) lists known
                     project names; every DIST must be in it.
  --site DIR         a site-packages directory; for every distribution
                     found there (dist-info/egg-info), the top-level names
                     it provides are compared with the map and
                     disagreements are reported (as warnings: distros such
                     as Debian sometimes publish under another name).
"""
import argparse
import importlib.metadata as md
import keyword
import os
import re
import sys

NAME_RE = re.compile(r"^([A-Z0-9]|[A-Z0-9][A-Z0-9._-]*[A-Z0-9])$", re.IGNORECASE)


def norm(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def check(path):
    errors = []
    entries = []
    with open(path, "rb") as f:
        raw = f.read()
    try:
        text = raw.decode("ascii")
    except UnicodeDecodeError as e:
        return [f"{path}: not ASCII ({e})"], []
    if "\r" in text:
        errors.append(f"{path}: contains CR characters (use LF line endings)")
    if not text.endswith("\n"):
        errors.append(f"{path}: missing final newline")
    lines = text.split("\n")[:-1] if text.endswith("\n") else text.split("\n")
    if not lines or not lines[0].startswith("#"):
        errors.append(f"{path}:1: file must start with a '#' header comment")
    seen_data = False
    prev = None
    stdlib = set(getattr(sys, "stdlib_module_names", ()))
    for n, line in enumerate(lines, 1):
        where = f"{path}:{n}"
        if line == "":
            errors.append(f"{where}: blank line")
            continue
        if line.startswith("#"):
            if seen_data:
                errors.append(f"{where}: comment after data lines")
            continue
        seen_data = True
        parts = line.split("\t")
        if len(parts) != 2:
            errors.append(f"{where}: expected exactly one TAB, got {len(parts) - 1}: {line!r}")
            continue
        imp, dist = parts
        if any(c.isspace() for c in line.replace("\t", "", 1)):
            errors.append(f"{where}: stray whitespace: {line!r}")
            continue
        if not imp.isidentifier() or keyword.iskeyword(imp):
            errors.append(f"{where}: import name {imp!r} is not a valid identifier")
        if imp in stdlib:
            errors.append(f"{where}: import name {imp!r} is a standard-library module")
        if not NAME_RE.match(dist):
            errors.append(f"{where}: distribution {dist!r} is not a valid PEP 508 name")
        if norm(imp) == norm(dist):
            errors.append(f"{where}: identity mapping {imp} -> {dist} (PEP 503 normalised)")
        if prev is not None:
            if imp == prev:
                errors.append(f"{where}: duplicate import name {imp!r}")
            elif imp < prev:
                errors.append(f"{where}: not sorted: {imp!r} after {prev!r}")
        prev = imp
        entries.append((imp, dist))
    if not entries:
        errors.append(f"{path}: no data lines")
    return errors, entries


def check_names_list(entries, list_path):
    known = set()
    with open(list_path, encoding="utf-8", errors="replace") as f:
        for line in f:
            known.add(norm(line.split("\t", 1)[0].strip()))
    return [f"distribution {d!r} (for {i}) not in {list_path}"
            for i, d in entries if norm(d) not in known]


def cross_check_site(entries, site_dirs):
    provides = {}
    for dist in md.distributions(path=site_dirs):
        name = dist.metadata["Name"]
        if not name:
            continue
        tops = set((dist.read_text("top_level.txt") or "").split())
        for f in dist.files or []:
            p = f.parts
            if not p or p[0] in ("..", "__pycache__") or p[0].endswith((".dist-info", ".egg-info")):
                continue
            tops.add(p[0] if len(p) > 1 else p[0].split(".")[0])
        for t in tops:
            provides.setdefault(t, set()).add(name)
    agree, warnings = 0, []
    for imp, dist in entries:
        if imp not in provides:
            continue
        if norm(dist) in {norm(x) for x in provides[imp]}:
            agree += 1
        else:
            warnings.append(f"{imp}: map says {dist}, installed metadata says {sorted(provides[imp])}")
    return agree, warnings


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("tsv", nargs="?", default=os.path.join(here, "import-names.tsv"))
    ap.add_argument("--names-list")
    ap.add_argument("--site", action="append", default=[])
    a = ap.parse_args()

    errors, entries = check(a.tsv)
    if a.names_list:
        errors += check_names_list(entries, a.names_list)
    for e in errors:
        print("ERROR:", e, file=sys.stderr)
    if a.site:
        agree, warns = cross_check_site(entries, a.site)
        for w in warns:
            print("WARNING:", w, file=sys.stderr)
        print(f"cross-check against {', '.join(a.site)}: {agree} agree, {len(warns)} differ")
    dists = {norm(d) for _, d in entries}
    status = "FAILED" if errors else "OK"
    print(f"{a.tsv}: {status}: {len(entries)} mappings, {len(dists)} distinct distributions, {len(errors)} errors")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
