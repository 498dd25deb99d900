#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# tap-summary.sh [--expected-skips FILE] [--kernel K] LOG... — count TAP
# results across framed logs.
#
# Logs hold blocks "# drmacct-vm: begin NAME" ... "# drmacct-vm: end NAME rc=N"
# (from the guest and from the host runners). Inside a block, "ok" lines
# pass, "ok ... # SKIP" lines skip, "not ok" lines fail. Every LOG is one
# part of the run, and nothing of a part may vanish unnoticed:
#  - a part (a LOG) without a single result fails;
#  - a block's results must match its "1..N" plan, and a block with results
#    and no plan fails;
#  - a program that exited with a status other than 0 (pass) or 4 (skip)
#    without a "not ok" line fails once more (it crashed or was killed); one
#    that exited 0 with no result line at all fails;
#  - a block that never ended fails (the VM died or timed out under it), as
#    does a new "begin" inside an open block and an "end" that names
#    another block than the open one (or none);
#  - every skip is looked up in the expected-skip list (default: the
#    committed selftests/expected-skips; see its header): a skip the list
#    does not expect for that kernel fails; a test the list expects to skip
#    that passed is named (NOTE:), not failed. A program that exited 4 with
#    no result line skipped as a whole: it is one skip, "(whole program)".
# The kernel of a block is its label (run-vm --label: "LABEL/prog"), else
# --kernel K, else "host". Prints every failure by name and ends with the
# line "N passed, N failed, N skipped (N expected by LIST)". Exit 1 when
# anything failed or nothing ran.
set -u
here=$(cd "$(dirname "$0")" && pwd)
expected=$here/expected-skips kernel=host
while [ $# -gt 0 ]; do
	case "$1" in
	--expected-skips) expected=${2:-}; shift 2 || exit 2 ;;
	--kernel) kernel=${2:-}; shift 2 || exit 2 ;;
	--) shift; break ;;
	-*) echo "tap-summary: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
