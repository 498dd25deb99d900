#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# tap-summary.sh LOG... — count TAP results across framed logs.
#
# Logs hold blocks "# drmacct-vm: begin NAME" ... "# drmacct-vm: end NAME rc=N"
# (from the guest and from the host runners). Inside a block, "ok" lines
# pass, "ok ... # SKIP" lines skip, "not ok" lines fail. A program that
# exited with a status other than 0 (pass) or 4 (skip) without a "not ok"
# line fails once more (it crashed or was killed); a block that never ended
# fails (the VM died or timed out under it). Prints every failure by name and
# ends with the line "N passed, N failed, N skipped". Exit 1 when anything
# failed or nothing ran.
set -u
[ $# -gt 0 ] || { echo "usage: tap-summary.sh LOG..." >&2; exit 2; }
awk '
function flush_open(why) {
	if (cur != "") {
		fail++
		failures[++nf] = cur ": " why
		cur = ""
	}
}
FNR == 1 && NR > 1 { flush_open("log ended inside this program") }
{ sub(/\r$/, "") }
/^# drmacct-vm: begin / {
	flush_open("did not finish (the VM died or timed out while it ran)")
	cur = $4; curfails = 0
	next
}
/^# drmacct-vm: end / {
	name = $4; rc = $5; sub(/^rc=/, "", rc)
	if (cur == name && rc != 0 && rc != 4 && curfails == 0) {
		fail++
		failures[++nf] = name ": exited with status " rc " without a failing test line"
	}
	cur = ""
	next
}
/^not ok / {
	if ($0 ~ /# *TODO/) next
	fail++; curfails++
	t = $0; sub(/^not ok [0-9]+ */, "", t)
	# A labelled block (LABEL/prog) has labelled lines (LABEL: test).
	if (cur ~ /\//) {
		lab = cur; sub(/\/.*/, "", lab)
		if (index(t, lab ": ") == 1)
			t = substr(t, length(lab) + 3)
	}
	failures[++nf] = (cur != "" ? cur : FILENAME) ": " t
	next
}
/^ok / {
	if ($0 ~ /# *SKIP/) skip++
	else pass++
	next
}
END {
	flush_open("log ended inside this program")
	for (i = 1; i <= nf; i++)
		print "FAIL: " failures[i]
	printf "%d passed, %d failed, %d skipped\n", pass, fail, skip
	exit (fail > 0 || pass + skip == 0) ? 1 : 0
}
' "$@"
