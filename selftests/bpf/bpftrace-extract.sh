#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# bpftrace-extract.sh RST OUTDIR — write each bpftrace one-liner of RST to
# OUTDIR/NAME.bt, so the VM test runs the documented text itself.
#
# A one-liner is the literal block after a ".. bpftrace: NAME" comment whose
# first line is "# bpftrace -e '..." (indented); the program is everything
# between the quotes, over as many lines as it takes, with the block's
# indentation removed. Fails when a named block has no program or its quote
# never closes, or when RST names no one-liner at all.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: bpftrace-extract.sh RST OUTDIR" >&2; exit 2; }
rst=$1 out=$2
mkdir -p "$out"
rm -f "$out"/*.bt
awk -v out="$out" '
function bad(msg) { printf "bpftrace-extract: %s:%d: %s\n", FILENAME, FNR, msg > "/dev/stderr"; err = 1; exit 1 }
/^\.\. bpftrace: / {
	if (name != "") bad("one-liner " name " has no \"# bpftrace -e \x27\" block")
	name = $3; n++; next
}
name != "" && !inprog && /^[ \t]+# bpftrace -e \x27/ {
	match($0, /^[ \t]+/); indent = RLENGTH
	line = $0; sub(/^[ \t]+# bpftrace -e \x27/, "", line)
	file = out "/" name ".bt"; inprog = 1; first = 1
}
inprog {
	if (!first) { line = $0; if (substr(line, 1, indent) ~ /^[ \t]*$/) line = substr(line, indent + 1) }
	first = 0
	if (line ~ /\x27$/) {
		sub(/\x27$/, "", line); print line > file; close(file)
		inprog = 0; name = ""; started = 0; next
	}
	if (line != "" || !started) { print line > file }
	started = 1; next
}
END {
	if (err) exit 1
	if (inprog) { printf "bpftrace-extract: %s: one-liner %s: the quote never closes\n", FILENAME, name > "/dev/stderr"; exit 1 }
	if (name != "") { printf "bpftrace-extract: %s: one-liner %s has no program\n", FILENAME, name > "/dev/stderr"; exit 1 }
	if (!n) { printf "bpftrace-extract: %s: no \".. bpftrace: NAME\" one-liner\n", FILENAME > "/dev/stderr"; exit 1 }
}' "$rst"
