#!/bin/bash
# data/import-names.tsv passes its checker (sorted, unique, one tab, valid
# identifiers and PEP 508 names, no identity or standard-library entries),
# holds the mappings scripts most often need (PIL, cv2, sklearn, yaml, ...), and
# the checker catches a broken file.
# It runs no script, so it needs no jail.
RMS_JAIL_OPTIONAL=1
. "${top_srcdir:?run me through make check, or set top_srcdir}/tests/lib/tap.sh" || exit 99
D=$top_srcdir/data
out=$("$PYTHON3" "$D/check-import-names.py" "$D/import-names.tsv" 2>&1)
ok $? "check-import-names.py accepts import-names.tsv"
diag "$out"
n=$(grep -vc '^#' "$D/import-names.tsv")
[ "$n" -ge 150 ]
ok $? "at least 150 mappings ($n)"
for pair in PIL:pillow cv2:opencv-python sklearn:scikit-learn yaml:PyYAML bs4:beautifulsoup4 \
    skimage:scikit-image dateutil:python-dateutil dotenv:python-dotenv Crypto:pycryptodome \
    docx:python-docx pptx:python-pptx fitz:PyMuPDF jwt:PyJWT serial:pyserial; do
    grep -qx "${pair%%:*}	${pair#*:}" "$D/import-names.tsv"
    ok $? "maps ${pair%%:*} to ${pair#*:}"
done
# The checker fails on what it must catch.
{ grep '^#' "$D/import-names.tsv"; printf 'yaml\tPyYAML\nPIL\tpillow\n'; } >"$TEST_TMP/unsorted.tsv"
"$PYTHON3" "$D/check-import-names.py" "$TEST_TMP/unsorted.tsv" >/dev/null 2>&1
is "$?" 1 "the checker refuses an unsorted file"
{ grep '^#' "$D/import-names.tsv"; printf 'json\tjson5\n'; } >"$TEST_TMP/stdlib.tsv"
"$PYTHON3" "$D/check-import-names.py" "$TEST_TMP/stdlib.tsv" >/dev/null 2>&1
is "$?" 1 "the checker refuses a standard-library module"
{ grep '^#' "$D/import-names.tsv"; printf 'numpy\tNumPy\n'; } >"$TEST_TMP/ident.tsv"
"$PYTHON3" "$D/check-import-names.py" "$TEST_TMP/ident.tsv" >/dev/null 2>&1
is "$?" 1 "the checker refuses an identity mapping"
done_testing
