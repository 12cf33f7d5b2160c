#!/bin/bash
# The warm starts' suite again with the program, the server whose pool
# forks the runs included, running as an unprivileged user.
RMS_WARM_AS=unprivileged . "${top_srcdir:?run me through make check, or set top_srcdir}/tests/sandbox/warm.sh"
