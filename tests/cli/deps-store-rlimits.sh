#!/bin/bash
# The deps-store suite again, in the rlimits fallback (the installer, the
# bytecode's compile and the scripts without the namespaces; the
# environment at its host path).
RMS_ISOLATION=rlimits . "${top_srcdir:?run me through make check, or set top_srcdir}/tests/cli/deps-store.sh"
