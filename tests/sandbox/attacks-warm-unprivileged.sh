#!/bin/bash
# The attack suite with every run started warm and the program, the
# server whose pool forks the runs included, running as an unprivileged
# user: each result checked to say "start": "warm".
RMS_ATTACK_AS=unprivileged RMS_ATTACK_WARM=1 . "${top_srcdir:?run me through make check, or set top_srcdir}/tests/sandbox/attacks.sh"
