#!/bin/bash
# SPDX-License-Identifier: MIT
#
# doc-examples.sh [DRMACCT] - the README's "What you see" examples, from a
# real run: a synthetic /proc tree made of two fdinfo samples of
# shared/fixtures/fdinfo (an amdgpu client printing current and legacy
# memory keys, and i915), whose busy counters advance at set rates while
# `drmacct list -i 1` and `drmacct top` (in tmux, 100x12) read it.
#
# Rates: amdgpu compute 60 %, i915 render 12 %, video 45 % of one engine
# (capacity 2: 22.5 %), the others idle. Printed: both outputs, as the
# README shows them (the process names are made up), and the last line of
# `drmacct validate` on the amdgpu text.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$here/build/host/drmacct}
fix=${DRMACCT_SHARED:-$here/../shared}/fixtures/fdinfo
[ -x "$bin" ] || { echo "doc-examples.sh: no $bin (make host)" >&2; exit 1; }
[ -r "$fix/amdgpu_2.txt" ] || { echo "doc-examples.sh: no $fix/amdgpu_2.txt" >&2; exit 1; }
command -v tmux >/dev/null || { echo "doc-examples.sh: tmux not found" >&2; exit 1; }

tmp=$(mktemp -d)
sock=drmacct-doc-$$
feeder=
cleanup() {
	[ -z "$feeder" ] || kill "$feeder" 2>/dev/null || true
	tmux -L "$sock" kill-server 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
R=$tmp/proc
mkdir -p "$R/2217/fd" "$R/2217/fdinfo" "$R/3120/fd" "$R/3120/fdinfo"
echo blender >"$R/2217/comm"
echo mpv >"$R/3120/comm"
ln -s /dev/char/226:128 "$R/2217/fd/5"
ln -s /dev/char/226:129 "$R/3120/fd/4"

# $1: milliseconds since the start. Each file is replaced whole
# (written beside it, then renamed over it), as procfs serves it.
write() {
	local k=$1
	sed "s/^drm-engine-compute:.*/drm-engine-compute:\t$((46464671 + k * 600000)) ns/" \
		"$fix/amdgpu_2.txt" >"$R/2217/fdinfo/.5" && mv "$R/2217/fdinfo/.5" "$R/2217/fdinfo/5"
	sed -e "s/^drm-engine-render:.*/drm-engine-render:  $((9288864723 + k * 120000)) ns/" \
		-e "s/^drm-engine-video:.*/drm-engine-video:   $((k * 450000)) ns/" \
		"$fix/i915_1.txt" >"$R/3120/fdinfo/.4" && mv "$R/3120/fdinfo/.4" "$R/3120/fdinfo/4"
}
write 0
(
	t0=$(date +%s%N)
	while :; do
		sleep 0.01
		write $((($(date +%s%N) - t0) / 1000000))
	done
) &
feeder=$!

echo '$ drmacct list -i 1'
"$bin" list -i 1 --proc-root "$R" 2>&1 | sed 's/ *$//'
echo
echo '$ drmacct top   # 100x12'
tmux -L "$sock" new-session -d -x 100 -y 12 \
	"env LANG=C.UTF-8 TERM=tmux-256color $bin top --proc-root $R"
# until both clients show their utilisation (the second sample; 30 s at most)
for _ in $(seq 300); do
	tmux -L "$sock" capture-pane -p | grep -q '^renderD129 i915  GPU [^0-9]*[1-9][0-9]*%' && break
	sleep 0.1
done
sleep 1	# one more update: the numbers of a whole interval on both
tmux -L "$sock" capture-pane -p | sed 's/ *$//'
echo
echo '$ drmacct validate amdgpu_2.txt | tail -n 1'
"$bin" validate "$fix/amdgpu_2.txt" | tail -n 1
