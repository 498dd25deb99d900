#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# mkbpftrace.sh OUT.cpio.zst BTDIR — an initramfs piece with the build
# machine's bpftrace, for the guest's bpftrace tests.
#
# bpftrace is dynamically linked (LLVM, clang: about 200 MB); the guest's
# own binaries are static. The piece holds bpftrace, every library ldd
# resolves for it and the program interpreter, at their paths on the build
# machine, plus the one-liners of BTDIR under /opt/drmacct/bpftrace/. It is
# appended to the kernel's initramfs (the kernel unpacks concatenated
# archives one after the other) and zstd-compressed, which the target
# kernels decompress several times faster than gzip.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: mkbpftrace.sh OUT.cpio.zst BTDIR" >&2; exit 2; }
out=$1 btdir=$2
bt=$(command -v bpftrace) || { echo "mkbpftrace: bpftrace not found (install bpftrace)" >&2; exit 1; }
command -v zstd >/dev/null || { echo "mkbpftrace: zstd not found (install zstd)" >&2; exit 1; }
compgen -G "$btdir/*.bt" >/dev/null || { echo "mkbpftrace: no one-liner in $btdir" >&2; exit 1; }

root=$(mktemp -d "${out%/*}/bpftrace-root.XXXXXX")
trap 'rm -rf "$root" "${tmp:-}"' EXIT
chmod 0755 "$root"
put() { # put PATH: copy PATH (following links) to the same place in the root
	mkdir -p "$root$(dirname "$1")"
	cp -L "$1" "$root$1"
}
put "$bt"
interp=$(readelf -l "$bt" | sed -n 's/.*Requesting program interpreter: \(.*\)]/\1/p')
[ -n "$interp" ] || { echo "mkbpftrace: $bt names no program interpreter" >&2; exit 1; }
put "$interp"
# "libx.so => /lib/.../libx.so (0x...)"; a library ldd cannot find fails.
if ldd "$bt" | grep -q 'not found'; then
	echo "mkbpftrace: $bt needs libraries this machine lacks:" >&2
	ldd "$bt" | grep 'not found' >&2
	exit 1
fi
for lib in $(ldd "$bt" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }'); do
	put "$lib"
done
mkdir -p "$root/opt/drmacct/bpftrace"
cp "$btdir"/*.bt "$root/opt/drmacct/bpftrace/"

tmp=$(mktemp "$out.XXXXXX")
(cd "$root" && find . -print0 | LC_ALL=C sort -z | cpio --null -o -H newc --quiet) | zstd -q -3 -T0 >"$tmp"
mv "$tmp" "$out"
echo "  BPFTRACE $out ($(du -h "$out" | cut -f1), $(ls "$root/opt/drmacct/bpftrace" | wc -l) one-liners)"
