#!/bin/bash
# The MCP files suite again, with the server in the rlimits fallback.
RMS_ISOLATION=rlimits . "${top_srcdir:?run me through make check, or set top_srcdir}/tests/e2e/files.sh"
