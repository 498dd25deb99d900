#!/bin/bash
# SPDX-License-Identifier: MIT
#
# doc-examples.sh [--man] [DRMACCT] - documentation examples from real runs.
#
# Without --man: the README's "What you see" examples: a synthetic /proc
# tree made of two fdinfo samples of shared/fixtures/fdinfo (an amdgpu
# client printing current and legacy memory keys, and i915), whose busy
# counters advance at set rates while `drmacct list -i 1` and `drmacct top`
# (in tmux, 100x12) read it.
#
# Rates: amdgpu compute 60 %, i915 render 12 %, video 45 % of one engine
# (capacity 2: 22.5 %), the others idle. Printed: both outputs, as the
# README shows them (the process names are made up), and the last line of
# `drmacct validate` on the amdgpu text.
#
# With --man: the examples of drmacct(1) (Documentation/drmacct.rst) that
# need no GPU (those whose prompt is "$"; "#" marks runs in the test VM):
# `validate` of a file, and `validate`, `list`, `top`, `record`/`report`
# (and a report of the recording cut short) and `export` on the tree of
# its "Synthetic /proc trees" (printed with the path the page uses,
# /tmp/dmdoc). Each example block is printed as the page has it, after a
# line "----".
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
man=
if [ "${1:-}" = --man ]; then
	man=1
	shift
fi
bin=${1:-$here/build/host/drmacct}
fix=${DRMACCT_SHARED:-$here/../shared}/fixtures/fdinfo
[ -x "$bin" ] || { echo "doc-examples.sh: no $bin (make host)" >&2; exit 1; }
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
[ -r "$fix/amdgpu_2.txt" ] || { echo "doc-examples.sh: no $fix/amdgpu_2.txt" >&2; exit 1; }
command -v tmux >/dev/null || { echo "doc-examples.sh: tmux not found" >&2; exit 1; }

# ---- drmacct(1) ---------------------------------------------------------------

# The tree of "Synthetic /proc trees": client 7 of gfxapp (100) and its
# forked worker (101), client 9 of encoder (200). Busy time and cycles in
# the state $1 (render ns added to client 7, its cycles at 800 per us),
# $2 (copy ns added to client 9).
man_state() {
	local r7=$1 c9=$2 mem='drm-shared-system:\t0\ndrm-purgeable-system:\t0\ndrm-active-system:\t0\n'

	{
		printf 'drm-driver:\tsimgpu\ndrm-client-id:\t7\n'
		printf 'drm-engine-render:\t%d ns\ndrm-cycles-render:\t%d\n' $((1250000000 + r7)) \
			$((900000000 + r7 / 1000 * 800))
		printf 'drm-maxfreq-render:\t1000 MHz\ndrm-engine-copy:\t0 ns\ndrm-cycles-copy:\t0\n'
		printf 'drm-maxfreq-copy:\t1000 MHz\ndrm-engine-capacity-copy:\t2\n'
		printf "drm-total-system:\\t12 MiB\\ndrm-resident-system:\\t8 MiB\\n$mem"
	} >"$R/100/fdinfo/.3"
	cp "$R/100/fdinfo/.3" "$R/101/fdinfo/.3"
	mv "$R/100/fdinfo/.3" "$R/100/fdinfo/3"
	mv "$R/101/fdinfo/.3" "$R/101/fdinfo/3"
	[ -d "$R/200" ] || return 0
	{
		printf 'drm-driver:\tsimgpu\ndrm-client-id:\t9\n'
		printf 'drm-engine-render:\t400000000 ns\ndrm-cycles-render:\t300000000\n'
		printf 'drm-maxfreq-render:\t1000 MHz\ndrm-engine-copy:\t%d ns\n' $((200000000 + c9))
		printf 'drm-cycles-copy:\t0\ndrm-maxfreq-copy:\t1000 MHz\ndrm-engine-capacity-copy:\t2\n'
		printf "drm-total-system:\\t2 MiB\\ndrm-resident-system:\\t2 MiB\\n$mem"
	} >"$R/200/fdinfo/.5"
	mv "$R/200/fdinfo/.5" "$R/200/fdinfo/5"
}

