#!/bin/bash
# fuzz-check.sh: the fuzz targets of tests/fuzz/ under make check: each
# once over its seed corpus (tests/fuzz/corpus/NAME/, which holds the
# regression inputs of every bug the fuzzers found), then
# FUZZ_CHECK_SECONDS (5) of fuzzing. Skips, saying why, where clang or
# libFuzzer is missing. `make fuzz` runs them longer.
exec "${BASH:-bash}" "$top_srcdir/tests/fuzz/fuzz.sh" check "${FUZZ_CHECK_SECONDS:-5}"
