#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# run-host-tests.sh LOG PROGRAM... — run host test programs, framed for
# tap-summary.sh, to stdout and LOG. Run from the repository root.
set -u
log=$1
shift
mkdir -p "$(dirname "$log")"
: >"$log"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
status=0
for t in "$@"; do
	name=${t##*/}
	{
		echo "# drmacct-vm: begin $name"
		timeout -s KILL 600 "$t" 2>&1
		rc=$?
		echo "# drmacct-vm: end $name rc=$rc"
	} | tee -a "$log"
	rc=${PIPESTATUS[0]}
	case "$rc" in 0|4) ;; *) status=1 ;; esac
done
exit $status
