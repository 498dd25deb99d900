#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# compat-probe.sh SRCTREE — what the kernel headers under SRCTREE offer.
#
# Prints the -D flags that kernel/include/drmacct_compat.h decides on, one
# per line. Every answer comes from reading the headers of the kernel being
# built for, never from the version number: Debian backports features (6.1
# has struct drm_sched_init_args, 6.12 the five-argument drm_sched_job_init()),
# so the version says little about the API. Kbuild runs this once per
# directory (see kernel/compat.mk); `compat-probe.sh /lib/modules/R/build`
# shows what kernel R gets.
#
# Each probe knows every form it has met (6.1, 6.12, 7.3 and upstream in
# between) and must recognise exactly one of them. A probe that recognises
# none, or finds two conflicting ones, prints its name to stderr and adds it
# to -DDRMACCT_PROBE_FAILED=name[__name...]; drmacct_compat.h then stops
# the build with a static assertion naming every failed probe. A new kernel
# thus never falls back silently to an older kernel's behaviour.
#
# Exit status: 0, also when a probe failed (kbuild ignores it); 2 for a
# SRCTREE without include/drm (not a kernel tree at all).
set -u
src=${1:?usage: compat-probe.sh SRCTREE}
inc=$src/include
if [ ! -d "$inc/drm" ] || [ ! -d "$inc/linux" ]; then
	echo "compat-probe: $src has no include/drm and include/linux: not a kernel tree" >&2
	echo "-DDRMACCT_PROBE_FAILED=kernel_tree"
	exit 2
fi
failed=

fail() { # fail PROBE WHAT
	echo "compat-probe: $1: $2 in $src (a kernel drmacct does not know yet)" >&2
	failed=${failed:+${failed}__}$1
}

flag() {
	echo "-D$1"
}

# has FILE ERE: does FILE contain a line matching ERE?
has() {
	grep -Eqs -- "$2" "$inc/$1"
}

# body FILE STRUCT: the lines of the definition "struct STRUCT {" ... "};"
# in FILE, wherever it starts on its line and however deeply its members
# nest (braces counted; comments are not parsed, and a header with a brace
# in a comment inside the struct would confuse it, which none has). Fails
# when the definition is not there.
body() {
	awk -v s="$2" '
		function opens(line,   t) {
			t = line; sub(/\/\/.*/, "", t)
			return gsub(/\{/, "{", t) - gsub(/\}/, "}", t)
		}
		!inside && $0 ~ ("^[ \t]*struct[ \t]+" s "[ \t]*\\{") {
			inside = 1; depth = 0; found = 1
		}
		inside {
			print
			depth += opens($0)
			if (depth <= 0) inside = 0
		}
		END { exit !found }' "$inc/$1" 2>/dev/null
}

# struct_has FILE STRUCT ERE: does the body of STRUCT in FILE contain a line
# matching ERE? 2 when there is no such struct in FILE at all.
struct_has() {
	b=$(body "$1" "$2") || return 2
	printf '%s\n' "$b" | grep -Eq -- "$3"
}

# nargs FILE FUNC: the parameter counts of every prototype of FUNC in FILE
# (declarations ending in ";", not macros, not calls inside inline
# functions' bodies), distinct values one per line. Commas inside nested
# parentheses (function pointer parameters) do not count.
nargs() {
	awk -v f="$2" '
		# Has the parameter list collected in text closed? Then record
		# its count when a ";" follows (a declaration, not a definition).
		function closed(   i, c, d) {
			d = 1
			for (i = 1; i <= length(text); i++) {
				c = substr(text, i, 1)
				if (c == "(") d++
				else if (c == ")" && --d == 0) break
			}
			if (d != 0)
				return 0
			if (substr(text, i + 1) ~ /^[ \t]*(__[a-z_]+(\([^)]*\))?[ \t]*)*;/)
				seen[count(substr(text, 1, i - 1))] = 1
			return 1
		}
		function count(args,   i, c, d, n, blank) {
			d = 0; n = 1; blank = 1
			for (i = 1; i <= length(args); i++) {
				c = substr(args, i, 1)
				if (c == "(") d++
				else if (c == ")") d--
				else if (c == "," && d == 0) n++
				if (c !~ /[ \t]/) blank = 0
			}
			if (blank || args ~ /^[ \t]*void[ \t]*$/) return 0
			return n
		}
		{
			if (on) {
				text = text " " $0
			} else if ($0 !~ /^#/ &&
				   $0 ~ ("^[A-Za-z_][A-Za-z0-9_ \t\\*]*[ \t\\*]" f "\\(")) {
				# A prototype: a return type, then FUNC( on one line.
				on = 1
				text = substr($0, index($0, f "(") + length(f) + 1)
			}
			if (on && closed())
				on = 0
		}
		END { for (n in seen) print n }' "$inc/$1" 2>/dev/null | sort -n
}

