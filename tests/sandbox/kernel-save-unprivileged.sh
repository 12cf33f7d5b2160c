#!/bin/bash
# The saved kernels' suite again with the server, the kernels and the
# driver an unprivileged user's.
RMS_KERNEL_AS=unprivileged . "${top_srcdir:?run me through make check, or set top_srcdir}/tests/sandbox/kernel-save.sh"