man_tree() {
	rm -rf "$R"
	mkdir -p "$R/100/fd" "$R/100/fdinfo" "$R/101/fd" "$R/101/fdinfo" "$R/200/fd" "$R/200/fdinfo"
	echo gfxapp >"$R/100/comm"
	echo gfxapp-worker >"$R/101/comm"
	echo encoder >"$R/200/comm"
	ln -s /dev/char/226:128 "$R/100/fd/3"
	ln -s /dev/char/226:128 "$R/101/fd/3"
	ln -s /dev/char/226:128 "$R/200/fd/5"
	ln -s /dev/null "$R/200/fd/0"
	man_state 0 0
}

# Run "$@" (drmacct's arguments) as the page shows it: "$ drmacct ...",
# then its output (both streams) with the tree's path as the page has it.
man_run() {
	echo "\$ drmacct $*" | sed "s|$tmp|/tmp/dmdoc|g"
	"$bin" "$@" 2>&1 | sed "s|$tmp|/tmp/dmdoc|g"
}

man_examples() {
	R=$tmp/proc
	cd "$tmp"
	printf 'drm-driver: x\ndrm-client-id: 1\ndrm-engine-r: 5 ns\ndrm-engine-capacity-r: 0\n' >bad.txt
	echo ----
	man_run validate bad.txt || true
	echo '$ echo $?'
	"$bin" validate bad.txt >/dev/null 2>&1 && echo 0 || echo $?

	man_tree
	echo ----
	man_run validate --proc-root="$R" --all

	# during the 1 s interval: +0.5 s render to client 7, +0.1 s copy to 9
	echo ----
	(sleep 0.5; man_state 500000000 100000000) &
	man_run list -i 1 --proc-root="$R"
	wait

	# process 200 leaves after the first update
	man_tree
	echo ----
	echo '$ drmacct top -b -i 300ms --pid 200 --proc-root=/tmp/dmdoc/proc'
	# each update is flushed whole: 200 goes as soon as the first ends
	while IFS= read -r line; do
		printf '%s\n' "$line"
		[ "$line" != "1 client in 1 process" ] || rm -rf "$R/200"
	done < <("$bin" top -b -i 300ms --pid 200 --proc-root="$R" 2>"$tmp/top.err" || true)
	cat "$tmp/top.err"

	# +0.25 s render to client 7 twice and +0.1 s copy to 9 while recording
	man_tree
	echo ----
	(sleep 0.25; man_state 250000000 100000000; sleep 0.5; man_state 500000000 100000000) &
	man_run record --proc-root="$R" -o "$tmp/r.rec" -i 500ms -n 3
	wait
	man_run report "$tmp/r.rec"
	echo ----
	echo '$ head -c 100 r.rec > cut.rec'
	head -c 100 r.rec >cut.rec
	man_run report cut.rec || true
	echo '$ echo $?'
	"$bin" report cut.rec >/dev/null 2>&1 && echo 0 || echo $?

	man_tree
	echo ----
	echo '$ drmacct export --prometheus --proc-root=/tmp/dmdoc/proc --pid 200'
	"$bin" export --prometheus --proc-root="$R" --pid 200 >"$tmp/prom"
	head -n 4 "$tmp/prom"
	echo ...
	grep '^drmacct_client_info' "$tmp/prom"
	echo ...
	man_run export --listen 0.0.0.0:9400 || true
}

tmp=$(mktemp -d)
sock=drmacct-doc-$$
feeder=
cleanup() {
	[ -z "$feeder" ] || kill "$feeder" 2>/dev/null || true
	tmux -L "$sock" kill-server 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
[ -z "$man" ] || { man_examples; exit 0; }
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
