#!/bin/bash
# The interrupt suite again, in the rlimits fallback.
RMS_ISOLATION=rlimits . "${top_srcdir:?run me through make check, or set top_srcdir}/tests/cli/interrupt.sh"
