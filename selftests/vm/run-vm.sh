#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# run-vm.sh — boot the target kernel in QEMU and run one guest job.
#
#   run-vm.sh --kernel VMLINUZ --initrd CPIO --mode test|run|bench|shell|hang
#             [--only prog,prog] [--testdir DIR] [--mods m:p=v,...] [--repeat N]
#             [--env K=V,...]
#             [--timeout SECONDS] [--log DIR] [--tap FILE] [--expect "prog..."]
#             [--label NAME]
#
# ttyS0 carries the guest's output (and TAP), tee'd to LOG/serial.log;
# ttyS1 is the kernel console, kept whole in LOG/console.log. The guest
# reports completion through isa-debug-exit. A guest still running at the
# timeout is killed, and the run says so. Afterwards the kernel log is
# checked for BUG/WARNING/Oops/call traces/lockdep/RCU stalls, and so are
# the guest's own kernel log and taint flags, which it prints on ttyS0 at
# its end; any of those fails the run and the lines are printed (a report only an emulator fault
# can cause is named and set aside: emulator-faults.sh). With --expect, every named guest
# program must have run to its end, so a guest that silently ran fewer
# programs than were built fails too. With --label (the kernel release, in
# `make test`), every program block and TAP line in the --tap file carries
# NAME, so a summary over several kernels says which one failed. Before a timed-out guest is killed,
# hang-report.sh asks QEMU's monitor where every vCPU is (symbolized RIP and
# stack) and NMIs the guest, whose kernel
# then panics with its own backtrace (unknown_nmi_panic): a frozen guest
# says where it froze. The report goes to LOG/hang-report.txt and stderr.
#
# TCG runs single-threaded (VM_TCG_THREAD=single, the default): QEMU 7.2's
# multi-threaded TCG can keep a stale translation of the int3 that the
# kernel's text_poke_bp() writes while patching code another vCPU runs, and
# that vCPU then traps on it for ever (kprobes sees the original byte back
# and retries) with the runqueue lock held: the guest freezes silently.
# Enabling any trace event or attaching BPF patches __schedule(); this froze
# test_close about once in a hundred runs. VM_TCG_THREAD=multi brings it back.
#
# Environment: VM_ACCEL=tcg (default) or kvm (falls back to TCG when the
# guest does not reach /init within VM_KVM_BOOT_TIMEOUT seconds, default 30),
# VM_MEM (default 2G), VM_SMP (default 2), VM_APPEND (extra kernel args),
# VM_TCG_THREAD (single or multi).
# Exit status: 0 completed and clean, 1 completed but TAP failures or a dirty
# kernel log, 2 usage error, 3 guest did not complete, 124 timeout.
set -uo pipefail

kernel= initrd= mode=test only= testdir= mods= repeat= timeout=900 log=build/vm/run tap= expect=
label= env=
while [ $# -gt 0 ]; do
	case "$1" in
	--kernel) kernel=$2 ;;
	--initrd) initrd=$2 ;;
	--mode) mode=$2 ;;
	--only) only=$2 ;;
	--testdir) testdir=$2 ;;
	--mods) mods=$2 ;;
	--repeat) repeat=$2 ;;
	--timeout) timeout=$2 ;;
	--log) log=$2 ;;
	--tap) tap=$2 ;;
	--expect) expect=$2 ;;
	--label) label=$2 ;;
	--env) env=$2 ;;
	*) echo "run-vm: unknown argument $1" >&2; exit 2 ;;
	esac
	shift 2 || { echo "run-vm: $1 needs a value" >&2; exit 2; }
done
[ -r "$kernel" ] || { echo "run-vm: kernel '$kernel' not readable" >&2; exit 2; }
[ -r "$initrd" ] || { echo "run-vm: initrd '$initrd' not readable" >&2; exit 2; }
case "$mode" in test|run|bench|shell|hang|kallsyms) ;; *) echo "run-vm: bad --mode $mode" >&2; exit 2 ;; esac
case "$timeout" in ''|*[!0-9]*) echo "run-vm: --timeout wants seconds" >&2; exit 2 ;; esac
case "$repeat" in *[!0-9]*|0*) echo "run-vm: --repeat wants a count >= 1" >&2; exit 2 ;; esac
case "$label" in *[!A-Za-z0-9._+-]*) echo "run-vm: --label wants [A-Za-z0-9._+-]" >&2; exit 2 ;; esac

