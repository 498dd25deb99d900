#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# test_runner.sh VMLINUZ INITRD LOG — the VM runner's own failure paths.
#
# 1. A failing guest test fails the run, and the summary names it.
# 2. A guest that hangs is killed at the timeout with a clear message, and
#    the report says where each vCPU was, symbolized.
# 3. A module that triggers a kernel WARNING fails the run, and the WARNING
#    lines are shown.
# 4. A guest frozen with every CPU spinning with interrupts off is reported
#    in the function it spins in, on every vCPU.
# 5. Live kernel text patching of code every CPU runs does not freeze the
#    guest (it does under QEMU 7.2's multi-threaded TCG).
# 6. The helper's capacity warning: a driver that starts more of a
#    client's jobs on an engine than its capacity gets a WARNING naming the
#    engine, which fails the run like any other.
# On a debug kernel (its config-RELEASE beside the image enables them):
# 7. A module taking two locks in both orders fails the run on the
#    vm-lockdep-clean line, with lockdep's report shown.
# 8. A module leaking allocations fails the run on the vm-kmemleak-clean
#    line, with kmemleak's report (naming the module's function) shown.
# RUNNER_CHECKS="fail hang warn freeze patching capacity lockdep kmemleak"
# picks checks by name (default: all this kernel can run); `make
# test-debug` runs "fail warn lockdep kmemleak", the ones whose boots stay
# well inside their timeouts on the slow debug kernel.
# Output is TAP, framed for tap-summary.sh, to stdout and LOG.
set -u
kernel=$1 initrd=$2 log=$3
kver=$(basename "$kernel"); kver=${kver#vmlinuz-}
kconfig=$(dirname "$kernel")/config-$kver
all="fail hang warn freeze patching capacity"
grep -qs '^CONFIG_PROVE_LOCKING=y' "$kconfig" && all="$all lockdep"
grep -qs '^CONFIG_DEBUG_KMEMLEAK=y' "$kconfig" && all="$all kmemleak"
checks=${RUNNER_CHECKS:-$all}
want() { case " $checks " in *" $1 "*) return 0 ;; esac; return 1; }
plan=0
for c in $checks; do
	case "$c" in
	hang) plan=$((plan + 2)) ;;
	fail|warn|freeze|patching|capacity|lockdep|kmemleak) plan=$((plan + 1)) ;;
	*) echo "test_runner: unknown check $c" >&2; exit 2 ;;
	esac
done
here=$(cd "$(dirname "$0")" && pwd)
run_vm=$here/run-vm.sh
summary=$here/../tap-summary.sh
work=$(dirname "$log")/runner
mkdir -p "$work"
: >"$log"
n=0
say() { echo "$*" | tee -a "$log"; }
check() { # check NAME CONDITION-STATUS DETAILFILE
	n=$((n + 1))
	if [ "$2" = 0 ]; then
		say "ok $n $1"
	else
		sed 's/^/# /' "$3" | tail -n 25 | tee -a "$log"
		say "not ok $n $1"
	fi
}

# selfcheck_run NAME PROGRAM [run-vm args...]: boots the guest running one
# selfcheck program; sets out, vm_rc and sum_rc (the summary's exit status,
# its output in $out.summary and appended to $out).
selfcheck_run() {
	local name=$1 prog=$2
	shift 2
	out=$work/$name.out
	"$run_vm" --kernel "$kernel" --initrd "$initrd" --mode test --timeout 300 \
		--testdir /opt/drmacct/selfcheck --only "$prog" "$@" --log "$work/$name" >"$out" 2>&1
	vm_rc=$?
	"$summary" --kernel "$kver" "$work/$name/serial.log" "$work/$name/vm-run.tap" >"$out.summary" 2>&1
	sum_rc=$?
	cat "$out.summary" >>"$out"
}

say "# drmacct-vm: begin test_runner"
say "TAP version 13"
say "1..$plan"

