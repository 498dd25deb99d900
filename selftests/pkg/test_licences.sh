#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test_licences.sh - the licence rules hold (scripts/spdx-check.py): every
# file of the tree names a licence whose text is in LICENSES/, and what the
# MIT library and CLI and the GPL-2.0 test programs are built from and link
# is allowed in each (make spdx-check, on the real build). And the checker
# fails where it must: a file without an identifier, an unknown licence, a
# broken expression, an exception on a licence it is not for, a dep5
# stanza matching nothing, GPL-2.0 code or a GPL library in the MIT CLI,
# an object without a depfile. TAP on stdout, framed for tap-summary.sh.
set -u
unset MAKEFLAGS MFLAGS MAKELEVEL	# run by make test: the makes here are their own
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
check=$repo/scripts/spdx-check.py
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 fails=0
ok() { n=$((n + 1)); echo "ok $n $1"; }
fail() { n=$((n + 1)); echo "not ok $n $1"; fails=$((fails + 1)); shift; for l in "$@"; do echo "# $l"; done; }
# run NAME WANT_RC WANT_TEXT CMD...: CMD exits WANT_RC and prints WANT_TEXT
run() {
	local name=$1 rc=$2 text=$3 out got
	shift 3
	out=$("$@" 2>&1)
	got=$?
	if [ "$got" = "$rc" ] && [[ $out == *"$text"* ]]; then
		ok "$name"
	else
		fail "$name" "exit $got, want $rc" "want: $text" "$(printf '%s\n' "$out" | tail -5)"
	fi
}

echo "# drmacct-vm: begin test_licences"
echo "TAP version 13"

run "every file of the tree has a valid SPDX identifier" 0 " 0 without a valid licence" \
	"$check" -C "$repo" tree
out=$(cd "$repo" && make --no-print-directory spdx-check WERROR=1 2>&1)
rc=$?
if [ $rc = 0 ]; then ok "make spdx-check: the built library, CLI and test programs"; else fail "make spdx-check" "$(printf '%s\n' "$out" | grep -v '^cc \|^gcc ' | tail -8)"; fi
case $out in
*"spdx-check: libdrmacct (MIT): "*" sources, 0 not allowed"*) ok "the library was checked" ;;
*) fail "the library was checked" ;;
esac
case $out in
*"spdx-check: drmacct (MIT): "*" sources, 0 not allowed"*) ok "the CLI was checked" ;;
*) fail "the CLI was checked" ;;
esac
case $out in
*"spdx-check: test_tracker (GPL-2.0): "*) ok "the test programs were checked" ;;
*) fail "the test programs were checked" ;;
esac

# A small tree of our own, outside git (the walk of a release tarball).
F=$tmp/tree
mkdir -p "$F/LICENSES" "$F/src" "$F/build/obj"
cp -r "$repo/LICENSES/preferred" "$repo/LICENSES/exceptions" "$F/LICENSES/"
printf '// SPDX-License-Identifier: MIT\nint a;\n' >"$F/src/a.c"
printf '/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR MIT) */\n' >"$F/src/uapi.h"
printf '#!/bin/sh\n# SPDX-License-Identifier: GPL-2.0\n' >"$F/src/x.sh"
printf '// SPDX-License-Identifier: GPL-2.0\nint g;\n' >"$F/src/gpl.c"
printf 'no licence here\n' >"$F/build/obj/ignored.txt"	# build/ is not the tree
run "a clean tree passes (outside git: a walk)" 0 "spdx-check: 9 files, 0 without" "$check" -C "$F" tree
printf 'int b;\n' >"$F/src/b.c"
run "a file without an identifier fails, named" 1 "src/b.c: no SPDX-License-Identifier" "$check" -C "$F" tree
rm "$F/src/b.c"
printf '// SPDX-License-Identifier: Apache-2.0\n' >"$F/src/b.c"
run "a licence without its text in LICENSES/ fails" 1 "src/b.c: Apache-2.0: licence 'Apache-2.0' has no text under LICENSES/" "$check" -C "$F" tree
printf '// SPDX-License-Identifier: (MIT OR\n' >"$F/src/b.c"
run "a broken expression fails" 1 "src/b.c: (MIT OR: expression ends too early" "$check" -C "$F" tree
printf '// SPDX-License-Identifier: MIT WITH Linux-syscall-note\n' >"$F/src/b.c"
run "an exception on a licence it is not for fails" 1 "exception 'Linux-syscall-note' is not for 'MIT'" "$check" -C "$F" tree
printf '// SPDX-License-Identifier: MIT AND\n' >"$F/src/b.c"
run "a dangling AND fails" 1 "expression ends too early" "$check" -C "$F" tree
rm "$F/src/b.c"
mkdir -p "$F/.reuse" "$F/seeds"
printf 'binary\1\2' >"$F/seeds/s.rec"
printf 'Files: seeds/*.rec\nCopyright: x\nLicense: MIT\n' >"$F/.reuse/dep5"
run "a data file covered by .reuse/dep5 passes" 0 "0 without" "$check" -C "$F" tree
printf 'Files: seeds/*.rec nothing/*\nCopyright: x\nLicense: MIT\n' >"$F/.reuse/dep5"
run "a dep5 pattern that matches nothing fails" 1 ".reuse/dep5: Files: nothing/* matches no file" "$check" -C "$F" tree
printf 'Files: seeds/*.rec\nCopyright: x\n' >"$F/.reuse/dep5"
run "a dep5 stanza without License fails" 1 "Files: seeds/*.rec without License:" "$check" -C "$F" tree
rm -r "$F/.reuse" "$F/seeds"

