#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test_compat_probe.sh — kernel/compat-probe.sh recognises each known form
# and refuses what it does not know: on small header trees written here
# (only the lines the probes read, in the forms of 6.1, 6.12 and 7.3, then
# broken on purpose), on the real trees of the target kernels where they are
# installed, and drmacct_compat.h turns a failed probe into a build error
# that names it. TAP, framed for tap-summary.sh.
set -u
here=$(cd "$(dirname "$0")" && pwd)
probe=$here/../kernel/compat-probe.sh
compat_inc=$here/../kernel/include
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 fails=0
t() { n=$((n + 1)); if "${@:2}"; then echo "ok $n $1"; else echo "not ok $n $1"; fails=$((fails + 1)); fi; }
has() { grep -qxF -- "$2" <<<"$1"; }
lacks() { ! grep -q -- "$2" <<<"$1"; }

# tree DIR: a 7.3-shaped header tree (tab-indented members, as the kernel).
tree() {
	local d=$1
	mkdir -p "$d"/include/{trace/stages,linux,drm,uapi/drm,kunit}
	printf '#define __assign_str(dst)\t\t\t\t\t\t\\\n\tdo {} while (0)\n' \
		>"$d/include/trace/stages/stage6_event_callback.h"
	printf 'void hrtimer_setup(struct hrtimer *timer, enum hrtimer_restart (*function)(struct hrtimer *),\n\t\t   clockid_t clock_id, enum hrtimer_mode mode);\n' \
		>"$d/include/linux/hrtimer.h"
	printf 'struct platform_driver {\n\tint (*probe)(struct platform_device *);\n\tvoid (*remove)(struct platform_device *);\n};\n' \
		>"$d/include/linux/platform_device.h"
	printf 'struct drm_file {\n\tbool authenticated;\n\tunion {\n\t\tint a;\n\t} u;\n\tu64 client_id;\n\tconst char *client_name;\n};\nvoid drm_show_fdinfo(struct seq_file *m, struct file *f);\n' \
		>"$d/include/drm/drm_file.h"
	printf 'struct drm_driver {\n\tvoid (*show_fdinfo)(struct drm_printer *p, struct drm_file *f);\n\tconst char *name;\n};\n' \
		>"$d/include/drm/drm_drv.h"
	printf '#define DRM_IOCTL_SET_CLIENT_NAME\tDRM_IOWR(0xD1, struct drm_set_client_name)\n' \
		>"$d/include/uapi/drm/drm.h"
	printf 'struct drm_gem_shmem_object {\n\tstruct drm_gem_object base;\n\trefcount_t pages_pin_count;\n};\nint drm_gem_shmem_madvise_locked(struct drm_gem_shmem_object *shmem, int madv);\n' \
		>"$d/include/drm/drm_gem_shmem_helper.h"
	printf '#define KUNIT_CASE(test_name)\t\t\t\\\n\t\t{ .run_case = test_name }\n#define KUNIT_CASE_SLOW(test_name)\t\t\t\\\n\t\t{ .run_case = test_name }\n' \
		>"$d/include/kunit/test.h"
	cat >"$d/include/drm/gpu_scheduler.h" <<'EOF'
enum drm_gpu_sched_stat {
	DRM_GPU_SCHED_STAT_NONE,
	DRM_GPU_SCHED_STAT_RESET,
	DRM_GPU_SCHED_STAT_ENODEV,
	DRM_GPU_SCHED_STAT_NO_HANG,
};
struct drm_sched_init_args {
	const struct drm_sched_backend_ops *ops;
	u32 num_rqs;
};
int drm_sched_init(struct drm_gpu_scheduler *sched,
		   const struct drm_sched_init_args *args);
void drm_sched_start(struct drm_gpu_scheduler *sched, int errno);
/* drm_sched_job_init(), in a comment: no prototype */
int drm_sched_job_init(struct drm_sched_job *job,
		       struct drm_sched_entity *entity,
		       u32 credits, void *owner,
		       u64 drm_client_id);
EOF
}

run() { sh "$probe" "$1" 2>"$1.err"; }

tree "$tmp/k73"
k73=$(run "$tmp/k73")

