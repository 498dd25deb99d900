# SPDX-License-Identifier: GPL-2.0
# Included by the Kbuild file of every kernel/ module: the feature flags
# drmacct_compat.h decides on, probed from the headers of the kernel being
# built for (see compat-probe.sh; never from the version number).
ccflags-y += -I$(src)/../include \
	$(shell $(src)/../compat-probe.sh $(srctree))

# KUnit: the kernel's config decides (CONFIG_KUNIT y or m), never its
# version. Debian's kernels have it off, our 7.3 build on; a Kbuild file
# adds a KUnit module with obj-$(DRMACCT_KUNIT) (always a module: built-in
# objects of an external module build would go nowhere).
DRMACCT_KUNIT := $(if $(CONFIG_KUNIT),m)
