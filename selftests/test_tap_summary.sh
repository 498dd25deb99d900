#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# test_tap_summary.sh — tap-summary.sh counts what it must: passes, skips,
# "not ok" lines, crashed programs, and programs that never finished; and
# the kernel label run-vm --label puts on a suite's blocks and lines.
set -u
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 fails=0
t() { n=$((n + 1)); if "${@:2}"; then echo "ok $n $1"; else echo "not ok $n $1"; fails=$((fails + 1)); fi; }
printf '%s\n' '# drmacct-vm: begin a' 'TAP version 13' 'ok 1 x' 'not ok 2 y' \
	'ok 3 z # SKIP no device' 'not ok 4 w # TODO later' '# drmacct-vm: end a rc=1' \
	'# drmacct-vm: begin b' '# drmacct-vm: end b rc=139' \
	'# drmacct-vm: begin c' 'ok 1 c1' '# drmacct-vm: end c rc=0' >"$tmp/one.log"
printf '%s\r\n' '# drmacct-vm: begin d' 'ok 1 d1' >"$tmp/two.log"
out=$("$here/tap-summary.sh" "$tmp/one.log" "$tmp/two.log"); rc=$?
printf '%s\n' '# drmacct-vm: begin e' 'ok 1 e1' '# drmacct-vm: end e rc=0' >"$tmp/good.log"
good=$("$here/tap-summary.sh" "$tmp/good.log"); grc=$?
printf '%s\n' '# drmacct-vm: begin 6.12.1-amd64/f' 'ok 1 6.12.1-amd64: f1' \
	'not ok 2 6.12.1-amd64: f2' '# drmacct-vm: end 6.12.1-amd64/f rc=1' >"$tmp/label.log"
lab=$("$here/tap-summary.sh" "$tmp/label.log")
: >"$tmp/empty.log"
"$here/tap-summary.sh" "$tmp/empty.log" >/dev/null; erc=$?
echo "# drmacct-vm: begin test_tap_summary"
echo "TAP version 13"
echo "1..8"
t "counts across files (CRLF too)" grep -qx '3 passed, 3 failed, 1 skipped' <<<"$out"
t "names a failing test" grep -qx 'FAIL: a: y' <<<"$out"
t "a crashed program fails once" grep -qx 'FAIL: b: exited with status 139 without a failing test line' <<<"$out"
t "an unfinished program fails" grep -qx 'FAIL: d: log ended inside this program' <<<"$out"
t "exit 1 on failures" [ "$rc" = 1 ]
t "exit 0 and one line when all pass" bash -c '[ "$0" = 0 ] && [ "$1" = "1 passed, 0 failed, 0 skipped" ]' "$grc" "$good"
t "exit 1 when nothing ran" [ "$erc" = 1 ]
t "a labelled failure names its kernel once" grep -qx 'FAIL: 6.12.1-amd64/f: f2' <<<"$lab"
echo "# drmacct-vm: end test_tap_summary rc=$([ $fails = 0 ] && echo 0 || echo 1)"
