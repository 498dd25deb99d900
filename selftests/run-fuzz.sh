#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# run-fuzz.sh SECONDS LOG FUZZER... — run each libFuzzer target for SECONDS,
# seeded with the real fdinfo fixtures and its own corpus (kept under
# build/fuzz/corpus-NAME between runs). Any crash, leak or sanitizer report
# fails; the crashing input is kept next to the log.
set -u
secs=$1 log=$2
shift 2
shared=${DRMACCT_SHARED:-../shared}
mkdir -p "$(dirname "$log")"
: >"$log"
status=0
for f in "$@"; do
	name=${f##*/}
	corpus=build/fuzz/corpus-$name
	seeds=$(dirname "$0")/../user/fuzz/seeds-$name
	mkdir -p "$corpus" "$(dirname "$log")/artifacts"
	dirs=("$corpus")
	[ -d "$seeds" ] && dirs+=("$seeds")
	[ -d "$shared/fixtures/fdinfo" ] && dirs+=("$shared/fixtures/fdinfo")
	out=$(mktemp)
	"$f" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
		-artifact_prefix="$(dirname "$log")/artifacts/$name-" "${dirs[@]}" >"$out" 2>&1
	rc=$?
	runs=$(grep -oE '#[0-9]+' "$out" | tail -n1)
	{
		echo "# drmacct-vm: begin $name"
		echo "TAP version 13"
		echo "1..1"
		if [ $rc = 0 ]; then
			echo "ok 1 $name ${secs}s ${runs:+(${runs#\#} executions)}"
		else
			tail -n 40 "$out" | sed 's/^/# /'
			echo "not ok 1 $name"
			status=1
		fi
		echo "# drmacct-vm: end $name rc=$rc"
	} | tee -a "$log"
	rm -f "$out"
done
exit $status