mkdir -p "$log"
serial=$log/serial.log
console=$log/console.log
here=$(cd "$(dirname "$0")" && pwd)

append="console=ttyS1 loglevel=7 panic=-1 printk.time=1 unknown_nmi_panic dmode=$mode"
[ -n "$only" ] && append="$append donly=$only"
[ -n "$testdir" ] && append="$append dtestdir=$testdir"
[ -n "$mods" ] && append="$append dmods=$mods"
[ -n "$repeat" ] && append="$append drepeat=$repeat"
case "$env" in *[[:space:]]*) echo "run-vm: --env wants K=V[,K=V] without spaces" >&2; exit 2 ;; esac
[ -n "$env" ] && append="$append denv=$env"
append="$append ${VM_APPEND:-}"

kver=$(basename "$kernel"); kver=${kver#vmlinuz-}
moddir=${VM_MODDIR:-build/k/$kver/modules}
kallsyms=${VM_KALLSYMS:-build/k/$kver/kallsyms.txt}

watchdog() { # watchdog SECONDS: then probe where the guest is and kill it
	local s
	trap 'kill "$s" 2>/dev/null; exit 0' TERM
	sleep "$1" & s=$!
	wait "$s"
	: >"$log/timed-out"
	"$here/hang-report.sh" probe "$log/monitor" 2>>"$log/monitor.txt"
	# The NMI panics the guest, which then exits; give its console time.
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		kill -0 "$(cat "$log/qemu.pid" 2>/dev/null)" 2>/dev/null || exit 0
		sleep 1
	done
	kill -KILL "$(cat "$log/qemu.pid")" 2>/dev/null
	exit 0
}

hang_report() { # after a timeout: LOG/hang-report.txt, symbolized
	if [ ! -s "$kallsyms" ] && [ "$mode" != kallsyms ]; then
		echo "run-vm: booting once more to read this kernel's symbols for the report"
		"$0" --kernel "$kernel" --initrd "$initrd" --mode kallsyms --timeout 180 \
			--log "$log/kallsyms" >/dev/null 2>&1
		mkdir -p "$(dirname "$kallsyms")"
		sed -n '/^# drmacct-vm: kallsyms begin/,/^# drmacct-vm: kallsyms end/p' \
			"$log/kallsyms/serial.log" | grep -v '^#' >"$kallsyms.tmp.$$" &&
			[ -s "$kallsyms.tmp.$$" ] && mv "$kallsyms.tmp.$$" "$kallsyms"
		rm -f "$kallsyms.tmp.$$"
	fi
	"$here/hang-report.sh" show "$log/monitor.txt" "$console" "$kallsyms" "$kver" \
		"$moddir" >"$log/hang-report.txt" 2>&1
}

boot() { # boot ACCEL LIMIT: runs QEMU, returns its status (124 on timeout)
	local accel=$1 limit=$2 cpu=max
	[ "$accel" = tcg ] && accel=tcg,thread=${VM_TCG_THREAD:-single}
	rm -f "$log/monitor.in" "$log/monitor.out" "$log/monitor.txt" "$log/timed-out" \
		"$log/hang-report.txt"
	mkfifo "$log/monitor.in" "$log/monitor.out" || return 3
	local qemu=(qemu-system-x86_64 -accel "$accel" -cpu "$cpu" -m "${VM_MEM:-2G}"
		-smp "${VM_SMP:-2}" -nodefaults -display none -no-reboot
		-kernel "$kernel" -initrd "$initrd" -append "$append"
		-serial stdio -serial "file:$console"
		-monitor "pipe:$log/monitor" -pidfile "$log/qemu.pid"
		-device isa-debug-exit,iobase=0xf4,iosize=0x04
		-device edu)
	: >"$serial"
	if [ "$mode" = shell ]; then
		"${qemu[@]}"
		return $?
	fi
	# The watchdog reports and kills at LIMIT; timeout(1) is the backstop
	# should the report itself hang.
	local to=() wd=
	if [ "$limit" -gt 0 ]; then
		to=(timeout -s KILL $((limit + 90)))
		watchdog "$limit" &
		wd=$!
	fi
	"${to[@]}" "${qemu[@]}" </dev/null | stdbuf -oL tr -d '\r' | tee "$serial"
	local rc=${PIPESTATUS[0]}
	if [ -n "$wd" ]; then
		kill "$wd" 2>/dev/null
		wait "$wd" 2>/dev/null
	fi
	rm -f "$log/monitor.in" "$log/monitor.out"
	[ "$rc" = 137 ] && [ "$limit" -gt 0 ] && rc=124
	[ -e "$log/timed-out" ] && rc=124
	return "$rc"
}

start=$(date +%s)
accel=${VM_ACCEL:-tcg}
if [ "$accel" = kvm ]; then
	if [ -w /dev/kvm ]; then
		boot kvm "${VM_KVM_BOOT_TIMEOUT:-30}"
		rc=$?
		if grep -q '^# drmacct-vm: init' "$serial" && [ "$rc" != 124 ]; then
			accel=done
		else
			echo "run-vm: KVM guest did not reach /init in ${VM_KVM_BOOT_TIMEOUT:-30}s; retrying with TCG"
		fi
	else
		echo "run-vm: /dev/kvm not usable; using TCG"
	fi
fi
if [ "$accel" != done ]; then
	boot tcg "$timeout"
	rc=$?
fi
elapsed=$(($(date +%s) - start))

status=0
verdict=
if [ "$rc" = 124 ]; then
	hang_report
	verdict="TIMEOUT: the guest was still running after ${timeout}s and was killed"
	status=124
elif [ "$rc" = 1 ] && grep -q '^# drmacct-vm: done status=0' "$serial"; then
	verdict="completed in ${elapsed}s"
else
	verdict="guest did not complete (QEMU exit status $rc after ${elapsed}s)"
	status=3
fi

# Kernel log check. The console has the whole kernel log (loglevel=7).
pattern='BUG:|WARNING:|Oops|Call Trace|general protection fault|Kernel panic|'
# Lockdep's reports, not the word: a lockdep kernel's boot says "RCU lockdep
# checking is enabled".
pattern+='possible circular locking|inconsistent lock state|lockdep is turned off|'
pattern+='DEBUG_LOCKS_WARN_ON|'
pattern+='rcu_sched self-detected stall|rcu: INFO:|RCU stall|detected stall|'
pattern+='blocked for more than|UBSAN:|KASAN:|kernel BUG'
# Reports only an emulator fault can cause (emulator-faults.sh) are set
# aside: named in the TAP output, not counted as errors. Everything else in
# the log is checked as it is.
checked=$log/console.checked
faults=$("$(dirname "$0")/emulator-faults.sh" "$console" "$checked")
bad=$(grep -nE "$pattern" "$checked" 2>/dev/null || true)

# The guest's own account (guest/init, kernel_report): its taint flags and
# its kernel log, read from the log buffer after the last program, over
# ttyS0. A report there that console.log lacks (an RT kernel's console
# thread never flushed it, it came in the last moments) fails the run as
# one in console.log does, and so do the taint flags W (a warning), D (an
# oops) and L (a soft lockup), which stay set when the report itself
# scrolled away. A guest that reached its end without that account (no
# flags, a log it could not read) is not clean either. Modes that end
# elsewhere (hang, shell, kallsyms) give none.
kmsg=$log/kmsg.log
sed -n 's/^# kmsg: //p' "$serial" >"$kmsg"
kmsg_faults=$("$(dirname "$0")/emulator-faults.sh" "$kmsg" "$kmsg.checked")
taint=$(sed -n 's/^# drmacct-vm: tainted=//p' "$serial" | tail -n 1)
guest_bad=
if [ "$status" = 0 ] && [ "$mode" != kallsyms ]; then
	if ! grep -q '^# drmacct-vm: kmsg end' "$serial" || [ -z "$taint" ]; then
		guest_bad="the guest printed no kernel report (taint flags and log) before its end"
	elif grep -q '^# drmacct-vm: kmsg unreadable' "$serial"; then
		guest_bad="the guest could not read its kernel log"
	elif [ "$taint" = unreadable ]; then
		guest_bad="the guest could not read /proc/sys/kernel/tainted"
	else
		# W (bit 9) set only by a report set aside as an emulator fault
		# is that report's, and named with it.
		tw=$((taint & 512)) td=$((taint & 128)) tl=$((taint & 16384))
		[ -n "$faults$kmsg_faults" ] && tw=0
		if [ "$tw" != 0 ] || [ "$td" != 0 ] || [ "$tl" != 0 ]; then
			guest_bad="the guest kernel is tainted $taint:"
			[ "$tw" != 0 ] && guest_bad+=" W (a warning)"
			[ "$td" != 0 ] && guest_bad+=" D (an oops)"
			[ "$tl" != 0 ] && guest_bad+=" L (a soft lockup)"
		fi
	fi
fi
kmsg_bad=$(grep -nE "$pattern" "$kmsg.checked" 2>/dev/null || true)

# On a debug kernel (its config, beside the image as config-RELEASE, enables
# the checker), every report class is a TAP line of its own, failed with the
# report's first lines: lockdep (and the spinlock/RCU checks that report
# with it), KASAN, kmemleak (the guest scans after the programs and copies
# the result into the kernel log), debug objects, sleeping in atomic
# context, UBSAN. A checker that switched itself off (kmemleak's pool ran
# out, lockdep hit a table limit) fails its line too: it checked nothing
# after that. Debian's kernels enable none of these, so they add no lines.
kconfig=$(dirname "$kernel")/config-$kver
classes=(
	"lockdep|CONFIG_PROVE_LOCKING|(WARNING|BUG|INFO): (possible [a-z ]*(locking|lock inversion)|inconsistent lock state|bad unlock balance|bad contention|held lock freed|Nested lock was not taken|suspicious RCU usage|lock held when returning|MAX_LOCKDEP|[A-Z]+-safe -> [A-Z]+-unsafe|.* still has locks held|trying to register non-static key|key [0-9a-fx]+ has not been registered|spinlock (bad magic|already unlocked|wrong owner|recursion|lockup))|DEBUG_LOCKS_WARN_ON|WARNING: .* at kernel/locking/"
	"kasan|CONFIG_KASAN|BUG: KASAN: "
	"kmemleak|CONFIG_DEBUG_KMEMLEAK|drmacct-vm: kmemleak: unreferenced object|kmemleak: (Memory pool empty|Cannot allocate|Kernel memory leak detector disabled)"
	"debug-objects|CONFIG_DEBUG_OBJECTS|ODEBUG: .*(object|Out of memory)"
	"atomic-sleep|CONFIG_DEBUG_ATOMIC_SLEEP|BUG: (sleeping function called from invalid context|scheduling while atomic|workqueue leaked atomic|using [a-z_]+\\(\\) in preemptible)"
	"ubsan|CONFIG_UBSAN|UBSAN: "
)
class_tap=() class_failed=0
for c in "${classes[@]}"; do
	name=${c%%|*} rest=${c#*|}
	opt=${rest%%|*} re=${rest#*|}
	grep -qs "^$opt=y" "$kconfig" || continue
	hits=$(grep -E "$re" "$console" 2>/dev/null)
	line="vm-$name-clean"
	if [ -z "$hits" ] && [ "$name" = kmemleak ] && [ "$mode" = test ] && [ "$status" = 0 ] &&
	   ! grep -q 'drmacct-vm: kmemleak scan done' "$console"; then
		class_tap+=("# kmemleak: the guest never scanned (no 'kmemleak scan done' in $console)"
			"not ok @ $line")
		class_failed=1
	elif [ -z "$hits" ]; then
		class_tap+=("ok @ $line")
	else
		class_tap+=("# $name: $(echo "$hits" | wc -l) report line(s); the first report:")
		while IFS= read -r l; do class_tap+=("#   $l"); done < <(
			grep -m1 -E -A14 "$re" "$console")
		if [ "$(echo "$hits" | wc -l)" -gt 1 ]; then
			class_tap+=("# $name: every report's first line (up to 10):")
			while IFS= read -r l; do class_tap+=("#   $l"); done < <(echo "$hits" | head -n 10)
		fi
		class_tap+=("not ok @ $line")
		class_failed=1
	fi
done
nclass=0
for l in "${class_tap[@]}"; do case "$l" in ok*|'not ok'*) nclass=$((nclass + 1)) ;; esac; done

missing=
for p in $expect; do
	grep -q "^# drmacct-vm: end $p rc=" "$serial" || missing="$missing $p"
done

{
	echo "# drmacct-vm: begin vm-run"
	echo "TAP version 13"
	echo "1..$((3 + nclass))"
	if [ "$status" = 0 ]; then
		echo "ok 1 vm-complete # $verdict"
	else
		echo "# $verdict"
		[ -s "$log/hang-report.txt" ] && sed 's/^/#   /' "$log/hang-report.txt"
		echo "not ok 1 vm-complete"
	fi
	while read -r a b flags res warn; do
		[ -n "$a" ] || continue
		echo "# emulator fault set aside ($console lines $a-$b): $warn"
		echo "#   the trapped context's EFLAGS $flags has reserved bits $res set, which no x86 CPU holds"
	done <<<"$faults"
	while read -r a b flags res warn; do
		[ -n "$a" ] || continue
		echo "# emulator fault set aside (the guest's kernel log, $kmsg lines $a-$b): $warn"
	done <<<"$kmsg_faults"
	if [ -z "$bad$kmsg_bad$guest_bad" ]; then
		echo "ok 2 vm-kernel-log-clean # console, guest log and taint flags ($taint)"
	else
		# show_hits FILE: each hit with a little context, as TAP comments
		show_hits() { grep -nE -B2 -A12 "$pattern" "$1" | head -n 200 | sed 's/^/#   /'; }
		if [ -n "$bad" ]; then
			echo "# the guest kernel log has errors ($checked: $console less what is set aside):"
			show_hits "$checked"
		fi
		if [ -n "$kmsg_bad" ]; then
			echo "# the guest's own kernel log, read after its last program, has errors ($kmsg):"
			show_hits "$kmsg.checked"
		fi
		[ -n "$guest_bad" ] && echo "# $guest_bad"
		echo "not ok 2 vm-kernel-log-clean"
	fi
	if [ -z "$missing" ]; then
		echo "ok 3 vm-all-programs-ran"
	else
		echo "# these guest programs never finished:$missing"
		echo "not ok 3 vm-all-programs-ran"
	fi
	i=3
	for l in "${class_tap[@]}"; do
		case "$l" in
		ok*|'not ok'*) i=$((i + 1)); echo "${l/@/$i}" ;;
		*) echo "$l" ;;
		esac
	done
	echo "# drmacct-vm: end vm-run rc=$status"
} >"$log/vm-run.tap"
cat "$log/vm-run.tap"
if [ "$status" != 0 ]; then
	echo "run-vm: $verdict" >&2
	if [ -s "$log/hang-report.txt" ]; then
		echo "run-vm: $(cat "$log/hang-report.txt")" >&2
	fi
	echo "run-vm: last kernel console lines ($console):" >&2
	tail -n 60 "$console" >&2
fi

if [ -n "$tap" ]; then
	if [ -n "$label" ]; then
		cat "$serial" "$log/vm-run.tap" | sed -E \
			-e "s%^(# drmacct-vm: (begin|end) )%\\1$label/%" \
			-e "s%^((not )?ok [0-9]+ )%\\1$label: %" >"$tap"
	else
		cat "$serial" "$log/vm-run.tap" >"$tap"
	fi
fi
[ "$status" != 0 ] && exit "$status"
[ -n "$bad$kmsg_bad$guest_bad" ] || [ -n "$missing" ] && exit 1
[ "$class_failed" = 1 ] && exit 1
if [ "$mode" = test ]; then
	"$here/../tap-summary.sh" --kernel "$kver" "$serial" "$log/vm-run.tap" >/dev/null || exit 1
fi
exit 0
