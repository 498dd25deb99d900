#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# build-kernel.sh FLAVOUR [--print-root | --check]
#
# Builds (once) a kernel that drmacct tests on but Debian does not ship in
# a form bookworm can build modules for, and caches it outside the
# repository, so every clone on the machine reuses it. Two flavours:
#
#   newest  Linux 7.3: Debian's linux-source-7.3 (trixie-backports), with
#           x86_64_defconfig + kvm_guest.config + configs/base.config +
#           configs/btf.config + configs/newest.config (BTF, KUnit). One of
#           the five target kernels of `make test`.
#   debug   Debian's linux-source-6.12 (bookworm, installed by apt) with
#           base.config + debug.config (lockdep, KASAN, kmemleak, debug
#           objects, atomic-sleep, UBSAN) [+ btf.config with DEBUG_BTF=1].
#           `make test-debug`.
#
# Cache layout ($DRMACCT_KERNEL_CACHE, default /var/cache/drmacct; the debug
# flavour also honours $DRMACCT_DEBUG_CACHE for its own directory):
#
#   <cache>/<flavour>-kernel/
#     <source version>-<sha256 of the fragments, 12 hex>/   (the key)
#       src/                     the unpacked source
#       obj/                     the kbuild output tree (O=); external
#                                modules build against it, and since it
#                                keeps vmlinux, kbuild writes their BTF
#       root/boot/vmlinuz-REL    the image, root/boot/config-REL its config
#       root/lib/modules/REL/    modules_install output, build -> obj
#       release, build-time, build.log
#       .done                    written last
#   <cache>/apt/                 the private apt state that fetches
#                                linux-source-7.3 (newest only)
#   <cache>/ccache/              the compiler cache, when ccache is installed
#
# root/ has the layout of / for one kernel, so the Makefile points its
# per-kernel rules at it (KROOT) exactly as at / for Debian's kernels.
# --print-root prints root/ and the release (two lines), building first if
# needed; --check prints them and fails when nothing is built.
#
# The newest flavour fetches its source without touching the system's apt
# configuration: a sources.list of its own naming trixie-backports on the
# archive the system already uses, its own lists and cache directories, and
# apt's usual signature checks (InRelease against Debian's archive keyring,
# then the package's hash against the signed Packages index). With no
# network it falls back to the newest package already fetched.
#
# Environment: KERNEL_JOBS (default: number of CPUs), KERNEL_NICE (default
# 10), DEBUG_BTF=1 (debug flavour with BTF; its own key).
set -euo pipefail

# The whole script is one function, read before it runs: editing the file
# during an 18-minute build cannot change what the running build does.
main() {

here=$(cd "$(dirname "$0")" && pwd)
cfgdir=$here/configs
flavour=${1:-}
mode=build
case "${2:-}" in
--print-root | '') mode=build ;;
--check) mode=check ;;
*) echo "build-kernel: unknown argument $2" >&2; exit 2 ;;
esac

top=${DRMACCT_KERNEL_CACHE:-/var/cache/drmacct}
case "$flavour" in
newest)
	pkg=linux-source-7.3
	suite=trixie-backports
	fragments=("$cfgdir/base.config" "$cfgdir/btf.config" "$cfgdir/newest.config")
	cache=$top/newest-kernel
	;;
debug)
	pkg=linux-source-6.12
	suite=
	fragments=("$cfgdir/base.config" "$cfgdir/debug.config")
	[ "${DEBUG_BTF:-0}" = 1 ] && fragments+=("$cfgdir/btf.config")
	cache=${DRMACCT_DEBUG_CACHE:-$top/debug-kernel}
	;;
*)
	echo "usage: build-kernel.sh newest|debug [--print-root|--check]" >&2
	exit 2
	;;
esac
for f in "${fragments[@]}"; do
	[ -r "$f" ] || { echo "build-kernel: $f missing" >&2; exit 1; }
done