# 1. failing guest test
if want fail; then
selfcheck_run fail test_must_fail
ok=1
# vm-setup / vm-run blocks pass too, so check counts by name rather than totals.
if [ "$vm_rc" = 1 ] && [ "$sum_rc" = 1 ] &&
   grep -qx 'FAIL: test_must_fail: fails_on_purpose' "$out.summary" &&
   [ "$(grep -c '^FAIL' "$out.summary")" = 1 ] &&
   grep -q '^ok [0-9]* passes_on_purpose' "$work/fail/serial.log"; then
	ok=0
fi
check "failing guest test fails the run and is named" $ok "$out"
fi

# 2. hung guest
if want hang; then
out=$work/hang.out
"$run_vm" --kernel "$kernel" --initrd "$initrd" --mode hang --timeout 40 \
	--log "$work/hang" >"$out" 2>&1
vm_rc=$?
ok=1
if [ "$vm_rc" = 124 ] && grep -q 'TIMEOUT: the guest was still running after 40s and was killed' "$out" &&
   grep -q '^# drmacct-vm: hanging on purpose' "$work/hang/serial.log" &&
   ! grep -lsF "$work/hang/console.log" /proc/[0-9]*/cmdline >/dev/null; then
	ok=0
fi
check "hung guest is killed at the timeout with a clear message" $ok "$out"

# 2b. ... and the report says where each vCPU was: a symbolized RIP for
# every vCPU, and since this guest idles, the kernel's idle loop on a
# halted vCPU's stack; and the NMI made the guest kernel print its own
# backtrace.
ok=1
smp=${VM_SMP:-2}
rep=$work/hang/hang-report.txt
if [ "$(grep -cE '^cpu [0-9]+: RIP [0-9a-f]{16} [a-z_0-9.]+\+0x[0-9a-f]+( \[[a-z_0-9]+\])? \(CPL [0-3], ' "$rep")" = "$smp" ] &&
   grep -qE '^cpu [0-9]+: .*\(CPL 0, interrupts on, halted 1\)$' "$rep" &&
   grep -qE '^    [0-9a-f]{16} do_idle\+0x' "$rep" &&
   grep -q 'NMI received for unknown reason' "$work/hang/console.log" &&
   grep -q 'Kernel panic - not syncing: NMI' "$work/hang/console.log"; then
	ok=0
fi
check "hung guest's report names each vCPU's place in the kernel" $ok "$work/hang/hang-report.txt"
fi

# 3. kernel WARNING: in console.log, in the guest's own kernel log (read
# over ttyS0 at its end) and in its taint flags (W), each named.
if want warn; then
selfcheck_run warn test_passes --mods dt_warn:trigger=1
ok=1
if [ "$vm_rc" = 1 ] && [ "$sum_rc" = 1 ] &&
   grep -q '^ok [0-9]* guest_kernel_is_the_target' "$work/warn/serial.log" &&
   grep -qx 'FAIL: vm-run: vm-kernel-log-clean' "$out.summary" &&
   [ "$(grep -c '^FAIL' "$out.summary")" = 1 ] &&
   grep -q '^#   .*WARNING:.*dt_warn' "$out" &&
   grep -q 'deliberate warning for the runner self-test' "$out" &&
   grep -q "^# the guest's own kernel log, read after its last program, has errors" "$out" &&
   grep -qE '^# the guest kernel is tainted [0-9]+: W \(a warning\)' "$out"; then
	ok=0
fi
check "kernel WARNING fails the run and its lines are shown" $ok "$out"
fi

# 4. frozen guest: every CPU spins with interrupts off (dt_warn's freeze),
# so no soft-lockup or RCU-stall report can come and the heartbeat stops;
# the report must still put every vCPU in the spinning function, with
# interrupts off, and the NMI must get the guest kernel's own backtrace.
if want freeze; then
selfcheck_run freeze test_freeze --mods dt_warn --timeout 40
ok=1
rep=$work/freeze/hang-report.txt
if [ "$vm_rc" = 124 ] &&
   [ "$(grep -cE '^cpu [0-9]+: RIP [0-9a-f]{16} dt_warn_freeze_cpu\+0x[0-9a-f]+ \[dt_warn\] \(CPL 0, interrupts off, halted 0\)$' \
	"$rep")" = "$smp" ] &&
   grep -qE '^    [0-9a-f]{16} dt_warn_freeze_set\+0x[0-9a-f]+ \[dt_warn\]$' "$rep" &&
   grep -q 'RIP: 0010:dt_warn_freeze_cpu' "$work/freeze/console.log"; then
	ok=0
