# SPDX-License-Identifier: GPL-2.0
# Included by the Kbuild file of every kernel/ module: the feature flags
# drmacct_compat.h decides on, probed from the headers of the kernel being
# built for (see compat-probe.sh; never from the version number).
ccflags-y += -I$(src)/../include \
	$(shell $(src)/../compat-probe.sh $(srctree))
