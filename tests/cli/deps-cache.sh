#!/bin/bash
. "$top_srcdir/tests/lib/tap.sh"
skip_all "not written yet"