fi
check "frozen guest (all CPUs spinning, interrupts off) is reported where it spins" $ok "$rep"
fi

# 5. live kernel text patching of code every CPU runs (sched_switch's jump
# label in __schedule) does not freeze the guest: multi-threaded TCG in
# QEMU 7.2 does, within seconds (a stale int3 translation), which is why
# the runner uses single-threaded TCG.
if want patching; then
selfcheck_run patching test_text_patching --timeout 150
ok=1
if [ "$vm_rc" = 0 ] && [ "$sum_rc" = 0 ] &&
   grep -qE '^ok [0-9]+ toggle_sched_switch_under_load$' "$work/patching/serial.log"; then
	ok=0
fi
check "live text patching of __schedule under load does not freeze the guest" $ok "$out"
fi

# 6. more of one client's jobs running than the engine's capacity
if want capacity; then
selfcheck_run capacity test_passes --mods drmacct_test:run_at_load=capacity_warn
ok=1
if [ "$vm_rc" = 1 ] && [ "$sum_rc" = 1 ] &&
   grep -qx 'FAIL: vm-run: vm-kernel-log-clean' "$out.summary" &&
   [ "$(grep -c '^FAIL' "$out.summary")" = 1 ] &&
   grep -q '^#   .*WARNING:.*drmacct' "$out" &&
   grep -q '2 jobs of client [0-9]* running on t:gfx of capacity 1' "$out"; then
	ok=0
fi
check "more running jobs than an engine's capacity WARN and fail the run" $ok "$out"
fi

# 7. lock inversion: lockdep's report fails the run on its own line (and
# on vm-kernel-log-clean, as every WARNING does), and the report is shown.
if want lockdep; then
selfcheck_run lockdep test_passes --mods dt_warn:lockorder=1
ok=1
if [ "$vm_rc" = 1 ] && [ "$sum_rc" = 1 ] &&
   grep -q '^ok [0-9]* guest_kernel_is_the_target' "$work/lockdep/serial.log" &&
   grep -qx 'FAIL: vm-run: vm-lockdep-clean' "$out.summary" &&
   grep -qx 'FAIL: vm-run: vm-kernel-log-clean' "$out.summary" &&
   [ "$(grep -c '^FAIL' "$out.summary")" = 2 ] &&
   grep -q '^#   .*WARNING: possible circular locking dependency detected' "$out" &&
   grep -q '^#   .*dt_warn_lock_[ab]' "$out"; then
	ok=0
fi
check "two locks taken in both orders: lockdep's report fails the run and is shown" $ok "$out"
fi

# 8. leaked allocations: the guest's kmemleak scan after the programs finds
# them, and the vm-kmemleak-clean line fails with the report, whose
# backtrace names the leaking function.
if want kmemleak; then
selfcheck_run kmemleak test_passes --mods dt_warn:leak=1
ok=1
if [ "$vm_rc" = 1 ] && [ "$sum_rc" = 1 ] &&
   grep -q '^ok [0-9]* guest_kernel_is_the_target' "$work/kmemleak/serial.log" &&
   grep -qx 'FAIL: vm-run: vm-kmemleak-clean' "$out.summary" &&
   [ "$(grep -c '^FAIL' "$out.summary")" = 1 ] &&
   grep -q '^#   .*kmemleak: unreferenced object 0x[0-9a-f]* (size 96)' "$out" &&
   grep -q '^#   .*kmemleak: .*dt_warn_leak' "$out"; then
	ok=0
fi
check "leaked allocations: kmemleak's report fails the run and is shown" $ok "$out"
fi

say "# drmacct-vm: end test_runner rc=0"
