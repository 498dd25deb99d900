/* SPDX-License-Identifier: MIT */
/*
 * drm_client.h - what a DRM client can say about itself to the DRM core.
 */
#ifndef DRMACCT_DRM_CLIENT_H
#define DRMACCT_DRM_CLIENT_H

#include <stddef.h>

/*
 * DRM_IOCTL_SET_CLIENT_NAME (Linux 6.13+): names the open DRM file @fd for
 * drm-client-name in its fdinfo, for any driver. @name is @len bytes (no
 * NUL needed), at most 64 printable ASCII characters without whitespace;
 * @len 0 clears the name.
 *
 * Return: 0; -EOPNOTSUPP when the kernel has no such ioctl (before 6.13,
 * where a driver may have a name ioctl of its own); else the negative
 * errno of the ioctl (-EINVAL for a bad name, -ENOTTY when @fd is not a
 * DRM device, -EFAULT, ...).
 */
int dac_drm_set_client_name(int fd, const char *name, size_t len);

/*
 * DRM_IOCTL_VERSION: the name the driver of DRM file @fd registered as
 * ("vgem"), in @out of @len bytes (truncated, NUL-terminated). Works for
 * every DRM driver, also one without a driver in sysfs (vgem's platform
 * device has none). Return: 0 or the negative errno of the ioctl
 * (-ENOTTY: not a DRM device); -EINVAL for @len 0.
 */
int dac_drm_driver_name(int fd, char *out, size_t len);

#endif
