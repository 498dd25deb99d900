#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# test_emulator_faults.sh — emulator-faults.sh sets aside exactly the
# reports no CPU can cause and leaves every other report for the log check.
# The fixture is the report a 6.12 guest printed under TCG (make test,
# 2026-11-24): a single-step #DB in kernel mode whose trapped EFLAGS,
# 4150a742, has reserved bits set. The other cases are that report edited.
set -u
here=$(cd "$(dirname "$0")" && pwd)
fx=$here/fixtures/tcg-db-eflags.log
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 fails=0
t() { n=$((n + 1)); if "${@:2}"; then echo "ok $n $1"; else echo "not ok $n $1"; fails=$((fails + 1)); fi; }
run() { "$here/emulator-faults.sh" "$@"; }

# The trapped context's EFLAGS is the one after the RIP line after <#DB>;
# the handler's own (before <#DB>) is 4150a002.
trapped() { awk -v v="$1" '/<#DB>/ { d = 1 } d && /RIP: / { r = 1 }
	d && r && !done && /EFLAGS: 4150a742/ { sub(/EFLAGS: 4150a742/, "EFLAGS: " v); done = 1 } { print }' "$fx"; }

real=$(run "$fx")
trapped 00000346 >"$tmp/valid.log"			# TF|IF|PF|ZF: a CPU can hold it
trapped 0000000100000346 >"$tmp/high.log"		# a bit above 31
sed 's/EFLAGS: 4150a002/EFLAGS: 4150a742/' "$tmp/valid.log" >"$tmp/handler.log"
sed 's%arch/x86/kernel/traps.c:1120 exc_debug_kernel+0xca/0x160%drivers/gpu/drm/simgpu.c:10 simgpu_run_job+0x1/0x2%' \
	"$fx" >"$tmp/other.log"
sed '/---\[ end trace/d' "$fx" >"$tmp/unended.log"
{ cat "$tmp/other.log"; cat "$fx"; } >"$tmp/two.log"
run "$tmp/two.log" "$tmp/two.stripped" >"$tmp/two.out"
run "$tmp/valid.log" "$tmp/valid.stripped" >/dev/null
run "$tmp/missing.log" "$tmp/missing.stripped" >"$tmp/missing.out"; mrc=$?
lines=$(wc -l <"$fx")

echo "# drmacct-vm: begin test_emulator_faults"
echo "TAP version 13"
echo "1..10"
t "the TCG report is recognised, cut-here to end-trace" \
	test "$real" = "2 74 4150a742 41408000 WARNING: CPU: 0 PID: 5153 at arch/x86/kernel/traps.c:1120 exc_debug_kernel+0xca/0x160"
t "architecturally valid flags with TF stay a failure" test -z "$(run "$tmp/valid.log")"
t "a reserved bit above 31 is recognised" \
	grep -q '^2 74 0000000100000346 0000000100000000 WARNING: ' <<<"$(run "$tmp/high.log")"
t "the handler's own flags are not the trapped context's" test -z "$(run "$tmp/handler.log")"
t "the same flags under another WARNING stay a failure" test -z "$(run "$tmp/other.log")"
t "a report without its end stays a failure" test -z "$(run "$tmp/unended.log")"
t "of two reports only the emulator's is set aside" \
	test "$(cut -d' ' -f1,2 "$tmp/two.out")" = "$((lines + 2)) $((lines + 74))"
t "stripped keeps the other report and drops the emulator's" \
	eval 'grep -q "simgpu_run_job" "$tmp/two.stripped" && ! grep -q "WARNING: .*exc_debug_kernel" "$tmp/two.stripped" &&
	      test "$(wc -l <"$tmp/two.stripped")" = "$((2 * lines - 73))"'
t "nothing recognised: stripped is the console itself" cmp -s "$tmp/valid.log" "$tmp/valid.stripped"
t "no console: nothing found, empty stripped, exit 0" \
	eval 'test "$mrc" = 0 && test ! -s "$tmp/missing.out" && test -e "$tmp/missing.stripped" && test ! -s "$tmp/missing.stripped"'
echo "# drmacct-vm: end test_emulator_faults rc=$((fails > 0))"
exit $((fails > 0))
