#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test_doc_examples.sh - the README's "What you see" examples and the
# host examples of drmacct(1) are what drmacct prints:
# scripts/doc-examples.sh runs `list -i 1`, `top` (tmux, 100x12) and
# `validate` on its synthetic tree, with --man the page's examples on the
# page's tree, and each of the README's and the page's blocks must be its
# output line by line. Numbers are compared as "#":
# utilisation comes from counters a shell loop advances while drmacct
# reads, so a run differs from the README's by the loop's and the
# scheduler's timing (a few percent); bars (block characters) are dropped
# for the same reason, and runs of blanks count as one. Everything else --
# lines, their order, columns, labels, names, "-" for memory never printed
# -- must match. TAP on stdout, framed for tap-summary.sh.
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
n=0 fails=0
ok() { n=$((n + 1)); echo "ok $n $1"; }
fail() { n=$((n + 1)); echo "not ok $n $1"; fails=$((fails + 1)); shift; for l in "$@"; do echo "# $l"; done; }

echo "# drmacct-vm: begin test_doc_examples"
echo "TAP version 13"
fix=${DRMACCT_SHARED:-$repo/../shared}/fixtures/fdinfo
if ! command -v tmux >/dev/null || [ ! -r "$fix/amdgpu_2.txt" ]; then
	echo "ok 1 README examples # SKIP no tmux or no $fix"
	echo "1..1"
	echo "# drmacct-vm: end test_doc_examples rc=0"
	exit 0
fi

out=$("$repo/scripts/doc-examples.sh" "$repo/build/host/drmacct" 2>&1)
rc=$?
if [ $rc = 0 ]; then ok "doc-examples.sh runs"; else fail "doc-examples.sh runs" "exit $rc" "$out"; fi

# The masked form of text: numbers "#", no block characters, one blank.
mask() { sed -E -e 's/[0-9]+(\.[0-9]+)?/#/g' -e 's/(█|▉|▊|▋|▌|▍|▎|▏)//g' -e 's/ +/ /g' -e 's/ $//'; }
# Section $1 of the script's output (after its "$ " line, up to a blank
# line, or the end).
section() { printf '%s\n' "$out" | awk -v h="$1" '$0 == h { f = 1; next } f && /^$/ { exit } f'; }
# Without the blank lines at the end.
trim_end() { sed -e :a -e '/^\n*$/{$d;N;ba' -e '}'; }
# README's indented block starting with the line $1, unindented.
readme_block() {
	awk -v s="    $1" 'index($0, s) == 1 { f = 1 } f && !/^    / && !/^$/ { exit } f' "$repo/README.md" |
		sed -e 's/^    //' | trim_end
}

# expect_same NAME DOC GOT WANT: the program's masked text GOT is DOC's WANT
expect_same() {
	if [ -n "$4" ] && [ "$3" = "$4" ]; then
		ok "$1"
	else
		fail "$1" "the program (masked):" "$3" "$2 (masked):" "$4"
	fi
}
cmp_block() {	# name, script section header, first line of the README block
	expect_same "$1" "the README" "$(section "$2" | mask)" "$(readme_block "$3" | mask)"
}
cmp_block "README: drmacct list -i 1" '$ drmacct list -i 1' "PID          COMM"
# top's screen has blank rows at the end; the README's block ends at its last text line
cmp_block "README: drmacct top at 100x12" '$ drmacct top   # 100x12' "drmacct top  2 clients"

v=$(section '$ drmacct validate amdgpu_2.txt | tail -n 1')
case $(tr '\n' ' ' <"$repo/README.md") in
*"\`$v\`"*) ok "README: validate's summary ($v)" ;;
*) fail "README: validate's summary" "the program: $v" ;;
esac

# drmacct(1): every example block whose prompt is "$" (it runs on any
# host; "#" marks runs in the test VM) is a section of `doc-examples.sh
# --man` (each after a line "----"), compared the same way.
man=$("$repo/scripts/doc-examples.sh" --man "$repo/build/host/drmacct" 2>&1)
rc=$?
if [ $rc = 0 ]; then ok "doc-examples.sh --man runs"; else fail "doc-examples.sh --man runs" "exit $rc" "$man"; fi
rst=$repo/Documentation/drmacct.rst
# The section of the script's output that starts with the line $1.
man_section() {
	printf '%s\n' "$man" | awk -v h="$1" 'prev == "----" && $0 == h { f = 1 }
		f && $0 == "----" { exit } f { print } { prev = $0 }' | trim_end
}
# The page's literal block starting with the line $1, unindented.
rst_block() {
	awk -v s="    $1" '$0 == s { f = 1 } f && !/^    / && !/^$/ { exit } f' "$rst" |
		sed -e 's/^    //' | trim_end
}
# the first line of every "$" block of the page (a "$ " line after a blank one)
blocks=$(awk 'prev == "" && /^    \$ / { print substr($0, 5) } { prev = $0 }' "$rst")
nblocks=0
while IFS= read -r first; do
	[ -n "$first" ] || continue
	nblocks=$((nblocks + 1))
	expect_same "drmacct(1): $first" "the page" "$(man_section "$first" | mask)" \
		"$(rst_block "$first" | mask)"
done <<<"$blocks"
# and the script has no example the page lost
nsect=$(printf '%s\n' "$man" | grep -c '^----$')
if [ "$nblocks" = "$nsect" ] && [ "$nblocks" -gt 0 ]; then
	ok "drmacct(1): $nblocks examples, each from the script"
else
	fail "drmacct(1): every example from the script" "page: $nblocks blocks, script: $nsect"
fi

echo "1..$n"
echo "# drmacct-vm: end test_doc_examples rc=$((fails > 0))"
[ $fails = 0 ]
