#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# make run demo: several simgpu clients on different engines, some with
# buffers, running in the background; while they run, print the DRM keys of
# every simgpu file descriptor they hold (/proc/PID/fdinfo/FD), the live
# per-client table (drmacct top) and the spec validation verdict (drmacct
# validate --all). Every client id fdinfo shows is matched against the
# drmacct_client_open tracepoint (one id everywhere: on 6.5+ kernels the DRM
# core prints drm-client-id, and the helper's events must use the same id),
# and, on 6.17+ kernels, against the client_id of the DRM scheduler's own
# drm_sched_job_queue events. Each fd's drm-client-name is counted: once,
# whoever prints it (the DRM core on 6.13+, the helper before).
# Afterwards each client's ground truth (Σ busy ns, Σ cycles from WAIT).
#
# Runs in the guest (busybox sh) after modprobe drmacct simgpu.

out=/tmp/demo-clients
rm -rf "$out"
mkdir -p "$out"

if ! command -v simgpu-load >/dev/null 2>&1; then
	echo "simgpu-load is not installed in the guest; nothing to demo"
	exit 1
fi

start() { # start NAME ARGS...: one background client, output in $out/NAME.log
	name=$1
	shift
	simgpu-load --quiet --name "$name" "$@" >"$out/$name.log" 2>&1 &
	echo "$!" >"$out/$name.pid"
	echo "started $name (pid $!): simgpu-load $*"
}

echo "kernel $(uname -r)"
ev=/sys/kernel/tracing/events/drmacct/drmacct_client_open
if [ -w "$ev/enable" ]; then
	echo 1 >"$ev/enable"
	: >/sys/kernel/tracing/trace
fi
# The scheduler's events with client ids (6.17+): drm_sched_job_queue.
qev=/sys/kernel/tracing/events/gpu_scheduler/drm_sched_job_queue
[ -w "$qev/enable" ] && echo 1 >"$qev/enable"

# Engines by name: render (1 instance), copy (2), video (1), compute (total-cycles).
start game     --engine render  --duration 4ms  --time 10s --parallel 2 --buffers 4 --buffer-size 1M --hold 1s
start blitter  --engine copy    --op copy --buffers 2 --buffer-size 4M --time 10s --parallel 2 --hold 1s
start encoder  --engine video   --duration 15ms --time 10s --buffers 1 --buffer-size 256K --hold 1s
start trainer  --engine compute --duration 40ms --time 10s --hold 1s
start mixed    --engine render,video,compute --duration 2ms --time 10s --fork 2 --hold 1s

# Let them get going, then show what fdinfo says about each one.
sleep 1.5
echo
echo "== fdinfo of every simgpu client (DRM keys only)"
for p in /proc/[0-9]*; do
	pid=${p#/proc/}
	for fd in "$p"/fd/*; do
		target=$(readlink "$fd" 2>/dev/null) || continue
		case "$target" in /dev/dri/renderD*) ;; *) continue ;; esac
		n=${fd##*/}
		grep -q '^drm-driver:[[:space:]]*simgpu' "$p/fdinfo/$n" 2>/dev/null || continue
		echo "-- pid $pid ($(cat "$p/comm" 2>/dev/null)) fd $n -> $target"
		grep '^drm-' "$p/fdinfo/$n"
		names=$(grep -c '^drm-client-name:' "$p/fdinfo/$n")
		[ "$names" -gt 1 ] && echo "!! drm-client-name appears $names times"
		sed -n 's/^drm-client-id:[[:space:]]*//p' "$p/fdinfo/$n" >>"$out/ids"
	done
done

if [ -w "$ev/enable" ]; then
	echo
	echo "== drm-client-id in fdinfo against the drmacct_client_open tracepoint"
	trace=$(cat /sys/kernel/tracing/trace)
	echo 0 >"$ev/enable"
	bad=0
	for id in $(sort -un "$out/ids"); do
		line=$(echo "$trace" | grep -m1 "drmacct_client_open: client_id=$id ")
		if [ -n "$line" ]; then
			echo "client $id: ${line#*drmacct_client_open: }"
		else
			echo "client $id: NO drmacct_client_open event with this id"
			bad=1
		fi
	done
	[ "$bad" = 0 ] && echo "every client id in fdinfo is the id drmacct's events carry"
fi
if [ -w "$qev/enable" ]; then
	echo
	echo "== drm-client-id in fdinfo against gpu_scheduler:drm_sched_job_queue"
	echo 0 >"$qev/enable"
	trace=$(cat /sys/kernel/tracing/trace)
	bad=0
	for id in $(sort -un "$out/ids"); do
		n=$(echo "$trace" | grep 'drm_sched_job_queue:' | grep -c "client_id:$id\$")
		if [ "$n" -gt 0 ]; then
			echo "client $id: $n jobs queued with client_id:$id"
		else
			echo "client $id: NO drm_sched_job_queue event with this client_id"
			bad=1
		fi
	done
	[ "$bad" = 0 ] && echo "every client id in fdinfo is the client_id of the DRM scheduler's events"
fi

echo
echo "== live per-client table: drmacct top (3 snapshots, 1 s apart)"
drmacct top --batch --iterations=3 --interval=1
echo
echo "== per-process view: drmacct list --processes"
drmacct list --processes
echo
echo "== spec validation of every DRM client: drmacct validate --all --quiet"
if drmacct validate --all --quiet; then
	echo "VERDICT: every simgpu client's fdinfo follows the usage stats spec"
else
	echo "VERDICT: drmacct validate found errors (see above)"
fi

echo
echo "== waiting for the clients to finish"
for f in "$out"/*.pid; do
	wait "$(cat "$f")" 2>/dev/null
done
wait
for f in "$out"/*.log; do
	name=${f##*/}
	echo "-- ${name%.log}"
	cat "$f"
done
