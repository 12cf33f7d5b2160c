#!/bin/bash
# The attack suite again with every attack a cell of a kernel of its own
# (tests/sandbox/cell drives exec_kernel_cell as serve's workers do).
RMS_ATTACK_CELL=1 . "${top_srcdir:?run me through make check, or set top_srcdir}/tests/sandbox/attacks.sh"
