#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# test_harness.sh SAMPLE_BINARY — the harness's own test: every outcome of
# selftests/harness/sample.c must be reported as TAP exactly as expected.
set -u
bin=$1
out=$("$bin" 2>/dev/null)
rc=$?
n=0
fails=0
t() { # t NAME COMMAND...
	n=$((n + 1))
	if "${@:2}"; then echo "ok $n $1"; else echo "not ok $n $1"; fails=$((fails + 1)); fi
}
has() { grep -qxF -- "$1" <<<"$out"; }
echo "# drmacct-vm: begin test_harness"
echo "TAP version 13"
echo "1..17"
t "exit status 1 when a test failed" [ "$rc" = 1 ]
t "plan line" has "1..13"
t "pass reported" has "ok 1 passes"
t "EXPECT failure reported, test continues" \
	bash -c 'grep -q "EXPECT: 2u == 3u: 2 vs 3" <<<"$0" && grep -q "reached after two failed" <<<"$0" && grep -qx "not ok 4 expect_fails_and_continues" <<<"$0"' "$out"
t "mixed signed/unsigned compare by value" has "ok 2 mixed_types_compare_by_value"
t "fixture body need not use self" has "ok 10 fx.body_need_not_use_self"
t "doubles compare as doubles; NaN satisfies only NE" \
	bash -c 'grep -q "EXPECT: util > 0.1: 0.050000000000000003 vs 0.10000000000000001" <<<"$0" && grep -q "EXPECT: nan == nan" <<<"$0" && ! grep -q "nan != nan" <<<"$0" && grep -qx "not ok 3 float_compare_fails" <<<"$0"' "$out"
t "signed values printed signed" bash -c 'grep -q "EXPECT: -1 < -2: -1 vs -2" <<<"$0"' "$out"
t "ASSERT in a helper ends the test" \
	bash -c 'grep -qx "not ok 5 assert_in_helper_ends_test" <<<"$0" && ! grep -q "NOT REACHED" <<<"$0"' "$out"
t "skip with reason" has "ok 6 skips # SKIP no device 7"
t "timeout kills the test" bash -c 'grep -q "hangs: TIMEOUT: killed after 1 s" <<<"$0" && grep -qx "not ok 7 hangs" <<<"$0"' "$out"
t "crash reported with its signal" bash -c 'grep -q "crashes: killed by signal 11 (SEGV)" <<<"$0"' "$out"
t "errno mismatch names both errnos" bash -c 'grep -q "expected -1/EINVAL, got -1/EBADF" <<<"$0"' "$out"
t "teardown runs after a failed ASSERT" \
	bash -c 'grep -qx "# teardown saw v=42" <<<"$0" && grep -qx "not ok 11 fx.assert_fails_teardown_runs" <<<"$0"' "$out"
t "labels on the TAP line, each once, from children too" has "ok 12 labelled [6.17 set, tp_btf, from  child]"
t "a label stays on a skip" has "ok 13 labelled_skip [6.1 set] # SKIP no 6.17 events"
only=$("$bin" -t skips 2>/dev/null); orc=$?
t "-t selects one test; all-skipped exits 4" bash -c '[ "$0" = 4 ] && grep -qx "1..1" <<<"$1"' "$orc" "$only"
echo "# drmacct-vm: end test_harness rc=$([ $fails = 0 ] && echo 0 || echo 1)"
