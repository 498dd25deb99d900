#!/bin/sh
# SPDX-License-Identifier: MIT
#
# gen-man.sh RST VERSION > drmacct.1
#
# The manual page drmacct(1) from Documentation/drmacct.rst: the document's
# own title block is replaced by the NAME/section header rst2man wants, the
# rest goes through unchanged, so the page and the .rst never differ.
set -eu
rst=$1
version=$2
command -v rst2man >/dev/null 2>&1 || {
	echo "gen-man.sh: rst2man not found (install python3-docutils)" >&2
	exit 1
}
{
	printf '=======\ndrmacct\n=======\n\n'
	printf -- '--------------------------------------------------\n'
	printf 'per-client GPU usage accounting (DRM fdinfo stats)\n'
	printf -- '--------------------------------------------------\n\n'
	printf ':Manual section: 1\n:Manual group: drmacct %s\n:Version: %s\n\n' \
		"$version" "$version"
	# everything after the title block (the second line of '=')
	awk 'titles >= 2 { print; next } /^=+$/ { titles++ }' "$rst"
} | rst2man --halt=warning --no-generator --no-datestamp
