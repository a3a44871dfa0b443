#!/bin/sh
# run_test.sh TIMEOUT LOGDIR COMMAND [ARGS...]
#
# Runs one test command under `timeout`, keeps its output in LOGDIR, prints it,
# and fails if the command failed, timed out, or printed a sanitizer report
# (even one that did not change the exit status).
t=$1
logdir=$2
shift 2
mkdir -p "$logdir" || exit 1
log="$logdir/$(basename "$1")-$$.log"
echo "-- $*"
timeout --kill-after=10 "$t" "$@" >"$log" 2>&1
rc=$?
cat "$log"
if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    echo "FAIL: timed out after ${t}s: $*"
    exit 1
fi
if [ "$rc" -ne 0 ]; then
    echo "FAIL (exit status $rc): $*"
    exit 1
fi
if grep -E -q 'ThreadSanitizer|AddressSanitizer|LeakSanitizer|runtime error:' "$log"; then
    echo "FAIL: sanitizer report in the output of: $*"
    exit 1
fi
exit 0