# 6.1's forms: two-argument __assign_str, hrtimer_init, int remove with
# remove_new, no core fdinfo, pages_lock, NOMINAL, 3-argument job init
# (one prototype split over lines, one parameter a function pointer).
tree "$tmp/k61"
d=$tmp/k61/include
printf '#define __assign_str(dst, src)\t\\\n\tstrcpy(dst, src)\n' >"$d/trace/stages/stage6_event_callback.h"
printf 'void hrtimer_init(struct hrtimer *timer, clockid_t which_clock,\n\t\t  enum hrtimer_mode mode);\n' >"$d/linux/hrtimer.h"
printf 'struct platform_driver {\n\tint (*remove)(struct platform_device *);\n\tvoid (*remove_new)(struct platform_device *);\n};\n' >"$d/linux/platform_device.h"
printf 'struct drm_file {\n\tbool authenticated;\n};\n' >"$d/drm/drm_file.h"
printf 'struct drm_driver {\n\tint (*gem_prime_mmap)(struct drm_gem_object *obj, struct vm_area_struct *vma);\n\tchar *date;\n};\n' >"$d/drm/drm_drv.h"
: >"$d/uapi/drm/drm.h"
printf 'struct drm_gem_shmem_object {\n\tstruct mutex pages_lock;\n};\nint drm_gem_shmem_madvise(struct drm_gem_shmem_object *shmem, int madv);\n' >"$d/drm/drm_gem_shmem_helper.h"
sed -i -e 's/DRM_GPU_SCHED_STAT_RESET,/DRM_GPU_SCHED_STAT_NOMINAL,/' -e '/NO_HANG/d' \
	-e 's/int errno);/bool full_recovery);/' \
	-e '/^int drm_sched_job_init/,$d' "$d/drm/gpu_scheduler.h"
printf 'int drm_sched_job_init(struct drm_sched_job *job,\n\t\t       void (*cb)(int a, int b),\n\t\t       void *owner);\n' >>"$d/drm/gpu_scheduler.h"
sed -i '/KUNIT_CASE_SLOW/,$d' "$d/kunit/test.h"	# test attributes came in 6.6
k61=$(run "$tmp/k61")

# Broken on purpose, one probe each.
cp -r "$tmp/k73" "$tmp/stat" && sed -i 's/NO_HANG/SOMETHING_NEW/' "$tmp/stat/include/drm/gpu_scheduler.h"
stat=$(run "$tmp/stat")
cp -r "$tmp/k73" "$tmp/twice" &&
	printf 'int drm_sched_job_init(struct drm_sched_job *job, void *owner);\n' >>"$tmp/twice/include/drm/gpu_scheduler.h"
twice=$(run "$tmp/twice")
cp -r "$tmp/k73" "$tmp/hook" && sed -i '/show_fdinfo/d' "$tmp/hook/include/drm/drm_drv.h"
hook=$(run "$tmp/hook")
cp -r "$tmp/k73" "$tmp/indent" &&
	sed -i 's/^struct drm_file {/  struct drm_file {/' "$tmp/indent/include/drm/drm_file.h"
indent=$(run "$tmp/indent")
cp -r "$tmp/k73" "$tmp/kunit" && sed -i 's/KUNIT_CASE/KUNIT_TEST/g' "$tmp/kunit/include/kunit/test.h"
kunit=$(run "$tmp/kunit")
cp -r "$tmp/k73" "$tmp/nokunit" && rm -r "$tmp/nokunit/include/kunit"
nokunit=$(run "$tmp/nokunit")
mkdir -p "$tmp/none"
none=$(run "$tmp/none"); nrc=$?

# The build error a failed probe becomes (before any kernel header).
cerr=$(echo '#include "drmacct_compat.h"' | gcc -fsyntax-only -I"$compat_inc" \
	-DDRMACCT_PROBE_FAILED=sched_stat__shmem_madvise -x c - 2>&1)

echo "# drmacct-vm: begin test_compat_probe"
echo "TAP version 13"
t "7.3 forms: core name, madvise_locked, NO_HANG, errno start, 5-arg job init, KUNIT_CASE_SLOW" bash -c '
	for f in DRMACCT_HAVE_DRM_FILE_CLIENT_NAME DRMACCT_HAVE_SHMEM_MADVISE_LOCKED \
		DRMACCT_HAVE_SCHED_STAT_NO_HANG DRMACCT_SCHED_START_ERRNO \
		DRMACCT_SCHED_JOB_INIT_NARGS=5 DRMACCT_HAVE_HRTIMER_SETUP \
		DRMACCT_HAVE_DRM_SHOW_FDINFO DRMACCT_HAVE_SCHED_INIT_ARGS_NUM_RQS \
		DRMACCT_HAVE_KUNIT_CASE_SLOW; do
		grep -qx -- "-D$f" <<<"$0" || exit 1
	done' "$k73"
