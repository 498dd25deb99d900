#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# version.sh [--commit] - the version of this tree, printed on stdout.
#
# In a git checkout (a .git beside this script's directory): `git describe`
# of the newest v<N>... tag, without the v (1.2, or 1.2-5-gabc1234 five
# commits later); before any tag, 0.0-<commits>-g<hash>. "-dirty" is added
# when the work tree has changes, unless --commit (make dist: the tarball
# holds the commit). In a release tarball: the content of .tarball-version,
# which make dist writes. Exit status 1 when neither is there.
set -u
dirty=--dirty
[ "${1:-}" = --commit ] && dirty=
cd "$(dirname "$0")/.." || exit 1
if [ -e .git ] && command -v git >/dev/null 2>&1 && git rev-parse -q --verify HEAD >/dev/null 2>&1; then
	if v=$(git describe --tags --match 'v[0-9]*' $dirty 2>/dev/null); then
		echo "${v#v}"
		exit 0
	fi
	v=0.0-$(git rev-list --count HEAD)-g$(git rev-parse --short HEAD) || exit 1
	if [ -n "$dirty" ]; then
		git update-index -q --refresh >/dev/null 2>&1
		git diff-index --quiet HEAD -- || v=$v-dirty
	fi
	echo "$v"
elif [ -r .tarball-version ]; then
	head -n 1 .tarball-version
else
	echo "version.sh: not a git checkout and no .tarball-version" >&2
	exit 1
fi
