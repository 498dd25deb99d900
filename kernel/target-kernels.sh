#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# target-kernels.sh — the kernels drmacct builds and tests for: every
# installed kernel with both a build dir (/lib/modules/R/build, from
# linux-headers-*) and an image (/boot/vmlinuz-R), of each series and
# flavour (6.1 amd64, 6.12 amd64, 6.12 rt-amd64...) only the newest release,
# printed oldest first. The running kernel plays no part.
set -u
for d in /lib/modules/*/build; do
	[ -d "$d" ] || continue
	r=${d%/build}
	r=${r#/lib/modules/}
	[ -r "/boot/vmlinuz-$r" ] && echo "$r"
done | sort -V | awk '
{
	series = $0
	sub(/^[0-9]+\.[0-9]+/, "", series)
	series = substr($0, 1, length($0) - length(series))
	flavour = $0
	sub(/^[0-9][0-9.]*(-[0-9]+)?(\+[a-z0-9]+)?-/, "", flavour)
	key = series " " flavour
	if (!(key in newest))
		order[++n] = key
	newest[key] = $0
}
END {
	for (i = 1; i <= n; i++)
		print newest[order[i]]
}' | sort -V
