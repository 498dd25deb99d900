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
#     /<source version>-<sha256 of debug.config [+ btf.config], 12 hex>/
#       src/                     the unpacked source
#       obj/                     the kbuild output tree (O=), external modules
#                                build against it
#       root/boot/vmlinuz-REL    the image
#       root/lib/modules/REL/    modules_install output, build -> obj
#       release                  REL (kernelrelease)
#       build-time               wall time of the make, in seconds
#       .done                    written last
#     /ccache/                   the compiler cache, when ccache is installed
#
# The root/ directory has the layout of / for one kernel, so the Makefile
# points its per-kernel rules at it (KROOT) exactly as at / for Debian's.
# --print-root prints that directory and the release (two lines) and builds
# first if needed; --check only prints them and fails when nothing is built.
# A lock serializes concurrent builds of the same key.
# Environment: DEBUG_KERNEL_JOBS (default: number of CPUs), DEBUG_KERNEL_NICE
# (default 15), DEBUG_BTF=1 (merge btf.config after debug.config: DWARF and
# BTF, needs pahole; its own cache key). When ccache is installed the
# compiler runs under it (CCACHE_DIR default: $DRMACCT_DEBUG_CACHE/ccache),
# so a rebuild of the same configuration is mostly cache hits.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
fragments=("$here/debug.config")
[ "${DEBUG_BTF:-0}" = 1 ] && fragments+=("$here/btf.config")
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
# Without BTF the key is debug.config's own sha256, as before btf.config.
hash=$(cat "${fragments[@]}" | sha256sum | cut -c1-12)
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
# Every make below gets the same CC: the configuration records the compiler.
cc=(CC=gcc)
if command -v ccache >/dev/null; then
	cc=(CC="ccache gcc")
	export CCACHE_DIR=${CCACHE_DIR:-$cache/ccache}
	# Paths under the key directory are hashed relative, and with debug
	# info the working directory is not hashed: a fresh obj/ or another
	# key's build of the same file hits.
	export CCACHE_BASEDIR=$dir CCACHE_NOHASHDIR=1
	# One build with debug info fills ccache's default 5 GB.
	export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-20G}
fi
echo "build-kernel: building the debug kernel in $dir (log: $log)" >&2
{
	if [ ! -e "$dir/src/Makefile" ]; then
		rm -rf "$dir/src" && mkdir -p "$dir/src"
		tar -xJf "$tarball" -C "$dir/src" --strip-components=1
	fi
	mkdir -p "$dir/obj"
	make -C "$dir/src" O="$dir/obj" "${cc[@]}" x86_64_defconfig
	# merge_config.sh -m merges the fragments without running the
	# configurator; olddefconfig then resolves what they leave open.
	(cd "$dir/obj" && "$dir/src/scripts/kconfig/merge_config.sh" -m -O "$dir/obj" \
		"$dir/obj/.config" "$dir/src/kernel/configs/kvm_guest.config" "${fragments[@]}")
	make -C "$dir/src" O="$dir/obj" "${cc[@]}" olddefconfig
} >"$log" 2>&1 || { tail -n 30 "$log" >&2; exit 1; }

# Every option the fragments ask for (the last fragment that names it wins)
# must have survived olddefconfig (a dependency not met silently drops it).
lost=
while IFS= read -r line; do
	case "$line" in
	CONFIG_*=*)
		grep -qxF "$line" "$dir/obj/.config" || lost="$lost ${line%%=*}" ;;
	'# CONFIG_'*' is not set')
		opt=${line#\# }; opt=${opt%% *}
		grep -q "^$opt=" "$dir/obj/.config" && lost="$lost $opt(wanted off)" ;;
	esac
done < <(awk '{ k = "" }
	/^CONFIG_[A-Za-z0-9_]+=/ { k = $0; sub(/=.*/, "", k) }
	/^# CONFIG_[A-Za-z0-9_]+ is not set$/ { k = $2 }
	k != "" { if (!(k in last)) order[n++] = k; last[k] = $0 }
	END { for (i = 0; i < n; i++) print last[order[i]] }' "${fragments[@]}")
if [ -n "$lost" ]; then
	echo "build-kernel: options not as ${fragments[*]##*/} ask:$lost" >&2
	exit 1
fi

t0=$(date +%s)
nice -n "$nice" make -C "$dir/src" O="$dir/obj" "${cc[@]}" -j"$jobs" bzImage modules \
	>>"$log" 2>&1 || { tail -n 40 "$log" >&2; exit 1; }
t1=$(date +%s)
echo $((t1 - t0)) >"$dir/build-time"

rel=$(make -s -C "$dir/src" O="$dir/obj" "${cc[@]}" kernelrelease 2>/dev/null | tail -n1)
rm -rf "$dir/root"
mkdir -p "$dir/root/boot"
make -C "$dir/src" O="$dir/obj" "${cc[@]}" INSTALL_MOD_PATH="$dir/root" modules_install \
	>>"$log" 2>&1 ||
	{ tail -n 20 "$log" >&2; exit 1; }
cp "$dir/obj/arch/x86/boot/bzImage" "$dir/root/boot/vmlinuz-$rel"
cp "$dir/obj/.config" "$dir/root/boot/config-$rel"
ln -sfn "$dir/obj" "$dir/root/lib/modules/$rel/build"
echo "$rel" >"$dir/release"
touch "$dir/.done"
echo "build-kernel: $rel built in $((t1 - t0)) s" >&2
report
