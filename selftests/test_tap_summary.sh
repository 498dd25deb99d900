#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# test_tap_summary.sh — tap-summary.sh counts what it must: passes, skips,
# "not ok" lines, crashed programs, and programs that never finished; and
# the kernel label run-vm --label puts on a suite's blocks and lines. Every
# way a part can vanish fails: a VM dying mid-program (a new begin while a
# block is open), a kill (exit 137), a skip of a whole program with no line
# (exit 4), an end naming another block, a plan the lines do not meet, a
# log with no result, and a skip the expected-skip list does not name.
set -u
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 fails=0
t() { n=$((n + 1)); if "${@:2}"; then echo "ok $n $1"; else echo "not ok $n $1"; fails=$((fails + 1)); fi; }
sum() { "$here/tap-summary.sh" --expected-skips "$tmp/skips" "$@"; }
has() { grep -qxF -- "$1" <<<"$2"; }
nfail() { [ "$(grep -c '^FAIL' <<<"$2")" = "$1" ]; }

printf '%s\n' '# a comment' '6.1.*,6.12.* b nokunit' '*-rt-amd64 c slow one [v1]' \
	'7.3.* wp (whole program)' >"$tmp/skips"

printf '%s\n' '# drmacct-vm: begin a' 'TAP version 13' '1..4' 'ok 1 x' 'not ok 2 y' \
	'ok 3 z # SKIP no device' 'not ok 4 w # TODO later' '# drmacct-vm: end a rc=1' \
	'# drmacct-vm: begin b' '# drmacct-vm: end b rc=139' \
	'# drmacct-vm: begin c' '1..1' 'ok 1 c1' '# drmacct-vm: end c rc=0' >"$tmp/one.log"
printf '%s\r\n' '# drmacct-vm: begin d' '1..1' 'ok 1 d1' >"$tmp/two.log"
out=$(sum "$tmp/one.log" "$tmp/two.log"); rc=$?

printf '%s\n' '# drmacct-vm: begin e' '1..1' 'ok 1 e1' '# drmacct-vm: end e rc=0' >"$tmp/good.log"
good=$(sum "$tmp/good.log"); grc=$?

printf '%s\n' '# drmacct-vm: begin 6.12.1-amd64/f' '1..2' 'ok 1 6.12.1-amd64: f1' \
	'not ok 2 6.12.1-amd64: f2' '# drmacct-vm: end 6.12.1-amd64/f rc=1' >"$tmp/label.log"
lab=$(sum "$tmp/label.log")

: >"$tmp/empty.log"
empty=$(sum "$tmp/empty.log"); erc=$?
mixed=$(sum "$tmp/good.log" "$tmp/empty.log")

# The VM died in g: the next boot's first block begins with g still open.
printf '%s\n' '# drmacct-vm: begin g' '1..3' 'ok 1 g1' \
	'# drmacct-vm: begin h' '1..1' 'ok 1 h1' '# drmacct-vm: end h rc=0' >"$tmp/died.log"
died=$(sum "$tmp/died.log")

# Killed at the program timeout, after passing lines and before its plan's end.
printf '%s\n' '# drmacct-vm: begin k' '1..3' 'ok 1 k1' 'ok 2 k2' \
	'# k: killed after 600s (program timeout)' '# drmacct-vm: end k rc=137' >"$tmp/killed.log"
killed=$(sum "$tmp/killed.log")

# Exit 4 and no line: the whole program skipped; expected only on 7.3.
printf '%s\n' '# drmacct-vm: begin 6.12.1-amd64/wp' '# drmacct-vm: end 6.12.1-amd64/wp rc=4' \
	'# drmacct-vm: begin 7.3.4-x/wp' '# drmacct-vm: end 7.3.4-x/wp rc=4' >"$tmp/wp.log"
wp=$(sum "$tmp/wp.log")

# An end naming another block, an end with no block, a plan not met, no plan.
printf '%s\n' '# drmacct-vm: begin m' '1..1' 'ok 1 m1' '# drmacct-vm: end n rc=0' \
	'# drmacct-vm: end o rc=0' \
	'# drmacct-vm: begin p' '1..3' 'ok 1 p1' 'ok 2 p2' '# drmacct-vm: end p rc=0' \
	'# drmacct-vm: begin q' 'ok 1 q1' '# drmacct-vm: end q rc=0' \
	'# drmacct-vm: begin r' '# drmacct-vm: end r rc=0' >"$tmp/frame.log"
frame=$(sum "$tmp/frame.log")

