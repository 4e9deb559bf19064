#!/usr/bin/env bash
# Runs a command and succeeds only if it exits with the expected code.
# Usage: expect-exit.sh CODE CMD [ARGS...]
expected=$1
shift
"$@"
actual=$?
if [ "$actual" -ne "$expected" ]; then
  echo "expect-exit: '$*' exited $actual, expected $expected" >&2
  exit 1
fi
exit 0
