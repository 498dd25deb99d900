/* SPDX-License-Identifier: MIT */
/*
 * discover.h - find DRM and accel clients by walking /proc.
 *
 * The walk looks at every process's fd directory, stat()s each entry through
 * the /proc/PID/fd/N magic link (which never opens the file itself) and reads
 * /proc/PID/fdinfo/N only for character devices of the DRM (226) or accel
 * (261) major. Nothing else is opened. What could not be looked at
 * (permission denied, a process that exited or an fd that was closed while
 * the walk ran) is counted in struct dac_discover_stats so that callers
 * can say how complete their view is.
 *
 * Synthetic trees (tests, exporters' fixtures) are supported through
 * dac_discover_opts.proc_root. Such a tree marks a DRM fd as either
 *   - DIR/PID/fd/N is a symlink to a character device node of major 226/261
 *     (made with mknod, needs CAP_MKNOD), or
 *   - DIR/PID/fd/N is a symlink whose target is the literal "/dev/char/M:m"
 *     (the kernel's standard name for char device M:m); when that target
 *     does not exist, the walk reads M and m from the name. Works unprivileged.
 * plus DIR/PID/fdinfo/N with the fdinfo text and optionally DIR/PID/comm.
 * The second form is only honoured when proc_root is not "/proc".
 */
#ifndef DRMACCT_DISCOVER_H
#define DRMACCT_DISCOVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define DAC_DRM_MAJOR	226u
#define DAC_ACCEL_MAJOR	261u

struct dac_discover_opts {
	const char *proc_root;	/* NULL: "/proc" */
	pid_t pid;		/* > 0: only this process; 0: every process */
	int fd;			/* >= 0: only this fd (needs pid > 0); -1: all */
};

/* One DRM or accel fd found by the walk; valid only during the callback. */
struct dac_fd_info {
	pid_t pid;
	int fd;
	dev_t rdev;		/* device number of the char device */
	unsigned int major;	/* DAC_DRM_MAJOR or DAC_ACCEL_MAJOR */
	unsigned int minor;
	const char *comm;	/* process name; "" when it could not be read */
	const char *text;	/* fdinfo contents, NUL-terminated */
	size_t len;		/* strlen(text) */
	uint64_t read_ns;	/* CLOCK_MONOTONIC ns when the fdinfo was read
				 * (the middle of the read() that formatted it) */
	uint64_t read_start_ns;	/* just before that read(): the counters are
				 * no older than this (an upper bound of the
				 * time since, for comparing with other sources) */
};

struct dac_discover_stats {
	uint64_t procs;		/* process directories looked at */
	uint64_t fds;		/* fd entries stat()ed */
	uint64_t drm_fds;	/* DRM/accel fds whose fdinfo was read */
	uint64_t denied_procs;	/* fd directory not readable (EACCES/EPERM) */
	uint64_t denied_fds;	/* fdinfo of a DRM fd not readable */
	uint64_t denied_stat_fds; /* fd entries whose stat() was denied: device unknown,
				   * so not known to be DRM fds */
	uint64_t gone_procs;	/* process exited during the walk */
	uint64_t gone_fds;	/* fd closed during the walk */
	uint64_t errors;	/* anything else; last_errno says what */
	int last_errno;
};

/*
 * Called for every DRM/accel fd. A non-zero return stops the walk and is
 * returned by dac_discover_run().
 */
typedef int (*dac_discover_fn)(const struct dac_fd_info *fdi, void *arg);

struct dac_discover;

/*
 * Opens the proc root. Returns NULL with errno set when it cannot be opened
 * or the options are invalid (EINVAL).
 */
struct dac_discover *dac_discover_new(const struct dac_discover_opts *opts);
void dac_discover_free(struct dac_discover *d);

/*
 * One walk. @st (may be NULL) is zeroed and then filled. Returns 0, the
 * callback's non-zero value, or -errno when the walk itself failed (the proc
 * root could not be read, out of memory). With opts.pid set and that process
 * absent, returns -ESRCH; with opts.fd set and that fd not open, -EBADF; with
 * that fd open but not a DRM/accel device, -ENODEV.
 */
int dac_discover_run(struct dac_discover *d, dac_discover_fn fn, void *arg,
			 struct dac_discover_stats *st);

/* Is this device number a DRM or accel char device? */
bool dac_is_drm_rdev(unsigned int major);

/*
 * Human-readable summary of what the walk could not see, e.g.
 * "3 processes not readable (permission denied; run as root), 1 exited
 * during the walk". Empty string when everything was seen.
 */
void dac_discover_describe(const struct dac_discover_stats *st, char *buf, size_t len);

/*
 * What libdrm's device API (drmGetDeviceFromDevId()) knows about a DRM
 * device of this machine: its node name, bus and, for PCI, the slot and ids.
 */
struct dac_dev_id {
	char node[32];		/* "renderD128", "card0" */
	char bus[16];		/* "pci", "platform", "usb", "host1x" */
	bool has_pci;
	char slot[16];		/* PCI "0000:03:00.0" */
	uint16_t vendor_id, device_id, subvendor_id, subdevice_id;
};

/*
 * Identify DRM device @major:@minor through libdrm. Results (also "not
 * found") are cached for a few seconds per device, so callers may ask for
 * every client of every sample. Returns 0, or -ENODEV when libdrm does not
 * know the device (not on this machine: a synthetic tree; accel nodes).
 */
int dac_dev_identify(unsigned int major, unsigned int minor, struct dac_dev_id *out);

/*
 * The /dev/dri or /dev/accel name of device @major:@minor in @buf (cut to
 * @len - 1 bytes): libdrm's node name when dac_dev_identify() knows the
 * device, else from the minor: "card0" (DRM minors 0..63), "renderD128"
 * (128..191), "accel0", or "MAJOR:MINOR" for anything else. Returns @buf.
 */
const char *dac_dev_name(unsigned int major, unsigned int minor, char *buf, size_t len);

#endif /* DRMACCT_DISCOVER_H */
