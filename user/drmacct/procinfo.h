/* SPDX-License-Identifier: MIT */
/*
 * procinfo.h - what /proc says about a process beyond its comm: the full
 * command line and the cgroup v2 path (top's command and cgroup columns).
 */
#ifndef DRMACCT_PROCINFO_H
#define DRMACCT_PROCINFO_H

#include <sys/types.h>

/*
 * @proc_root/@pid/cmdline (@proc_root NULL: /proc) with the NULs between
 * the arguments turned into spaces and the trailing ones dropped, of any
 * length. NULL when it cannot be read or is empty (a kernel thread, a
 * zombie); else a string the caller frees.
 */
char *cli_proc_cmdline(const char *proc_root, pid_t pid);

/*
 * The cgroup v2 path of @pid: the "0::PATH" line of @proc_root/@pid/cgroup.
 * NULL when there is none (cgroup v1 only, unreadable); else the caller frees.
 */
char *cli_proc_cgroup(const char *proc_root, pid_t pid);

#endif /* DRMACCT_PROCINFO_H */