# Links: an MIT program made of MIT and GPL-2.0 objects (depfiles as gcc writes them).
printf 'build/obj/a.o: src/a.c src/uapi.h \\\n /usr/include/stdio.h\nsrc/uapi.h:\n' >"$F/build/obj/a.d"
printf 'build/obj/gpl.o: src/gpl.c\n' >"$F/build/obj/gpl.d"
touch "$F/build/obj/a.o" "$F/build/obj/gpl.o" "$F/build/obj/nodep.o"
run "MIT code (and system headers) in an MIT program passes" 0 "prog (MIT): 2 sources, 0 not allowed" \
	"$check" -C "$F" link prog MIT build/obj/a.o -ldrm -lbpf -lmicrohttpd
run "GPL-2.0 code in an MIT program fails, named" 1 "prog (MIT): contains src/gpl.c (GPL-2.0)" \
	"$check" -C "$F" link prog MIT build/obj/a.o build/obj/gpl.o
run "... and is fine in a GPL-2.0 program" 0 "prog (GPL-2.0): 3 sources, 0 not allowed" \
	"$check" -C "$F" link prog GPL-2.0 build/obj/a.o build/obj/gpl.o
LIBS_LINE='LIBRARIES = {'
grep -q "$LIBS_LINE" "$check" || fail "the checker has a table of libraries"
run "a library of unknown licence fails" 1 "library -lfoo: its licence is not known" \
	"$check" -C "$F" link prog MIT build/obj/a.o -lfoo
run "an object without a depfile fails" 1 "build/obj/nodep.o: no depfile" \
	"$check" -C "$F" link prog MIT build/obj/nodep.o
printf 'build/obj/g.o: build/gen.h\n' >"$F/build/obj/g.d"
touch "$F/build/obj/g.o" "$F/build/gen.h"
run "a generated header of unknown origin fails" 1 "generated file build/gen.h" \
	"$check" -C "$F" link prog MIT build/obj/g.o
# A BPF skeleton counts as its sources.
mkdir -p "$F/build/bpf" "$F/bpf"
printf '// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)\n' >"$F/bpf/p.bpf.c"
printf 'build/bpf/p.bpf.o: bpf/p.bpf.c\n' >"$F/build/bpf/p.bpf.d"
printf 'build/obj/s.o: src/a.c build/bpf/p.skel.h\n' >"$F/build/obj/s.d"
touch "$F/build/obj/s.o"
run "a dual-licensed BPF skeleton in an MIT program passes" 0 "prog (MIT): 2 sources, 0 not allowed" \
	"$check" -C "$F" link prog MIT build/obj/s.o
printf '// SPDX-License-Identifier: GPL-2.0\n' >"$F/bpf/p.bpf.c"
run "a GPL-2.0 BPF program in an MIT program fails" 1 "contains bpf/p.bpf.c (GPL-2.0)" \
	"$check" -C "$F" link prog MIT build/obj/s.o
run "no rule for an unknown outbound licence" 1 "no rule for works under 'Apache-2.0'" \
	"$check" -C "$F" link prog Apache-2.0 build/obj/a.o
run "usage" 2 "spdx-check.py [-C ROOT] tree" "$check" -C "$F" nonsense

echo "1..$n"
echo "# drmacct-vm: end test_licences rc=$((fails ? 1 : 0))"
[ $fails = 0 ]
