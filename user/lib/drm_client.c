// SPDX-License-Identifier: MIT
/*
 * drm_client.c - DRM_IOCTL_SET_CLIENT_NAME. See drm_client.h.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>

#include <drm.h>

#include "drm_client.h"

/*
 * The ioctl's number and argument, from the kernel's uapi drm.h (6.13);
 * the libdrm of older distributions (bookworm's 2.4.114) has neither.
 */
#ifndef DRM_IOCTL_SET_CLIENT_NAME
struct drm_set_client_name {
	__u64 name_len;
	__u64 name;
};
#define DRM_IOCTL_SET_CLIENT_NAME	DRM_IOWR(0xD1, struct drm_set_client_name)
#endif

static int set_name(int fd, const char *name, size_t len)
{
	struct drm_set_client_name a;

	memset(&a, 0, sizeof(a));
	a.name_len = len;
	a.name = (uintptr_t)name;
	return ioctl(fd, DRM_IOCTL_SET_CLIENT_NAME, &a) ? -errno : 0;
}

int dac_drm_set_client_name(int fd, const char *name, size_t len)
{
	/*
	 * A kernel without the ioctl and a bad name both answer EINVAL. A
	 * one-byte name at address 0 tells them apart without touching the
	 * file's name: the ioctl, where it exists, fails to copy it (EFAULT).
	 */
	int ret = set_name(fd, NULL, 1);

	if (ret == -EINVAL)
		return -EOPNOTSUPP;
	if (ret != -EFAULT)
		return ret ? ret : -EIO;	/* it took a name from address 0?! */
	return set_name(fd, name, len);
}

int dac_drm_driver_name(int fd, char *out, size_t len)
{
	struct drm_version v;

	if (!len)
		return -EINVAL;
	memset(&v, 0, sizeof(v));
	v.name = out;
	v.name_len = len - 1;
	if (ioctl(fd, DRM_IOCTL_VERSION, &v))
		return -errno;
	/* name_len is now the whole name's length; what fits was copied */
	out[v.name_len < len - 1 ? v.name_len : len - 1] = '\0';
	return 0;
}