t "7.3 forms: no date, no pages_lock, void remove, nothing failed" bash -c '
	! grep -Eq "DRIVER_DATE|PAGES_LOCK|PLATFORM_REMOVE|PROBE_FAILED" <<<"$0"' "$k73"
t "6.1 forms: NARGS=3 across lines and a function-pointer parameter" has "$k61" -DDRMACCT_SCHED_JOB_INIT_NARGS=3
t "6.1 forms: date, gem_prime_mmap, pages_lock, int remove + remove_new" bash -c '
	for f in DRMACCT_HAVE_DRIVER_DATE DRMACCT_HAVE_GEM_PRIME_MMAP DRMACCT_HAVE_SHMEM_PAGES_LOCK \
		DRMACCT_HAVE_PLATFORM_REMOVE_INT DRMACCT_HAVE_PLATFORM_REMOVE_NEW \
		DRMACCT_SCHED_START_FULL_RECOVERY; do
		grep -qx -- "-D$f" <<<"$0" || exit 1
	done' "$k61"
t "6.1 forms: no core fdinfo, no NO_HANG, one-arg assign_str absent, no KUNIT_CASE_SLOW, nothing failed" bash -c '
	! grep -Eq "SHOW_FDINFO|CLIENT_ID|NO_HANG|ASSIGN_STR|HRTIMER_SETUP|KUNIT|PROBE_FAILED" <<<"$0"' "$k61"
t "an unknown drm_gpu_sched_stat fails sched_stat" has "$stat" -DDRMACCT_PROBE_FAILED=sched_stat
t "the failed probe says why on stderr" grep -q 'compat-probe: sched_stat: ' "$tmp/stat.err"
t "two prototypes with different counts fail sched_job_init" has "$twice" -DDRMACCT_PROBE_FAILED=sched_job_init
t "drm_show_fdinfo() without the driver hook fails show_fdinfo" has "$hook" -DDRMACCT_PROBE_FAILED=show_fdinfo
t "kunit/test.h without KUNIT_CASE() fails kunit_case" has "$kunit" -DDRMACCT_PROBE_FAILED=kunit_case
t "no kunit/test.h at all: no KUnit flag, nothing failed" bash -c '
	! grep -Eq "KUNIT|PROBE_FAILED" <<<"$0"' "$nokunit"
t "an indented struct with a nested union is still read" has "$indent" -DDRMACCT_HAVE_DRM_FILE_CLIENT_NAME
t "not a kernel tree: exit 2 and kernel_tree failed" bash -c '[ "$0" = 2 ] && grep -qx -- -DDRMACCT_PROBE_FAILED=kernel_tree <<<"$1"' "$nrc" "$none"
t "a failed probe stops the build naming every failed probe" \
	grep -q 'recognised no known form of: sched_stat__shmem_madvise ' <<<"$cerr"
# The installed trees of the target kernels: each known, none failed. A
# build dir's Makefile includes the source tree's (Debian's -common
# headers; our own 7.3 build's src/), which is what kbuild probes.
newest=$("$here/../kernel/build-kernel.sh" newest --check 2>/dev/null)
for r in $("$here/../kernel/target-kernels.sh" 2>/dev/null) $(sed -n 2p <<<"$newest"); do
	b=/lib/modules/$r/build
	[ -e "$b" ] || b=$(sed -n 1p <<<"$newest")/lib/modules/$r/build
	src=$(sed -n 's|^include \(/.*\)/Makefile$|\1|p' "$b/Makefile" 2>/dev/null | tail -n1)
	out=$(sh "$probe" "${src:-$b}" 2>/dev/null)
	t "$r: every probe knows this kernel" bash -c '! grep -q PROBE_FAILED <<<"$0" && grep -q SCHED_JOB_INIT_NARGS <<<"$0"' "$out"
done
echo "1..$n"
echo "# drmacct-vm: end test_compat_probe rc=$([ $fails = 0 ] && echo 0 || echo 1)"
