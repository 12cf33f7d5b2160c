#!/bin/bash
# The scan for the server's paths again, with the server in the rlimits
# fallback, where a script sees the host's paths (a traceback names them).
RMS_ISOLATION=rlimits . "${top_srcdir:?run me through make check, or set top_srcdir}/tests/e2e/paths.sh"
