#!/bin/bash
# The deps-seed suite again, in the rlimits fallback (the environment at its
# host path instead of /env).
RMS_ISOLATION=rlimits . "${top_srcdir:?run me through make check, or set top_srcdir}/tests/cli/deps-seed.sh"
