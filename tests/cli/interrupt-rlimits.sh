#!/bin/bash
# The interrupt suite again, in the rlimits fallback.
# Its install is from the gate index, a remote source: in the fallback
# that takes the operator's fallback_installer_network = on.
export RUNMYSCRIPT_FALLBACK_INSTALLER_NETWORK=on
RMS_ISOLATION=rlimits . "${top_srcdir:?run me through make check, or set top_srcdir}/tests/cli/interrupt.sh"
