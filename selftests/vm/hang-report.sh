#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# hang-report.sh — where a guest that did not finish in time is.
#
#   hang-report.sh probe MONITOR
#	While QEMU still runs: asks its HMP monitor (-monitor pipe:MONITOR,
#	so the FIFOs MONITOR.in and MONITOR.out) for every vCPU's registers
#	and the 192 words above its kernel stack pointer, keeping the answers
#	in MONITOR.txt; then injects an NMI. The guest boots with
#	unknown_nmi_panic, so its kernel panics with its own backtrace on the
#	console, even when every CPU spins with interrupts disabled.
#   hang-report.sh show RAW CONSOLE KALLSYMS KVER MODDIR
#	Prints, per vCPU, RIP (symbolized), whether interrupts are on and
#	whether it is halted, and the kernel text addresses found on its
#	stack (a raw scan from RSP up, like the kernel's "? " frames: callers
#	and some stale words). KALLSYMS is the kernel's text symbols ("ADDR T
#	NAME", from any boot of the same kernel); KASLR moves the whole kernel
#	by one offset, which the "drmacct-vm: kernel text=ADDR" line the guest
#	init writes to the kernel log gives. Module addresses come from the
#	"drmacct-vm: module NAME text=ADDR" lines it writes before each
#	program, with the .text symbols of MODDIR/NAME.ko or of the installed
#	KVER module.
set -u
STACK_WORDS=192

probe() {
	local mon=$1 raw=$1.txt reader c rsp cpl
	[ -p "$mon.in" ] && [ -p "$mon.out" ] || { echo "hang-report: no monitor FIFOs at $mon.{in,out}" >&2; return 1; }
	# QEMU holds both FIFOs open read-write, so neither open blocks.
	timeout 60 cat "$mon.out" | stdbuf -oL tr -d '\r' >"$raw" &
	reader=$!
	exec 7>"$mon.in"
	send "info registers -a"
	cpus "$raw" | while read -r c _ rsp _ cpl _; do
		[ "$cpl" = 0 ] || continue
		send "cpu $c"
		send "x /${STACK_WORDS}gx 0x$rsp"
	done
	send "nmi"
	exec 7>&-
	sleep 1
	kill "$reader" 2>/dev/null
	wait "$reader" 2>/dev/null
	return 0
}

send() { echo "$*" >&7; sleep 1; }

cpus() { # cpus RAW: one line per vCPU, "N RIP RSP RFL CPL HLT"
	awk '
		/^CPU#[0-9]+/ { cpu = substr($1, 5) + 0 }
		{
			for (i = 1; i <= NF; i++) {
				split($i, kv, "=")
				if (kv[1] == "RIP") rip[cpu] = kv[2]
				if (kv[1] == "RSP") rsp[cpu] = kv[2]
				if (kv[1] == "RFL") rfl[cpu] = kv[2]
				if (kv[1] == "CPL") cpl[cpu] = kv[2]
				if (kv[1] == "HLT") hlt[cpu] = kv[2]
			}
		}
		END { for (c in rip) print c, rip[c], rsp[c], rfl[c], cpl[c], hlt[c] }
	' "$1" | sort -n
}

case "${1:-}" in
probe) shift; probe "$@"; exit ;;
show) shift ;;
*) echo "usage: hang-report.sh probe MONITOR | show RAW CONSOLE KALLSYMS KVER MODDIR" >&2; exit 2 ;;
esac
raw=$1 console=$2 kallsyms=$3 kver=$4 moddir=$5
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
cpus "$raw" >"$tmp/cpus"
if [ ! -s "$tmp/cpus" ]; then
	echo "hang-report: QEMU's monitor did not answer 'info registers' (see $raw)"
	exit 0
fi

# awk helpers for 64-bit addresses, which awk's doubles cannot hold: hex()
# of at most 8 digits, and hex8() to format one (mawk's printf %x stops at
# 2^31). Addresses are handled as high and low 32-bit halves.
HEX_AWK='
	function hex(s,   i, n) {
		n = 0
		for (i = 1; i <= length(s); i++)
			n = n * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
		return n
	}
	function hex8(n,   s, i, d) {
		s = ""
		for (i = 0; i < 8; i++) {
			d = n % 16
			s = substr("0123456789abcdef", d + 1, 1) s
			n = (n - d) / 16
		}
		return s
	}'