# ---- the source: a tarball and its package version -------------------------
# fetch_private [offline]: newest linux-source-X from $suite through a
# private apt configuration; sets tarball and ver. Offline (--check) it
# takes the newest package fetched before, without asking the archive.
fetch_private() {
	local apt=$top/apt debs uri opts
	if [ "${1:-}" = offline ]; then
		debs=$(ls "$apt/debs/${pkg}_"*_all.deb 2>/dev/null | sort -V | tail -n1 || true)
		[ -n "$debs" ] || { echo "build-kernel: no $pkg package fetched" >&2; exit 1; }
		ver=$(dpkg-deb -f "$debs" Version)
		return 0
	fi
	mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/debs"
	# The archive the system's own bookworm line uses (deb822 or one-line).
	uri=$(sed -n 's/^URIs: *\(http[^ ]*\/debian\)\/*$/\1/p' \
		/etc/apt/sources.list.d/*.sources 2>/dev/null | head -n1)
	[ -n "$uri" ] || uri=$(sed -n 's/^deb \(\[[^]]*\] \)*\(http[^ ]*\/debian\)\/* bookworm .*/\2/p' \
		/etc/apt/sources.list 2>/dev/null | head -n1)
	[ -n "$uri" ] || uri=http://deb.debian.org/debian
	echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $uri $suite main" \
		>"$apt/sources.list"
	opts=(-o Dir::Etc::sourcelist="$apt/sources.list" -o Dir::Etc::sourceparts=/dev/null
		-o Dir::State::Lists="$apt/lists" -o Dir::Cache="$apt/cache"
		-o APT::Sandbox::User=root -q)
	if apt-get "${opts[@]}" update >"$apt/update.log" 2>&1 &&
		ver=$(apt-cache "${opts[@]}" show "$pkg" 2>/dev/null |
			sed -n 's/^Version: //p' | sort -V | tail -n1) && [ -n "$ver" ]; then
		debs=$(ls "$apt/debs/${pkg}_$(echo "$ver" | sed 's/:/%3a/')_all.deb" 2>/dev/null || true)
		if [ -z "$debs" ]; then
			echo "build-kernel: fetching $pkg $ver from $suite" >&2
			(cd "$apt/debs" && apt-get "${opts[@]}" download "$pkg=$ver" >"$apt/download.log" 2>&1) ||
				{ cat "$apt/download.log" >&2; exit 1; }
		fi
	else
		echo "build-kernel: cannot update $suite (see $apt/update.log); using what was fetched" >&2
	fi
	debs=$(ls "$apt/debs/${pkg}_"*_all.deb 2>/dev/null | sort -V | tail -n1 || true)
	[ -n "$debs" ] || { echo "build-kernel: no $pkg package fetched" >&2; exit 1; }
	ver=$(dpkg-deb -f "$debs" Version)
	tarball=$apt/src/$ver/usr/src/$pkg.tar.xz
	if [ ! -r "$tarball" ]; then
		rm -rf "$apt/src/$ver"
		mkdir -p "$apt/src/$ver"
		dpkg-deb -x "$debs" "$apt/src/$ver"
	fi
}

if [ -n "$suite" ]; then
	# --check never asks the archive: the package fetched last.
	if [ "$mode" = check ]; then fetch_private offline; else fetch_private; fi
else
	tarball=/usr/src/$pkg.tar.xz
	[ -r "$tarball" ] || { echo "build-kernel: $tarball missing: apt-get install $pkg" >&2; exit 1; }
	ver=$(dpkg-query -W -f='${Version}' "$pkg" 2>/dev/null) || ver=unknown
fi

hash=$(cat "${fragments[@]}" | sha256sum | cut -c1-12)
# Debian versions carry '~', '+' and ':', which kbuild paths had better not.
dir=$cache/$(echo "$ver" | tr '~:+' '___')-$hash

report() {
	echo "$dir/root"
	cat "$dir/release"
}

if [ -e "$dir/.done" ]; then
	report
	exit 0
fi
[ "$mode" = check ] && { echo "build-kernel: no $flavour kernel built in $dir" >&2; exit 1; }

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

jobs=${KERNEL_JOBS:-${DEBUG_KERNEL_JOBS:-$(nproc)}}
nice=${KERNEL_NICE:-${DEBUG_KERNEL_NICE:-10}}
log=$dir/build.log
# Every make below gets the same CC: the configuration records the compiler.
cc=(CC=gcc)
if command -v ccache >/dev/null; then
	cc=(CC="ccache gcc")
	export CCACHE_DIR=${CCACHE_DIR:-$top/ccache}
	# Paths under the key directory are hashed relative, and with debug
	# info the working directory is not hashed: a fresh obj/ or another
	# key's build of the same file hits.
	export CCACHE_BASEDIR=$dir CCACHE_NOHASHDIR=1
	# One build with debug info fills ccache's default 5 GB.
	export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-20G}
fi
echo "build-kernel: building the $flavour kernel ($pkg $ver) in $dir (log: $log)" >&2
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
echo "build-kernel: $flavour $rel built in $((t1 - t0)) s" >&2
report
}

main "$@"
