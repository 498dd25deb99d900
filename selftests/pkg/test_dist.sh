#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test_dist.sh - `make dist` makes a release tarball of HEAD that builds
# outside git: unpacked in a temporary directory and built there with
# `make drmacct BPF=0` on a PATH without git, apt-get, clang and bpftool
# (so: no BPF, no package step, the version from .tarball-version), it
# gives a CLI that says its version and that it has no BPF, links no
# libbpf or libelf, installs, and whose tree passes the licence check.
# TAP on stdout, framed for tap-summary.sh. Run from the repository root
# of a git checkout (skips elsewhere: a tarball cannot make a tarball).
set -u
unset MAKEFLAGS MFLAGS MAKELEVEL	# run by make test: the makes here are their own
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 fails=0
ok() { n=$((n + 1)); echo "ok $n $1"; }
fail() { n=$((n + 1)); echo "not ok $n $1"; fails=$((fails + 1)); shift; for l in "$@"; do echo "# $l"; done; }
eq() { if [ "$2" = "$3" ]; then ok "$1"; else fail "$1" "got:  $2" "want: $3"; fi; }
has() { case $2 in *"$3"*) ok "$1" ;; *) fail "$1" "missing: $3" "in: $(printf %s "$2" | tail -c 2000)" ;; esac; }

echo "# drmacct-vm: begin test_dist"
echo "TAP version 13"
if [ ! -e "$repo/.git" ]; then
	echo "ok 1 make dist # SKIP not a git checkout"
	echo "1..1"
	echo "# drmacct-vm: end test_dist rc=0"
	exit 0
fi

version=$(cd "$repo" && scripts/version.sh --commit)
out=$(cd "$repo" && make --no-print-directory dist 2>&1)
eq "make dist exits 0" "$?" 0
tarball=$repo/build/dist/drmacct-$version.tar.xz
has "make dist names the tarball" "$out" "build/dist/drmacct-$version.tar.xz"
if ! tar -C "$tmp" -xJf "$tarball"; then
	fail "the tarball unpacks"
	echo "1..$n"
	echo "# drmacct-vm: end test_dist rc=1"
	exit 1
fi
ok "the tarball unpacks"
src=$tmp/drmacct-$version
eq "it has .tarball-version" "$(cat "$src/.tarball-version")" "$version"
eq "it has no .git" "$(find "$src" -name .git | wc -l)" 0
eq "it has the committed tree" "$(cd "$src" && find . -type f ! -name .tarball-version | wc -l)" \
	"$(cd "$repo" && git ls-files | wc -l)"

# A PATH without git, apt-get, clang and bpftool.
nobin=$tmp/bin
mkdir -p "$nobin"
IFS=: read -ra dirs <<<"$PATH"
for d in "${dirs[@]}"; do
	for f in "$d"/*; do
		b=${f##*/}
		case $b in git | apt | apt-get | clang | clang-* | bpftool) continue ;; esac
		[ -x "$f" ] && [ ! -e "$nobin/$b" ] && ln -s "$f" "$nobin/$b"
	done
done
out=$(cd "$src" && PATH=$nobin make --no-print-directory drmacct BPF=0 WERROR=1 2>&1)
rc=$?
eq "make drmacct BPF=0 builds outside git, without clang and bpftool" "$rc" 0
[ $rc = 0 ] || printf '%s\n' "$out" | tail -15 | sed 's/^/# /'
has "no package step without apt-get" "$out" "deps: no apt-get/dpkg-query here"
case $out in *clang* | *bpftool*) fail "nothing of BPF was built" ;; *) ok "nothing of BPF was built" ;; esac
cli=$src/build/release/drmacct
eq "its version is the tarball's" "$("$cli" --version 2>&1)" "drmacct $version"
out=$("$cli" bpf status 2>&1)
eq "drmacct bpf says it was built without BPF (exit 1)" "$?" 1
has "... and why" "$out" "built without BPF support (BPF=0)"
out=$("$cli" bpf --help 2>&1)
has "its help still works" "$out" "Usage: drmacct bpf"
libs=$(ldd "$cli" | awk '{print $1}' | tr '\n' ' ')
case $libs in *libbpf* | *libelf*) fail "it links neither libbpf nor libelf" "$libs" ;; *) ok "it links neither libbpf nor libelf" ;; esac
out=$(printf 'drm-driver:\tx\ndrm-engine-render:\t5 ns\n' | "$cli" validate - 2>&1)
has "it works" "$out" "<stdin>: driver x: 0 errors"
out=$(cd "$src" && PATH=$nobin make --no-print-directory install BPF=0 DESTDIR="$tmp/dest" \
	PREFIX=/usr 2>&1)
eq "make install from the tarball" "$?" 0
eq "the installed binary" "$("$tmp/dest/usr/bin/drmacct" --version)" "drmacct $version"
out=$(cd "$src" && scripts/spdx-check.py tree 2>&1)
eq "the tarball's tree passes the licence check (a walk, no git)" "$?" 0
has "... over every file" "$out" "0 without a valid licence"

echo "1..$n"
echo "# drmacct-vm: end test_dist rc=$((fails ? 1 : 0))"
[ $fails = 0 ]
