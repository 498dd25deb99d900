#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# compat-probe.sh SRCTREE — what the kernel headers under SRCTREE offer.
#
# Prints the -D flags that kernel/include/drmacct_compat.h decides on, one
# per line. Every answer comes from reading the installed headers, never
# from the version number: Debian backports features (6.1 has struct
# drm_sched_init_args, 6.12 the five-argument drm_sched_job_init()), so the
# version says little about the API. Kbuild runs this once per build (see
# kernel/compat.mk); `compat-probe.sh /lib/modules/$KVER/build` shows what a
# kernel gets.
#
# A probe that matches neither known form prints nothing, and the compat
# header then stops the build with an #error naming the probe.
set -u
src=${1:?usage: compat-probe.sh SRCTREE}
inc=$src/include

# has FILE ERE: does FILE contain a line matching ERE?
has() {
	grep -Eqs -- "$2" "$inc/$1"
}

# struct_has FILE STRUCT ERE: does the body of "struct STRUCT {" in FILE
# contain a line matching ERE?
struct_has() {
	awk -v s="struct $2 {" -v re="$3" '
		index($0, s) == 1 { inside = 1; next }
		inside && /^};/ { inside = 0 }
		inside && $0 ~ re { found = 1 }
		END { exit !found }' "$inc/$1" 2>/dev/null
}

# nargs FILE FUNC: number of parameters of the prototype "... FUNC(...);"
# in FILE (the first one that is a declaration), or nothing.
nargs() {
	awk -v f="$2(" '
		on { text = text " " $0 }
		!on && index($0, f) && $0 !~ /^[ \t]*(\*|\/\*)/ {
			on = 1; text = substr($0, index($0, f) + length(f))
		}
		on && index(text, ";") {
			text = substr(text, 1, index(text, ")") - 1)
			if (text ~ /^[ \t]*$/) n = 0
			else n = gsub(/,/, ",", text) + 1
			print n; exit
		}' "$inc/$1" 2>/dev/null
}

flag() {
	echo "-D$1"
}

# Tracing: __assign_str(field) copies from the __string() source (6.10+).
has trace/stages/stage6_event_callback.h '#define __assign_str\(dst\)' &&
	flag DRMACCT_HAVE_ASSIGN_STR_ONE_ARG

# DRM core fdinfo: drm_show_fdinfo() prints drm-driver, drm-client-id and
# drm-pdev, then calls drm_driver.show_fdinfo(printer, file) (6.5+).
has drm/drm_file.h 'void drm_show_fdinfo\(struct seq_file' &&
	struct_has drm/drm_drv.h drm_driver '\(\*show_fdinfo\)\(struct drm_printer' &&
	flag DRMACCT_HAVE_DRM_SHOW_FDINFO
struct_has drm/drm_file.h drm_file 'u64[ \t]+client_id;' &&
	flag DRMACCT_HAVE_DRM_FILE_CLIENT_ID

# drm_driver.gem_prime_mmap (gone in 6.6: PRIME mmap uses the object's funcs).
struct_has drm/drm_drv.h drm_driver '\(\*gem_prime_mmap\)' &&
	flag DRMACCT_HAVE_GEM_PRIME_MMAP

# platform_driver.remove returning int, with .remove_new for void ones.
struct_has linux/platform_device.h platform_driver 'int \(\*remove\)\(struct platform_device' &&
	flag DRMACCT_HAVE_PLATFORM_REMOVE_INT
struct_has linux/platform_device.h platform_driver 'void \(\*remove_new\)\(struct platform_device' &&
	flag DRMACCT_HAVE_PLATFORM_REMOVE_NEW

# shmem helpers with their own pages_lock lock internally; without it they
# expect the caller to hold the object's dma_resv lock (6.5+).
struct_has drm/drm_gem_shmem_helper.h drm_gem_shmem_object 'struct mutex[ \t]+pages_lock;' &&
	flag DRMACCT_HAVE_SHMEM_PAGES_LOCK

# drm_sched_init(): struct drm_sched_init_args (upstream 6.15, Debian's 6.1
# and 6.12 as backports), with or without num_rqs; else positional.
if struct_has drm/gpu_scheduler.h drm_sched_init_args 'const struct drm_sched_backend_ops'; then
	flag DRMACCT_HAVE_SCHED_INIT_ARGS
	struct_has drm/gpu_scheduler.h drm_sched_init_args 'u32[ \t]+num_rqs;' &&
		flag DRMACCT_HAVE_SCHED_INIT_ARGS_NUM_RQS
else
	n=$(nargs drm/gpu_scheduler.h drm_sched_init)
	[ -n "$n" ] && flag "DRMACCT_SCHED_INIT_NARGS=$n"
fi

# drm_sched_start(sched[, bool full_recovery | int errno]) after a reset.
if has drm/gpu_scheduler.h 'void drm_sched_start\(struct drm_gpu_scheduler \*sched\);'; then
	flag DRMACCT_SCHED_START_SCHED_ONLY
elif has drm/gpu_scheduler.h 'void drm_sched_start\(struct drm_gpu_scheduler \*sched, bool full_recovery\);'; then
	flag DRMACCT_SCHED_START_FULL_RECOVERY
elif has drm/gpu_scheduler.h 'void drm_sched_start\(struct drm_gpu_scheduler \*sched, int errno\);'; then
	flag DRMACCT_SCHED_START_ERRNO
fi

# hrtimer_setup() (6.13; hrtimer_init() goes away in 6.15).
has linux/hrtimer.h 'void hrtimer_setup\(struct hrtimer' &&
	flag DRMACCT_HAVE_HRTIMER_SETUP

# drm_sched_job_init(job, entity, [credits,] owner[, drm_client_id]).
n=$(nargs drm/gpu_scheduler.h drm_sched_job_init)
[ -n "$n" ] && flag "DRMACCT_SCHED_JOB_INIT_NARGS=$n"
exit 0
