#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# mkinitramfs.sh — build the guest's initramfs.
#
#   mkinitramfs.sh --kver KVER [--kroot DIR] --out FILE.cpio.gz --modules DIR
#                  --bin DIR --tests DIR --bench DIR --selfcheck DIR --guest DIR
#                  [--append PIECE]
#
# The guest gets busybox (static), the distribution modules our modules need
# (the closure of drm, gpu-sched and drm_shmem_helper over modules.dep), vgem
# (a driver without usage stats, for the tests of how drmacct says so) plus
# our own BTF-carrying .ko files under extra/, a depmod index so plain
# `modprobe simgpu` works, our static binaries, and the init script.
# The kernel's modules come from KROOT/lib/modules/KVER (KROOT defaults to
# /; the debug kernel's cache has the same layout). --append adds a
# compressed cpio archive after ours (mkbpftrace.sh's bpftrace piece): the
# kernel unpacks the archives one after the other.
set -euo pipefail

kver= kroot= out= moddir= bindir= testdir= benchdir= selfdir= guestdir= append=
while [ $# -gt 0 ]; do
	case "$1" in
	--kver) kver=$2 ;;
	--kroot) kroot=$2 ;;
	--out) out=$2 ;;
	--modules) moddir=$2 ;;
	--bin) bindir=$2 ;;
	--tests) testdir=$2 ;;
	--bench) benchdir=$2 ;;
	--selfcheck) selfdir=$2 ;;
	--guest) guestdir=$2 ;;
	--append) append=$2 ;;
	*) echo "mkinitramfs: unknown argument $1" >&2; exit 2 ;;
	esac
	shift 2
done
for v in kver out moddir guestdir; do
	[ -n "${!v}" ] || { echo "mkinitramfs: --${v/dir/} is required" >&2; exit 2; }
done

src=$kroot/lib/modules/$kver
[ -f "$src/modules.dep" ] || { echo "mkinitramfs: $src/modules.dep missing (install linux-image-$kver)" >&2; exit 1; }
busybox=$(command -v busybox) || { echo "mkinitramfs: busybox not found (busybox-static)" >&2; exit 1; }
if readelf -l "$busybox" 2>/dev/null | grep -q 'Requesting program interpreter'; then
	echo "mkinitramfs: $busybox is not static (install busybox-static)" >&2
	exit 1
fi

root=$(mktemp -d "${out%/*}/root.XXXXXX" 2>/dev/null || { mkdir -p "${out%/*}"; mktemp -d "${out%/*}/root.XXXXXX"; })
trap 'rm -rf "$root" "${tmp:-}"' EXIT
# mktemp -d makes the directory 0700, and it becomes the guest's "/": open it
# up, or no user but root could reach anything in the guest.
chmod 0755 "$root"

mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,tmp,run,etc,root,mnt}
chmod 1777 "$root/tmp"
mkdir -p "$root"/opt/drmacct/{tests,bench,selfcheck,main.d}
cp "$busybox" "$root/bin/busybox"
for applet in $("$busybox" --list-full); do
	[ -e "$root/$applet" ] || ln -s /bin/busybox "$root/$applet"
done

# Distribution modules: the dependency closure of what our modules need.
roots="drm gpu-sched drm_shmem_helper vgem"
declare -A want=()
add_closure() { # add_closure PATH_IN_MODULES_DEP
	local m=$1 line deps d
	[ -n "${want[$m]:-}" ] && return
	want[$m]=1
	line=$(grep -E "^${m//./\\.}:" "$src/modules.dep") || { echo "mkinitramfs: $m not in modules.dep" >&2; exit 1; }
	deps=${line#*:}
	for d in $deps; do add_closure "$d"; done
}
for r in $roots; do
	path=$(grep -E "/${r}\.ko(\.[a-z]+)?:" "$src/modules.dep" | head -n1 | cut -d: -f1)
	[ -n "$path" ] || { echo "mkinitramfs: module $r not found for $kver" >&2; exit 1; }
	add_closure "$path"
done
dst=$root/lib/modules/$kver
for m in "${!want[@]}"; do
	mkdir -p "$dst/$(dirname "$m")"
	cp "$src/$m" "$dst/$m"
done
mkdir -p "$dst/extra"
if [ -n "$moddir" ] && compgen -G "$moddir/*.ko" >/dev/null; then
	cp "$moddir"/*.ko "$dst/extra/"
fi
cp "$src"/modules.{order,builtin,builtin.modinfo} "$dst/" 2>/dev/null || true
depmod -b "$root" "$kver"

copy_dir() { # copy_dir FROM TO: executables only
	[ -n "$1" ] && [ -d "$1" ] || return 0
	find "$1" -maxdepth 1 -type f -perm -u+x -exec cp {} "$2/" \;
}
copy_dir "$bindir" "$root/usr/bin"
copy_dir "$testdir" "$root/opt/drmacct/tests"
copy_dir "$benchdir" "$root/opt/drmacct/bench"
copy_dir "$selfdir" "$root/opt/drmacct/selfcheck"
if [ -d "$guestdir/main.d" ]; then
	cp "$guestdir"/main.d/* "$root/opt/drmacct/main.d/" 2>/dev/null || true
	chmod +x "$root"/opt/drmacct/main.d/* 2>/dev/null || true
fi
# A few terminfo entries (drmacct top's full-screen view draws through
# ncursesw, statically linked; its default search path includes
# /lib/terminfo). Without an entry top falls back to plain snapshots.
for t in linux vt100 vt102 vt220 xterm xterm-256color screen screen-256color tmux \
	tmux-256color dumb; do
	f=$(find /lib/terminfo /usr/share/terminfo -name "$t" -path "*/${t:0:1}/$t" 2>/dev/null | head -n1)
	[ -n "$f" ] || continue
	mkdir -p "$root/lib/terminfo/${t:0:1}"
	cp -L "$f" "$root/lib/terminfo/${t:0:1}/$t"
done
install -m 0755 "$guestdir/init" "$root/init"
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' >"$root/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$root/etc/group"

# Refuse binaries that would need a dynamic loader the guest does not have.
for f in "$root"/usr/bin/* "$root"/opt/drmacct/{tests,bench,selfcheck}/*; do
	[ -f "$f" ] || continue
	[ -L "$f" ] && continue
	if readelf -l "$f" 2>/dev/null | grep -q 'Requesting program interpreter'; then
		echo "mkinitramfs: $f is dynamically linked; guest binaries must be static" >&2
		exit 1
	fi
done

tmp=$(mktemp "$out.XXXXXX")
(cd "$root" && find . -print0 | LC_ALL=C sort -z | cpio --null -o -H newc --quiet) | gzip -1 >"$tmp"
if [ -n "$append" ]; then
	cat "$append" >>"$tmp"
fi
mv "$tmp" "$out"
echo "  INITRAMFS $out ($(du -h "$out" | cut -f1), $(ls "$root/opt/drmacct/tests" | wc -l) test programs, ${#want[@]}+$(ls "$dst/extra" | wc -l) modules${append:+, + ${append##*/}})"
