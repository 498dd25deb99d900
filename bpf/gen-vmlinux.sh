#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# gen-vmlinux.sh VMLINUZ OUT
#
# Debian ships no vmlinux ELF for its kernels, but BTF work needs one: pahole
# takes it as the base for module BTF and bpftool dumps vmlinux.h from it. The
# bzImage carries the ELF as a compressed payload; find the payload by its
# magic and decompress it.
set -eu
in=$1
out=$2
tmp="$out.tmp.$$"
trap 'rm -f "$tmp"' EXIT

try() { # try MAGIC_REGEX DECOMPRESSOR...
	magic=$1
	shift
	for off in $(LC_ALL=C grep -obUaP "$magic" "$in" | cut -d: -f1); do
		tail -c +"$((off + 1))" "$in" | "$@" >"$tmp" 2>/dev/null || true
		if [ "$(head -c 4 "$tmp" | od -An -c | tr -d ' ')" = '177ELF' ]; then
			mv "$tmp" "$out"
			return 0
		fi
	done
	return 1
}

try '\xFD7zXZ\x00' xz -dc && exit 0
try '\x1f\x8b\x08' gzip -dc && exit 0
try '\x28\xb5\x2f\xfd' zstd -dc && exit 0
echo "gen-vmlinux: no ELF payload found in $in" >&2
exit 1
