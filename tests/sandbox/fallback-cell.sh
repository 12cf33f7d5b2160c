#!/bin/bash
# The fallback's containment probe again as a cell of a kernel, in the four
# modes of tests/lib/modes.sh.
RMS_FALLBACK_CELL=1 . "${top_srcdir:?run me through make check, or set top_srcdir}/tests/sandbox/fallback.sh"
