#!/usr/bin/env bash
# Runs a command under `timeout`, the limit scaled by DITC_TEST_TIME_SCALE
# (lit.cfg.py sets it: 1, or 4 in a sanitizer build, whose instrumented
# code runs several times slower, more so on a host busy with the other
# tests). The limits guard against a hang or an unbounded search, which
# take minutes or never end, not against seconds of slowness.
# Usage: time-limit.sh SECONDS CMD [ARGS...]; exits as timeout does (124).
seconds=$1
shift
exec timeout $((seconds * ${DITC_TEST_TIME_SCALE:-1})) "$@"