# Symbol table "ADDR NAME" (16 lowercase hex digits), kernel text first,
# moved by this boot's KASLR offset. Kernel text lies in the top 2 GiB
# below the modules, so only the low 32 bits ever change.
ktext=$(grep -o 'drmacct-vm: kernel text=0x[0-9a-f]*' "$console" 2>/dev/null | tail -n 1)
awk -v now="${ktext##*=0x}" "$HEX_AWK"'
	$2 ~ /^[tTwW]$/ && length($1) == 16 { a[++n] = tolower($1); name[n] = $3 }
	$3 == "_text" { base = tolower($1) }
	END {
		slide = 0
		if (now != "" && base != "")
			slide = hex(substr(now, 9)) - hex(substr(base, 9))
		for (i = 1; i <= n; i++)
			print substr(a[i], 1, 8) hex8(hex(substr(a[i], 9)) + slide), name[i]
	}' "$kallsyms" 2>/dev/null >"$tmp/syms"
grep -o 'drmacct-vm: module [^ ]* text=0x[0-9a-f]*' "$console" 2>/dev/null |
	awk '{ split($4, t, "="); base[$3] = substr(t[2], 3) } END { for (m in base) print m, base[m] }' |
	while read -r m base; do
		ko=$moddir/$m.ko
		[ -r "$ko" ] || ko=$(modinfo -k "$kver" -n "$m" 2>/dev/null) || continue
		case "$ko" in
		*.xz) xz -dc "$ko" >"$tmp/m.ko" 2>/dev/null && ko=$tmp/m.ko ;;
		*.zst) zstd -qdc "$ko" >"$tmp/m.ko" 2>/dev/null && ko=$tmp/m.ko ;;
		esac
		# .text symbols as offsets into the section; add the load address.
		objdump -t "$ko" 2>/dev/null | awk -v m="$m" -v base="$base" "$HEX_AWK"'
			NF >= 6 && $(NF - 2) == ".text" && $3 == "F" {
				# the low 32 bits of base + offset; modules sit below 4 GiB of
				# the top, so the high half is base'"'"'s
				lo = (hex(substr(base, 9)) + hex($1)) % 4294967296
				printf "%s%s %s [%s]\n", substr(base, 1, 8), hex8(lo), $NF, m
			}'
	done >>"$tmp/syms"

# The symbols once sorted by address, as "ADDR S NAME [MODULE]": symbolize
# merges its queries ("ADDR Q KEY") into them, a symbol before a query at
# the same address, and names each query after the symbol before it.
sed 's/^\([0-9a-f]*\) /\1 S /' "$tmp/syms" | LC_ALL=C sort -k1,1 -k2,2r >"$tmp/syms.sorted"

# symbolize: reads "KEY ADDR" lines, prints "KEY ADDR SYMBOL+0xOFF".
symbolize() {
	awk '{ print tolower($2), "Q", $1 }' | LC_ALL=C sort -k1,1 -k2,2r >"$tmp/q"
	LC_ALL=C sort -m -k1,1 -k2,2r "$tmp/syms.sorted" "$tmp/q" |
		awk "$HEX_AWK"'
		$2 == "S" { sa = $1; sn = $3; sm = NF > 3 ? " " $4 : ""; next }
		$2 == "Q" {
			name = "?"
			if (sn != "" && substr(sa, 1, 8) == substr($1, 1, 8)) {
				off = hex(substr($1, 9)) - hex(substr(sa, 9))
				if (off < 1048576)
					name = sprintf("%s+0x%x%s", sn, off, sm)
			}
			print $3, $1, name
		}' | sort -k1,1n
}

echo "where the guest was at the timeout (QEMU monitor; raw output in $raw):"
while read -r c rip rsp rfl cpl hlt; do
	flags=$(printf '%d' "0x$rfl" 2>/dev/null || echo 0)
	irq=off
	[ $((flags & 0x200)) != 0 ] && irq=on
	sym=$(echo "0 $rip" | symbolize | cut -d' ' -f3-)
	echo "cpu $c: RIP $rip $sym (CPL $cpl, interrupts $irq, halted $hlt)"
	[ "$cpl" = 0 ] || continue
	# Stack words from the x/gx lines inside [RSP, RSP + STACK_WORDS * 8), in
	# order; equal-width hex strings compare like the numbers.
	hi=$(printf '%016x' $((0x$rsp + STACK_WORDS * 8)))
	awk -v lo="$rsp" -v hi="$hi" '
		$1 ~ /^[0-9a-f]+:$/ {
			at = substr($1, 1, length($1) - 1)
			if (at < lo || at >= hi)
				next
			for (i = 2; i <= NF; i++) {
				w = substr($i, 3)
				if (w ~ /^ffffffff[89a-f]/ && !seen[w]++)
					print ++n, w
			}
		}' "$raw" | symbolize | awk '$3 != "?" { $1 = ""; print "   " $0 }' >"$tmp/stack"
	if [ -s "$tmp/stack" ]; then
		echo "  kernel text on its stack, innermost first:"
		cat "$tmp/stack"
	fi
done <"$tmp/cpus"
echo "an NMI was injected: the guest kernel's own backtrace is in $console"
