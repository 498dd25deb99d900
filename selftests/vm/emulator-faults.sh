#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# emulator-faults.sh CONSOLE [STRIPPED] — find kernel reports in a guest's console log
# that only an emulator fault can cause, so the log check can set them aside
# and name them instead of failing on them.
#
# One kind is recognised: a "WARNING: ... exc_debug_kernel" (a single-step
# debug trap taken in kernel mode) whose interrupted context, the register
# dump after "<#DB>", has an EFLAGS with reserved bits set (bits 3, 5, 15,
# 22-63). No x86 CPU holds such a value and no instruction can load one
# (POPF, IRET and SYSRET drop those bits), so the flags, TF among them,
# were not the kernel's: QEMU 7.2's TCG produced them. Seen once under TCG
# (6.12 guest, EFLAGS 4150a742 equal to RDI's low half with IF set, after a
# CMPXCHG16B in kmem_cache_alloc_lru). A trap with architecturally valid
# flags is not recognised: it stays a failure, as a stray kprobe
# single-step would be.
#
# Prints one line per recognised report:
#   FIRST LAST EFLAGS RESERVED WARNING-TEXT
# where FIRST..LAST are the report's line numbers in CONSOLE (from "cut
# here" to "end trace") and RESERVED the reserved bits that were set (hex).
# With STRIPPED, also writes CONSOLE without those reports there.
set -u
console=$1 stripped=${2:-}
if [ ! -r "$console" ]; then
	[ -z "$stripped" ] || : >"$stripped"
	exit 0
fi
# mawk has no strtonum and no 64-bit integers: the value is checked as hex
# digits, the high 32 bits for any digit but 0, the low 32 bits per bit.
found=$(awk '
function hexval(s,    i, v) {
	v = 0
	for (i = 1; i <= length(s); i++)
		v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
	return v
}
function reserved(s,    hi, lo, v, bits, i, r) {
	s = tolower(s)
	while (length(s) < 16)
		s = "0" s
	hi = substr(s, 1, 8)
	lo = substr(s, 9, 8)
	v = hexval(lo)
	r = 0
	split("3 5 15 22 23 24 25 26 27 28 29 30 31", bits, " ")
	for (i in bits)
		if (int(v / 2 ^ bits[i]) % 2)
			r += 2 ^ bits[i]
	if (hi != "00000000")
		return sprintf("%s%08x", hi, r)
	return r ? sprintf("%x", r) : ""
}
function reset() { first = 0; warn = ""; indb = 0; flags = ""; seen_rip = 0 }
BEGIN { reset() }
{ sub(/\r$/, "") }
/------------\[ cut here \]------------/ { reset(); first = NR; next }
first && /WARNING: .* exc_debug_kernel/ { w = $0; sub(/^.*WARNING: /, "WARNING: ", w); warn = w }
first && /<#DB>/ { indb = 1 }
first && indb && flags == "" && /RIP: / { seen_rip = 1 }
first && indb && flags == "" && /EFLAGS: / && seen_rip {
	f = $0
	sub(/^.*EFLAGS: /, "", f)
	sub(/[^0-9a-fA-F].*$/, "", f)
	flags = f
}
first && /---\[ end trace/ {
	if (warn != "" && flags != "") {
		r = reserved(flags)
		if (r != "")
			printf "%d %d %s %s %s\n", first, NR, flags, r, warn
	}
	reset()
}
' "$console")
[ -z "$found" ] || echo "$found"
if [ -n "$stripped" ]; then
	if [ -n "$found" ]; then
		sed "$(while read -r a b _; do printf '%s,%sd;' "$a" "$b"; done <<<"$found")" \
			"$console" >"$stripped"
	else
		cp "$console" "$stripped"
	fi
fi
