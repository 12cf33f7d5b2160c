#!/bin/bash
# The suite of a script that asks, again in the rlimits fallback: the read
# on its stdin is seen there too.
RMS_ISOLATION=rlimits . "${top_srcdir:?run me through make check, or set top_srcdir}/tests/cli/ask.sh"