# one_nargs PROBE FILE FUNC FLAG: FLAG=N for the one parameter count of
# FUNC, or the probe fails.
one_nargs() {
	n=$(nargs "$2" "$3")
	case "$n" in
	'') fail "$1" "no prototype of $3() in include/$2" ;;
	*[!0-9]*) fail "$1" "prototypes of $3() with different parameter counts ($(echo $n))" ;;
	*) flag "$4=$n" ;;
	esac
}

# ---- tracing ------------------------------------------------------------------
# __assign_str(field) copies from the __string() source (6.10+); before, it
# took the source as a second argument.
if has trace/stages/stage6_event_callback.h '#define __assign_str\(dst\)'; then
	flag DRMACCT_HAVE_ASSIGN_STR_ONE_ARG
elif ! has trace/stages/stage6_event_callback.h '#define __assign_str\(dst, *src\)'; then
	fail assign_str "no __assign_str(dst) or __assign_str(dst, src)"
fi

# ---- hrtimer_setup() (6.13; hrtimer_init() goes away in 6.15) ----------------
if has linux/hrtimer.h 'void hrtimer_setup\(struct hrtimer'; then
	flag DRMACCT_HAVE_HRTIMER_SETUP
elif ! has linux/hrtimer.h 'void hrtimer_init\(struct hrtimer'; then
	fail hrtimer_setup "neither hrtimer_setup() nor hrtimer_init()"
fi

# ---- platform_driver.remove: int with .remove_new beside, or void (6.11) ------
struct_has linux/platform_device.h platform_driver 'int \(\*remove\)\(struct platform_device'
rint=$?
struct_has linux/platform_device.h platform_driver 'void \(\*remove\)\(struct platform_device'
rvoid=$?
if [ $rint = 0 ] && [ $rvoid != 0 ]; then
	flag DRMACCT_HAVE_PLATFORM_REMOVE_INT
	struct_has linux/platform_device.h platform_driver 'void \(\*remove_new\)\(struct platform_device' &&
		flag DRMACCT_HAVE_PLATFORM_REMOVE_NEW
elif [ $rvoid != 0 ]; then
	fail platform_remove "struct platform_driver has no int or void remove()"
fi

# ---- DRM core: fdinfo, client ids and names ------------------------------------
# drm_show_fdinfo() prints drm-driver, drm-client-id and drm-pdev, then
# calls drm_driver.show_fdinfo(printer, file) (6.5+): both or neither.
has drm/drm_file.h 'void drm_show_fdinfo\(struct seq_file'
core=$?
struct_has drm/drm_drv.h drm_driver '\(\*show_fdinfo\)\(struct drm_printer'
hook=$?
if [ $hook = 2 ]; then
	fail drm_driver "no struct drm_driver in include/drm/drm_drv.h"
elif [ $core = 0 ] && [ $hook = 0 ]; then
	flag DRMACCT_HAVE_DRM_SHOW_FDINFO
elif [ $core = 0 ] || [ $hook = 0 ]; then
	fail show_fdinfo "drm_show_fdinfo() and drm_driver.show_fdinfo(struct drm_printer *) not both"
fi
# drm_file.client_id (6.5+), which drm_show_fdinfo() prints.
struct_has drm/drm_file.h drm_file 'u64[[:space:]]+client_id;'
case $? in
0) flag DRMACCT_HAVE_DRM_FILE_CLIENT_ID ;;
2) fail drm_file "no struct drm_file in include/drm/drm_file.h" ;;
*) [ $core = 0 ] && fail client_id "drm_show_fdinfo() without drm_file.client_id" ;;
esac
# drm_file.client_name, set by DRM_IOCTL_SET_CLIENT_NAME and printed as
# drm-client-name by drm_show_fdinfo() (6.13+).
if struct_has drm/drm_file.h drm_file 'const char[[:space:]]*\*[[:space:]]*client_name;'; then
	if [ $core = 0 ] && has uapi/drm/drm.h 'DRM_IOCTL_SET_CLIENT_NAME'; then
		flag DRMACCT_HAVE_DRM_FILE_CLIENT_NAME
	else
		fail client_name "drm_file.client_name without drm_show_fdinfo() or DRM_IOCTL_SET_CLIENT_NAME"
	fi
elif has uapi/drm/drm.h 'DRM_IOCTL_SET_CLIENT_NAME'; then
	fail client_name "DRM_IOCTL_SET_CLIENT_NAME without drm_file.client_name"
fi

# ---- struct drm_driver members --------------------------------------------------
# .gem_prime_mmap (gone in 6.6: PRIME mmap goes through the object's funcs).
struct_has drm/drm_drv.h drm_driver '\(\*gem_prime_mmap\)' &&
	flag DRMACCT_HAVE_GEM_PRIME_MMAP
# .date (gone in 6.14).
struct_has drm/drm_drv.h drm_driver '^[[:space:]]*(const[[:space:]]+)?char[[:space:]]*\*[[:space:]]*date;' &&
	flag DRMACCT_HAVE_DRIVER_DATE

