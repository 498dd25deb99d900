#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# build-kernel.sh [--print-root] [--check]
#
# Builds (once) the drmacct debug kernel: Debian's linux-source-6.12 with
# x86_64_defconfig + kvm_guest.config + kernel/debug/debug.config (lockdep,
# KASAN, kmemleak, debug objects, atomic-sleep, list debugging, UBSAN), and
# caches it outside the repository, keyed by the source package version and
# the fragment's hash, so every clone on the machine reuses it:
#
#   $DRMACCT_DEBUG_CACHE (default /var/cache/drmacct/debug-kernel)
#     /<source version>-<sha256 of debug.config, 12 hex>/
#       src/                     the unpacked source
#       obj/                     the kbuild output tree (O=), external modules
#                                build against it
#       root/boot/vmlinuz-REL    the image
#       root/lib/modules/REL/    modules_install output, build -> obj
#       release                  REL (kernelrelease)
#       build-time               wall time of the make, in seconds
#       .done                    written last
#
# The root/ directory has the layout of / for one kernel, so the Makefile
# points its per-kernel rules at it (KROOT) exactly as at / for Debian's.
# --print-root prints that directory and the release (two lines) and builds
# first if needed; --check only prints them and fails when nothing is built.
# A lock serializes concurrent builds of the same key.
# Environment: DEBUG_KERNEL_JOBS (default: number of CPUs), DEBUG_KERNEL_NICE
# (default 15).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
fragment=$here/debug.config
pkg=linux-source-6.12
tarball=/usr/src/$pkg.tar.xz
cache=${DRMACCT_DEBUG_CACHE:-/var/cache/drmacct/debug-kernel}
mode=build
case "${1:-}" in
--print-root) mode=build ;;
--check) mode=check ;;
'') ;;
*) echo "build-kernel: unknown argument $1" >&2; exit 2 ;;
esac

if [ ! -r "$tarball" ]; then
	echo "build-kernel: $tarball missing: apt-get install $pkg" >&2
	exit 1
fi
ver=$(dpkg-query -W -f='${Version}' "$pkg" 2>/dev/null) || ver=unknown
hash=$(sha256sum "$fragment" | cut -c1-12)
# Debian versions carry '~' and ':', which kbuild paths had better not.
dir=$cache/$(echo "$ver" | tr '~:' '__')-$hash

report() {
	echo "$dir/root"
	cat "$dir/release"
}

if [ -e "$dir/.done" ]; then
	report
	exit 0
fi
[ "$mode" = check ] && { echo "build-kernel: no debug kernel built in $dir" >&2; exit 1; }

mkdir -p "$dir"
exec 9>"$dir/.lock"
if ! flock -n 9; then
	echo "build-kernel: another build of $dir is running; waiting" >&2
	flock 9
fi
if [ -e "$dir/.done" ]; then
	report
	exit 0
fi

jobs=${DEBUG_KERNEL_JOBS:-$(nproc)}
nice=${DEBUG_KERNEL_NICE:-15}
log=$dir/build.log
echo "build-kernel: building the debug kernel in $dir (log: $log)" >&2
{
	if [ ! -e "$dir/src/Makefile" ]; then
		rm -rf "$dir/src" && mkdir -p "$dir/src"
		tar -xJf "$tarball" -C "$dir/src" --strip-components=1
	fi
	mkdir -p "$dir/obj"
	make -C "$dir/src" O="$dir/obj" x86_64_defconfig
	# merge_config.sh -m merges the fragments without running the
	# configurator; olddefconfig then resolves what they leave open.
	(cd "$dir/obj" && "$dir/src/scripts/kconfig/merge_config.sh" -m -O "$dir/obj" \
		"$dir/obj/.config" "$dir/src/kernel/configs/kvm_guest.config" "$fragment")
	make -C "$dir/src" O="$dir/obj" olddefconfig
} >"$log" 2>&1 || { tail -n 30 "$log" >&2; exit 1; }

# Every option the fragment asks for must have survived olddefconfig (a
# dependency not met silently drops it).
lost=
while IFS= read -r line; do
	case "$line" in
	CONFIG_*=*)
		grep -qxF "$line" "$dir/obj/.config" || lost="$lost ${line%%=*}" ;;
	'# CONFIG_'*' is not set')
		opt=${line#\# }; opt=${opt%% *}
		grep -q "^$opt=" "$dir/obj/.config" && lost="$lost $opt(wanted off)" ;;
	esac
done <"$fragment"
if [ -n "$lost" ]; then
	echo "build-kernel: options not as debug.config asks:$lost" >&2
	exit 1
fi

t0=$(date +%s)
nice -n "$nice" make -C "$dir/src" O="$dir/obj" -j"$jobs" bzImage modules >>"$log" 2>&1 ||
	{ tail -n 40 "$log" >&2; exit 1; }
t1=$(date +%s)
echo $((t1 - t0)) >"$dir/build-time"

rel=$(make -s -C "$dir/src" O="$dir/obj" kernelrelease 2>/dev/null | tail -n1)
rm -rf "$dir/root"
mkdir -p "$dir/root/boot"
make -C "$dir/src" O="$dir/obj" INSTALL_MOD_PATH="$dir/root" modules_install >>"$log" 2>&1 ||
	{ tail -n 20 "$log" >&2; exit 1; }
cp "$dir/obj/arch/x86/boot/bzImage" "$dir/root/boot/vmlinuz-$rel"
cp "$dir/obj/.config" "$dir/root/boot/config-$rel"
ln -sfn "$dir/obj" "$dir/root/lib/modules/$rel/build"
echo "$rel" >"$dir/release"
touch "$dir/.done"
echo "build-kernel: $rel built in $((t1 - t0)) s" >&2
report