# Skips against the list, per kernel: b's is expected on 6.12 and not on
# 7.3; c's on RT only (variant in the name); c passing on RT is named.
printf '%s\n' '# drmacct-vm: begin 6.12.1-amd64/b' '1..1' \
	'ok 1 6.12.1-amd64: nokunit # SKIP no KUnit' '# drmacct-vm: end 6.12.1-amd64/b rc=4' \
	'# drmacct-vm: begin 7.3.4-x/b' '1..1' \
	'ok 1 7.3.4-x: nokunit # SKIP no KUnit' '# drmacct-vm: end 7.3.4-x/b rc=4' \
	'# drmacct-vm: begin 6.12.1-rt-amd64/c' '1..2' 'ok 1 6.12.1-rt-amd64: slow one [v1] # SKIP late' \
	'ok 2 6.12.1-rt-amd64: slow one [v2] # SKIP late' '# drmacct-vm: end 6.12.1-rt-amd64/c rc=4' \
	'# drmacct-vm: begin 6.1.9-rt-amd64/c' '1..1' 'ok 1 6.1.9-rt-amd64: slow one [v1]' \
	'# drmacct-vm: end 6.1.9-rt-amd64/c rc=0' >"$tmp/skip.log"
skip=$(sum "$tmp/skip.log"); src=$?
unlabelled=$(sum --kernel 6.12.1-amd64 <(sed -n -e '1,4s|6.12.1-amd64[/:] *||' -e '1,4p' "$tmp/skip.log"))

echo "# drmacct-vm: begin test_tap_summary"
echo "TAP version 13"
echo "1..21"
t "counts across files (CRLF too)" has '3 passed, 4 failed, 1 skipped (0 expected by skips)' "$out"
t "names a failing test" has 'FAIL: a: y' "$out"
t "a crashed program fails once" bash -c 'grep -qx "FAIL: b: exited with status 139 without a failing test line" <<<"$0" &&
	[ "$(grep -c "^FAIL: b:" <<<"$0")" = 1 ]' "$out"
t "an unfinished program fails" has 'FAIL: d: log ended inside this program' "$out"
t "exit 1 on failures" [ "$rc" = 1 ]
t "exit 0 and one line when all pass" bash -c '[ "$0" = 0 ] && [ "$1" = "1 passed, 0 failed, 0 skipped (0 expected by skips)" ]' "$grc" "$good"
t "exit 1 when nothing ran, naming the empty part" bash -c '[ "$0" = 1 ] && grep -q "^FAIL: .*empty.log: no test output at all" <<<"$1"' "$erc" "$empty"
t "a part with no output fails beside one that passed" bash -c 'grep -q "^FAIL: .*empty.log: no test output" <<<"$0" &&
	grep -qx "1 passed, 1 failed, 0 skipped (0 expected by skips)" <<<"$0"' "$mixed"
t "a labelled failure names its kernel once" has 'FAIL: 6.12.1-amd64/f: f2' "$lab"
t "a VM dying mid-program (a new begin) fails that program" bash -c 'grep -qx "FAIL: g: did not finish: a new program began (the VM died or timed out while it ran)" <<<"$0" &&
	grep -qx "2 passed, 1 failed, 0 skipped (0 expected by skips)" <<<"$0"' "$died"
t "a program killed (exit 137) fails once" bash -c 'grep -qx "FAIL: k: exited with status 137 without a failing test line" <<<"$0" &&
	grep -qx "2 passed, 1 failed, 0 skipped (0 expected by skips)" <<<"$0"' "$killed"
t "exit 4 with no line is a whole-program skip, failed where not expected" bash -c \
	'grep -qx "FAIL: 6.12.1-amd64/wp: (whole program): skipped, and skips does not expect it on 6.12.1-amd64 (exited 4 with no test line)" <<<"$0" &&
	! grep -q "FAIL: 7.3.4-x/wp" <<<"$0" && grep -qx "0 passed, 1 failed, 2 skipped (1 expected by skips)" <<<"$0"' "$wp"
t "an end naming another program fails the open one" has 'FAIL: m: ended as n, another program' "$frame"
t "an end without a begin fails" has 'FAIL: o: ended, but it never began (or ended twice)' "$frame"
t "fewer lines than the plan fail" has 'FAIL: p: planned 1..3 but 2 test lines came' "$frame"
t "lines without a plan fail" has 'FAIL: q: 1 test lines and no 1..N plan' "$frame"
t "exit 0 with no line fails" has 'FAIL: r: exited 0 without a single test line' "$frame"
t "an unexpected skip fails, an expected one does not" bash -c '[ "$1" = 1 ] &&
	grep -qx "FAIL: 7.3.4-x/b: nokunit: skipped, and skips does not expect it on 7.3.4-x (no KUnit)" <<<"$0" &&
	grep -qx "FAIL: 6.12.1-rt-amd64/c: slow one \[v2\]: skipped, and skips does not expect it on 6.12.1-rt-amd64 (late)" <<<"$0" &&
	[ "$(grep -c "^FAIL" <<<"$0")" = 2 ]' "$skip" "$src"
t "an expected skip that passed is named" has 'NOTE: 6.1.9-rt-amd64/c: slow one [v1]: expected to skip (skips), passed' "$skip"
t "the last line says how many skips the list expected" bash -c '[ "$(tail -n 1 <<<"$0")" = "1 passed, 2 failed, 4 skipped (2 expected by skips)" ]' "$skip"
t "--kernel names the kernel of unlabelled blocks" has '0 passed, 0 failed, 1 skipped (1 expected by skips)' "$unlabelled"
echo "# drmacct-vm: end test_tap_summary rc=$([ $fails = 0 ] && echo 0 || echo 1)"