# ---- shmem helpers ------------------------------------------------------------------
# Before 6.5 the helpers lock their own pages_lock and drm_gem_shmem_madvise()
# locks itself; then the caller holds the object's dma_resv lock around it;
# from 6.16 that locked variant is drm_gem_shmem_madvise_locked(), and
# drm_gem_shmem_madvise() is exported for KUnit only.
struct_has drm/drm_gem_shmem_helper.h drm_gem_shmem_object 'struct mutex[[:space:]]+pages_lock;'
case $? in
0) flag DRMACCT_HAVE_SHMEM_PAGES_LOCK ;;
2) fail shmem "no struct drm_gem_shmem_object in include/drm/drm_gem_shmem_helper.h" ;;
*)
	if has drm/drm_gem_shmem_helper.h 'int drm_gem_shmem_madvise_locked\('; then
		flag DRMACCT_HAVE_SHMEM_MADVISE_LOCKED
	elif ! has drm/drm_gem_shmem_helper.h 'int drm_gem_shmem_madvise\('; then
		fail shmem_madvise "neither drm_gem_shmem_madvise_locked() nor drm_gem_shmem_madvise()"
	fi
	;;
esac

# ---- drm_sched ------------------------------------------------------------------------
# drm_sched_init(): struct drm_sched_init_args (upstream 6.15, Debian's 6.1
# and 6.12 as backports), with or without num_rqs; else positional.
struct_has drm/gpu_scheduler.h drm_sched_init_args 'const struct drm_sched_backend_ops'
case $? in
0)
	flag DRMACCT_HAVE_SCHED_INIT_ARGS
	struct_has drm/gpu_scheduler.h drm_sched_init_args 'u32[[:space:]]+num_rqs;' &&
		flag DRMACCT_HAVE_SCHED_INIT_ARGS_NUM_RQS
	# A submission workqueue the driver may pass (6.8+; Debian's 6.1
	# backport has none: a kthread per scheduler there).
	struct_has drm/gpu_scheduler.h drm_sched_init_args 'struct[[:space:]]+workqueue_struct[[:space:]]*\*[[:space:]]*submit_wq;' &&
		flag DRMACCT_HAVE_SCHED_INIT_ARGS_SUBMIT_WQ
	;;
1) fail sched_init_args "struct drm_sched_init_args without its ops member" ;;
*) one_nargs sched_init drm/gpu_scheduler.h drm_sched_init DRMACCT_SCHED_INIT_NARGS ;;
esac

# drm_sched_start(sched[, bool full_recovery | int errno]) after a reset.
if has drm/gpu_scheduler.h 'void drm_sched_start\(struct drm_gpu_scheduler \*sched\);'; then
	flag DRMACCT_SCHED_START_SCHED_ONLY
elif has drm/gpu_scheduler.h 'void drm_sched_start\(struct drm_gpu_scheduler \*sched, bool full_recovery\);'; then
	flag DRMACCT_SCHED_START_FULL_RECOVERY
elif has drm/gpu_scheduler.h 'void drm_sched_start\(struct drm_gpu_scheduler \*sched, int errno\);'; then
	flag DRMACCT_SCHED_START_ERRNO
else
	fail sched_start "no known drm_sched_start() prototype"
fi

# drm_sched_job_init(job, entity, [credits,] owner[, drm_client_id]).
one_nargs sched_job_init drm/gpu_scheduler.h drm_sched_job_init DRMACCT_SCHED_JOB_INIT_NARGS

# What timedout_job() returns: NOMINAL for "the scheduler may go on"
# before 6.17; then RESET for a reset done and NO_HANG for a job that is
# merely slow, which the scheduler puts back on its pending list itself.
nominal=1; nohang=1
has drm/gpu_scheduler.h '^[[:space:]]*DRM_GPU_SCHED_STAT_NOMINAL,' && nominal=0
has drm/gpu_scheduler.h '^[[:space:]]*DRM_GPU_SCHED_STAT_NO_HANG,?' &&
	has drm/gpu_scheduler.h '^[[:space:]]*DRM_GPU_SCHED_STAT_RESET,' && nohang=0
if [ $nominal = 0 ] && [ $nohang != 0 ]; then
	:
elif [ $nohang = 0 ] && [ $nominal != 0 ]; then
	flag DRMACCT_HAVE_SCHED_STAT_NO_HANG
else
	fail sched_stat "enum drm_gpu_sched_stat has neither NOMINAL nor RESET/NO_HANG alone"
fi

# ---- KUnit -----------------------------------------------------------------------------
# KUNIT_CASE_SLOW() marks a case that takes a second or more (6.6+: test
# attributes); before, only KUNIT_CASE(). Read even where the config has no
# KUnit (the KUnit module is then not built, kernel/compat.mk).
if has kunit/test.h '^#define KUNIT_CASE_SLOW\('; then
	flag DRMACCT_HAVE_KUNIT_CASE_SLOW
elif [ -f "$inc/kunit/test.h" ] && ! has kunit/test.h '^#define KUNIT_CASE\('; then
	fail kunit_case "include/kunit/test.h without KUNIT_CASE()"
fi

[ -n "$failed" ] && echo "-DDRMACCT_PROBE_FAILED=$failed"
exit 0