[ $# -gt 0 ] || { echo "usage: tap-summary.sh [--expected-skips FILE] [--kernel K] LOG..." >&2; exit 2; }
if [ -n "$expected" ] && [ ! -r "$expected" ]; then
	echo "tap-summary: expected-skip list $expected not readable" >&2
	exit 2
fi
awk -v expfile="$expected" -v defkernel="$kernel" '
function glob_re(g,    r, i, c) {
	r = "^"
	for (i = 1; i <= length(g); i++) {
		c = substr(g, i, 1)
		if (c == "*") r = r ".*"
		else if (c == "?") r = r "."
		else if (index("\\^$.[]|()+{}", c)) r = r "\\" c
		else r = r c
	}
	return r "$"
}
# Is TEST of PROG on kernel K in the list? Returns the entry index or 0.
function expected_at(k, prog, test,    i, n, pats, j) {
	for (i = 1; i <= nexp; i++) {
		if (exprog[i] != prog || (extest[i] != test && extest[i] != "*"))
			continue
		n = split(expk[i], pats, ",")
		for (j = 1; j <= n; j++)
			if (k ~ glob_re(pats[j]))
				return i
	}
	return 0
}
function fail_line(what) {
	fail++
	failures[++nf] = what
}
function block_kernel(b) {
	if (b ~ /\//) { sub(/\/.*/, "", b); return b }
	return defkernel
}
function block_prog(b) {
	if (b == "") return "-"
	sub(/^[^\/]*\//, "", b)
	return b
}
# The test name of a result line: no number, no kernel label, no directive.
function test_name(line,    t, lab) {
	t = line
	sub(/^(not )?ok [0-9]+ */, "", t)
	sub(/^- */, "", t)
	if (cur ~ /\//) {
		lab = cur; sub(/\/.*/, "", lab)
		if (index(t, lab ": ") == 1)
			t = substr(t, length(lab) + 3)
	}
	sub(/ *# *(SKIP|skip|TODO|todo).*$/, "", t)
	return t
}
function where() { return cur != "" ? cur : FILENAME }
function a_skip(test, why,    k, prog) {
	skip++
	k = block_kernel(cur); prog = block_prog(cur)
	if (expected_at(k, prog, test))
		skip_expected++
	else
		fail_line(where() ": " test ": skipped, and " listname " does not expect it on " k \
			(why != "" ? " (" why ")" : ""))
}
# Closes the open block for WHY (empty: it ended as it should, with RC).
function close_block(why, rc) {
	if (cur == "")
		return
	if (why != "") {
		fail_line(cur ": " why)
	} else if (rc != 0 && rc != 4 && curfails == 0) {
		fail_line(cur ": exited with status " rc " without a failing test line")
	} else if (nres == 0 && (rc == 4 || plan == 0)) {
		a_skip("(whole program)", "exited " rc " with no test line")
		partres[FILENAME]++
	} else if (nres == 0 && rc == 0) {
		fail_line(cur ": exited 0 without a single test line")
	} else if (nres > 0 && plan < 0) {
		fail_line(cur ": " nres " test lines and no 1..N plan")
	} else if (plan >= 0 && plan != nres) {
		fail_line(cur ": planned 1.." plan " but " nres " test lines came")
	}
	cur = ""
}
BEGIN {
	listname = "no expected-skip list"
	if (expfile != "") {
		listname = expfile; sub(/.*\//, "", listname)
		while ((getline l < expfile) > 0) {
			sub(/\r$/, "", l)
			if (l ~ /^[ \t]*(#|$)/) continue
			n = split(l, w, /[ \t]+/)
			if (n < 3) { print "tap-summary: bad line in " expfile ": " l > "/dev/stderr"; badlist = 1; exit 2 }
			nexp++
			expk[nexp] = w[1]; exprog[nexp] = w[2]
			t = l; sub(/^[ \t]*[^ \t]+[ \t]+[^ \t]+[ \t]+/, "", t); sub(/[ \t]+$/, "", t)
			extest[nexp] = t
		}
		close(expfile)
	}
}
FNR == 1 {
	if (NR > 1) close_block("log ended inside this program")
	seen[FILENAME] = 1
}
{ sub(/\r$/, "") }
/^# drmacct-vm: begin / {
	close_block("did not finish: a new program began (the VM died or timed out while it ran)")
	cur = $4; curfails = 0; nres = 0; plan = -1
	next
}
/^# drmacct-vm: end / {
	name = $4; rc = $5; sub(/^rc=/, "", rc)
	if (cur == "")
		fail_line(name ": ended, but it never began (or ended twice)")
	else if (cur != name)
		close_block("ended as " name ", another program")
	else
		close_block("", rc + 0)
	next
}
/^1\.\.[0-9]+/ {
	if (cur != "") {
		p = $0; sub(/^1\.\./, "", p); plan = p + 0
	}
	next
}
/^not ok / {
	partres[FILENAME]++; nres++
	if ($0 ~ /# *TODO/) next
	fail++; curfails++
	failures[++nf] = where() ": " test_name($0)
	next
}
/^ok / {
	partres[FILENAME]++; nres++
	if ($0 ~ /# *SKIP/) {
		why = $0; sub(/^.*# *SKIP */, "", why)
		a_skip(test_name($0), why)
	} else {
		pass++
		t = test_name($0)
		# (named for entries of one test; "*" entries of a whole program
		# would name every test of it)
		e = expected_at(block_kernel(cur), block_prog(cur), t)
		if (e && extest[e] != "*")
			notes[++nn] = where() ": " t ": expected to skip (" listname "), passed"
	}
	next
}
END {
	if (badlist)
		exit 2
	close_block("log ended inside this program")
	for (i = 1; i < ARGC; i++)
		if (!(ARGV[i] in seen) || !(ARGV[i] in partres))
			fail_line(ARGV[i] ": no test output at all (the part never ran, or died before its first line)")
	for (i = 1; i <= nn; i++)
		print "NOTE: " notes[i]
	for (i = 1; i <= nf; i++)
		print "FAIL: " failures[i]
	printf "%d passed, %d failed, %d skipped (%d expected by %s)\n", pass, fail, skip,
		skip_expected, listname
	exit (fail > 0 || pass + skip == 0) ? 1 : 0
}
' "$@"
