#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test_install.sh - `make install DESTDIR=... PREFIX=/usr` as a packager
# runs it on a distribution without apt: apt-get is not on PATH. Then, on
# what it installed: the binary runs and knows its version; the file list
# is what the Makefile says; libdrmacct's soname, its exported symbols
# (exactly the functions of include/drmacct/, all dac_*), its dependencies;
# the example program built against the installed copy through pkg-config,
# shared and static, prints the right numbers; bash, zsh and fish complete
# from the one option table; the systemd units pass `systemd-analyze
# verify` and its security review; install-strip strips; uninstall leaves
# nothing. TAP on stdout, framed for tap-summary.sh. Run from the
# repository root.
set -u
unset MAKEFLAGS MFLAGS MAKELEVEL	# run by make test: the makes here are their own
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
D=$tmp/dest
n=0 fails=0
ok() { n=$((n + 1)); echo "ok $n $1"; }
fail() { n=$((n + 1)); echo "not ok $n $1"; fails=$((fails + 1)); shift; for l in "$@"; do echo "# $l"; done; }
# t NAME CMD...: a test point passing when CMD succeeds
t() { local name=$1; shift; if "$@"; then ok "$name"; else fail "$name" "failed: $*"; fi; }
# eq NAME GOT WANT
eq() { if [ "$2" = "$3" ]; then ok "$1"; else fail "$1" "got:  $(printf %q "$2")" "want: $(printf %q "$3")"; fi; }
has() { case $2 in *"$3"*) ok "$1" ;; *) fail "$1" "missing: $3" "in: $(printf %s "$2" | head -c 2000)" ;; esac; }

echo "# drmacct-vm: begin test_install"
echo "TAP version 13"

# A PATH of everything this one has but apt.
nobin=$tmp/bin
mkdir -p "$nobin"
IFS=: read -ra dirs <<<"$PATH"
for d in "${dirs[@]}"; do
	for f in "$d"/*; do
		b=${f##*/}
		case $b in apt | apt-get | apt-cache | aptitude) continue ;; esac
		[ -x "$f" ] && [ ! -e "$nobin/$b" ] && ln -s "$f" "$nobin/$b"
	done
done
t "apt-get is not on the test's PATH" bash -c "! PATH='$nobin' command -v apt-get"

version=$(cd "$repo" && scripts/version.sh)
out=$(cd "$repo" && PATH=$nobin make --no-print-directory install DESTDIR="$D" PREFIX=/usr \
	WERROR=1 2>&1)
rc=$?
eq "make install without apt-get exits 0" "$rc" 0
if [ $rc != 0 ]; then
	printf '%s\n' "$out" | tail -20 | sed 's/^/# /'
	echo "1..$n"
	echo "# drmacct-vm: end test_install rc=1"
	exit 1
fi
case $out in *apt-get* | *"deps:"*) fail "make install ran no package step" "$out" ;; *) ok "make install ran no package step" ;; esac

# ---- the files ------------------------------------------------------------
got=$(cd "$D" && find . -type f -o -type l | sort | tr '\n' ' ')
want="./usr/bin/drmacct ./usr/include/drmacct/counters.h ./usr/include/drmacct/discover.h \
./usr/include/drmacct/drmacct.h ./usr/include/drmacct/fdinfo.h ./usr/include/drmacct/tracker.h \
./usr/lib/libdrmacct.a ./usr/lib/libdrmacct.so ./usr/lib/libdrmacct.so.0 \
./usr/lib/libdrmacct.so.0.1.0 ./usr/lib/pkgconfig/libdrmacct.pc \
./usr/lib/systemd/system/drmacct-exporter.service ./usr/lib/systemd/system/drmacct-textfile.service \
./usr/lib/systemd/system/drmacct-textfile.timer ./usr/share/bash-completion/completions/drmacct \
./usr/share/doc/drmacct/COPYING ./usr/share/doc/drmacct/LICENSES/BSD-2-Clause \
./usr/share/doc/drmacct/LICENSES/GPL-2.0 ./usr/share/doc/drmacct/LICENSES/LGPL-2.1 \
./usr/share/doc/drmacct/LICENSES/Linux-syscall-note ./usr/share/doc/drmacct/LICENSES/MIT \
./usr/share/doc/drmacct/bpf.rst ./usr/share/doc/drmacct/conformance.rst \
./usr/share/doc/drmacct/counters.rst ./usr/share/doc/drmacct/examples/drmacct-clients.c ./usr/share/doc/drmacct/examples/web-config.yml \
./usr/share/doc/drmacct/exporter.rst ./usr/share/doc/drmacct/fdinfo-validation.rst \
./usr/share/doc/drmacct/json-schema.rst \
./usr/share/doc/drmacct/libdrmacct.rst ./usr/share/doc/drmacct/record-format.rst \
./usr/share/drmacct/bpftrace/client-busy-per-engine.bt \
./usr/share/drmacct/bpftrace/sched-jobs-per-ring-617.bt ./usr/share/drmacct/bpftrace/sched-jobs-per-ring.bt \
./usr/share/drmacct/bpftrace/sched-time-per-client.bt \
./usr/share/drmacct/bpftrace/sched-time-per-process-617.bt \
./usr/share/drmacct/bpftrace/sched-time-per-process.bt ./usr/share/drmacct/perfetto-drmacct.pbtxt \
./usr/share/fish/vendor_completions.d/drmacct.fish ./usr/share/man/man1/drmacct.1 \
./usr/share/zsh/site-functions/_drmacct "
eq "the installed files" "$got" "$want"
# Every one-liner bpf.rst names is installed, as the text the VM test runs.
eq "one .bt file per bpftrace one-liner of bpf.rst" \
	"$(ls "$D/usr/share/drmacct/bpftrace" | sed 's/\.bt$//' | LC_ALL=C sort | tr '\n' ' ')" \
	"$(sed -n 's/^\.\. bpftrace: //p' "$repo/Documentation/bpf.rst" | LC_ALL=C sort | tr '\n' ' ')"
has "sched-time-per-process-617.bt is the 6.17 one-liner" \
	"$(cat "$D/usr/share/drmacct/bpftrace/sched-time-per-process-617.bt")" "gpu_scheduler:drm_sched_job_run"
# The Perfetto config enables the group of every event drmacct.ko defines.
events=$(sed -n 's/^TRACE_EVENT(\([a-z_]*\),.*/\1/p' "$repo/kernel/drmacct/drmacct_trace.h" | sort | tr '\n' ' ')
eq "drmacct.ko's events (drmacct_trace.h)" "$events" \
	"drmacct_client_close drmacct_client_open drmacct_device_name drmacct_job_begin drmacct_job_end drmacct_mem_change "
cfg=$(cat "$D/usr/share/drmacct/perfetto-drmacct.pbtxt")
has "the Perfetto config takes every drmacct event" "$cfg" 'ftrace_events: "drmacct/*"'
has "the Perfetto config takes every gpu_scheduler event" "$cfg" 'ftrace_events: "gpu_scheduler/*"'
eq "the binary is 0755" "$(stat -c %a "$D/usr/bin/drmacct")" 755
eq "the man page is 0644" "$(stat -c %a "$D/usr/share/man/man1/drmacct.1")" 644

# ---- the binary -----------------------------------------------------------
eq "drmacct --version is scripts/version.sh's" "$("$D/usr/bin/drmacct" --version)" "drmacct $version"
out=$(printf 'drm-driver:\tx\n' | "$D/usr/bin/drmacct" validate - 2>&1)
has "the installed binary validates" "$out" "<stdin>: driver x: 0 errors"
R=$tmp/proc
mkdir -p "$R/100/fd" "$R/100/fdinfo" "$R/200/fd" "$R/200/fdinfo"
echo game >"$R/100/comm"
echo enc >"$R/200/comm"
ln -s /dev/char/226:128 "$R/100/fd/9"
ln -s /dev/char/226:129 "$R/200/fd/3"
printf 'drm-driver:\tsimgpu\ndrm-client-id:\t7\ndrm-engine-render:\t1234567890 ns\ndrm-engine-copy:\t5 ns\ndrm-engine-capacity-copy:\t2\ndrm-total-system:\t8 MiB\ndrm-resident-system:\t4096 KiB\n' >"$R/100/fdinfo/9"
printf 'drm-driver:\tsimgpu\ndrm-client-id:\t8\ndrm-engine-render:\t42 ns\ndrm-engine-capacity-render:\t0\n' >"$R/200/fdinfo/3"
out=$("$D/usr/bin/drmacct" export --prometheus --proc-root "$R")
has "the installed exporter's numbers" "$out" 'drmacct_client_engine_busy_seconds_total{driver="simgpu",device="renderD128",client_id="7",engine="render"} 1.234567890'
out=$(MANWIDTH=80 man -l "$D/usr/share/man/man1/drmacct.1" 2>/dev/null | col -b)
has "the man page" "$out" "drmacct - per-client GPU usage accounting"
has "the man page has the version" "$(cat "$D/usr/share/man/man1/drmacct.1")" "$version"
# Every Documentation/NAME.rst the page and --help cite is installed as
# DOCDIR/NAME.rst, where the page says they are.
page=$(sed 's/\\-/-/g' "$D/usr/share/man/man1/drmacct.1")
cited=$( { printf '%s\n' "$page"; for c in "" $("$D/usr/bin/drmacct" --help |
	sed -n 's/^  \([a-z][a-z-]*\) .*/\1/p'); do "$D/usr/bin/drmacct" $c --help; done; } |
	grep -o 'Documentation/[A-Za-z0-9_-]*\.rst' | grep -v '/NAME\.rst$' | sort -u)
missing=
for f in $cited; do
	[ -f "$D/usr/share/doc/drmacct/${f#Documentation/}" ] || missing="$missing $f"
done
eq "every Documentation/*.rst the page and --help cite is installed" "$missing" ""
t "the page cites some of them" test -n "$cited"
# ... and what those installed documents cite in turn (the kernel's own
# Documentation/gpu/drm-usage-stats.rst aside): no reference leads out.
missing=
for d in "$D"/usr/share/doc/drmacct/*.rst; do
	for f in $(grep -o '[A-Za-z0-9_/-]*\.rst' "$d" | grep -v '^Documentation/gpu/' | sort -u); do
		[ -f "$D/usr/share/doc/drmacct/${f##*/}" ] || missing="$missing ${d##*/}:$f"
	done
done
eq "every .rst an installed document cites is installed" "$missing" ""
has "the page says where they are" "$page" "/usr/share/doc/drmacct/NAME.rst"

# ---- libdrmacct -------------------------------------------------------------
so=$D/usr/lib/libdrmacct.so.0.1.0
eq "the soname" "$(readelf -d "$so" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')" libdrmacct.so.0
needed=$(readelf -d "$so" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p' | tr '\n' ' ')
case $needed in *libbpf* | *libelf* | *libmicrohttpd* | *libgnutls*) fail "the library needs only libdrm and libc" "$needed" ;; *) ok "the library needs only libdrm and libc ($needed)" ;; esac
exported=$(nm -D --defined-only "$so" | awk '{print $3}' | grep -v '^DRMACCT_' | sed 's/@.*//' | sort)
printf '#include <drmacct/drmacct.h>\n' >"$tmp/aux.c"
gcc -std=gnu11 -I"$D/usr/include" -aux-info "$tmp/aux.info" -c "$tmp/aux.c" -o "$tmp/aux.o"
declared=$(grep "^/\* $D/usr/include/drmacct/" "$tmp/aux.info" | grep -o 'dac_[a-z0-9_]* (' |
	tr -d ' (' | grep -v '_test_fail_alloc$' | sort -u)
eq "exported symbols are exactly the functions of include/drmacct/" "$exported" "$declared"
eq "every exported symbol is dac_*" "$(printf '%s\n' "$exported" | grep -vc '^dac_')" 0
t "58 or more functions exported" test "$(printf '%s\n' "$exported" | wc -l)" -ge 58
eq "symbols carry the version node" "$(nm -D --defined-only "$so" | grep -c 'dac_fdinfo_parse@@DRMACCT_0.1')" 1
eq "internal functions are not exported" "$(nm -D "$so" | grep -c -e ' dac_prom_' -e ' drec_' -e ' dac_json_')" 0

# ---- the example, through pkg-config ------------------------------------------
export PKG_CONFIG_PATH=$D/usr/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$D
eq "pkg-config --modversion" "$(pkg-config --modversion libdrmacct)" 0.1.0
ex=$D/usr/share/doc/drmacct/examples/drmacct-clients.c
want="client simgpu renderD128 7 pid 100 comm game errors 0
  engine render busy 1234567890 capacity 1
  engine copy busy 5 capacity 2
  region system total 8388608 resident 4194304
client simgpu renderD129 8 pid 200 comm enc errors 1
  engine render busy 42 capacity 1
2 clients, 1 spec errors, 2 DRM fds read"
# shellcheck disable=SC2046
if gcc -std=gnu11 -Wall -Wextra -Werror "$ex" $(pkg-config --cflags --libs libdrmacct) \
	-o "$tmp/ex-shared" 2>"$tmp/cc.log"; then
	ok "the example builds with pkg-config --cflags --libs"
	out=$(LD_LIBRARY_PATH=$D/usr/lib "$tmp/ex-shared" "$R" 2>&1)
	eq "the example (shared) prints the clients" "$out" "$want"
	has "it runs on the installed libdrmacct.so.0" \
		"$(LD_LIBRARY_PATH=$D/usr/lib ldd "$tmp/ex-shared")" "libdrmacct.so.0 => $D/usr/lib/libdrmacct.so.0"
else
	fail "the example builds with pkg-config --cflags --libs" "$(cat "$tmp/cc.log")"
fi
# shellcheck disable=SC2046
if gcc -std=gnu11 -Wall -Wextra -Werror -static "$ex" \
	$(pkg-config --static --cflags --libs libdrmacct) -o "$tmp/ex-static" 2>"$tmp/cc.log"; then
	ok "the example builds with pkg-config --static, -static"
	eq "the example (static) prints the clients" "$("$tmp/ex-static" "$R" 2>&1)" "$want"
	has "the static example is static" "$(LC_ALL=C ldd "$tmp/ex-static" 2>&1)" "not a dynamic executable"
else
	fail "the example builds with pkg-config --static" "$(cat "$tmp/cc.log")"
fi
out=$(LD_LIBRARY_PATH=$D/usr/lib "$tmp/ex-shared" /nonexistent/proc 2>&1)
has "the example says why it cannot walk" "$out" "drmacct-clients: No such file or directory"
unset PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR

# ---- completions: one table, three shells -----------------------------------------
# The table has every option of every command's --help, and no other.
tab=$repo/user/drmacct/options.tab
bin=$D/usr/bin/drmacct
helpopts() { "$bin" "$@" --help | grep -oE '(^|[ ,])--[a-z][a-z0-9-]*' | tr -d ' ,' | sort -u | tr '\n' ' '; }
tabopts() { awk -F'|' -v c="$1" '$1 == "option" && $2 == c { print "--" $4 }' "$tab" | sort -u | tr '\n' ' '; }
cmds=$(awk -F'|' '$1 == "command" { print $2 }' "$tab" | tr '\n' ' ')
eq "the table has the binary's commands" "$cmds" "$("$bin" --help | awk '/^Commands:/ { f = 1; next } f && /^  [a-z]/ { print $1 }' | tr '\n' ' ')"
for c in $cmds; do
	[ "$c" = bpf ] && continue
	eq "the table has $c's options" "$(tabopts "$c")" "$(helpopts "$c")"
done
for s in start stop status dump; do
	eq "the table has bpf $s's options" "$(tabopts "bpf/$s")" "$(helpopts bpf "$s")"
done

bc() { PATH=$D/usr/bin:$PATH bash -c "source '$D/usr/share/bash-completion/completions/drmacct'; COMP_WORDS=($1); COMP_CWORD=$2; _drmacct; echo \"\${COMPREPLY[*]}\""; }
eq "bash: commands" "$(bc "drmacct li" 1)" list
eq "bash: options" "$(bc "drmacct list --so" 2)" "--sort --source"
eq "bash: values" "$(bc "drmacct top --sort ''" 3)" "util mem pid id"
eq "bash: --opt=value" "$(bc "drmacct list --spec = ''" 4)" "current 2022"
eq "bash: bpf subcommands" "$(bc "drmacct bpf st" 2)" "start stop status"
eq "bash: a bpf subcommand's options" "$(bc "drmacct bpf status --" 3)" "--dir --help --json"
eq "bash: export's new options" "$(bc "drmacct export --in" 2)" "--insecure --interval"
fc() { fish -c "source '$D/usr/share/fish/vendor_completions.d/drmacct.fish'; complete -C '$1'" | cut -f1 | tr '\n' ' '; }
if command -v fish >/dev/null; then
	eq "fish: options" "$(fc "drmacct list --so")" "--sort --source "
	eq "fish: values" "$(fc "drmacct top --sort ")" "id mem pid util "
	eq "fish: bpf subcommands" "$(fc "drmacct bpf st")" "start status stop "
	eq "fish: export's web config" "$(fc "drmacct export --web")" "--web-config "
else
	echo "ok $((n += 1)) fish # SKIP fish not installed"
fi
if command -v zsh >/dev/null; then
	zc() { "$here/zsh-complete.zsh" "$D/usr/share/zsh/site-functions" "$1"; }
	out=$(zc "drmacct list --so")
	has "zsh: options with descriptions" "$out" "--sort    -- sort key"
	has "zsh: options with descriptions (2)" "$out" "--source  -- where the clients come from"
	has "zsh: values" "$(zc "drmacct top --sort=")" "id    mem   pid   util"
	has "zsh: bpf subcommands" "$(zc "drmacct bpf st")" "start   status  stop"
else
	echo "ok $((n += 1)) zsh # SKIP zsh not installed"
fi

# ---- systemd units ----------------------------------------------------------------
# verify wants the binary and the man page the units name: the installed
# ones, through the DESTDIR (ExecStart rewritten, MANPATH).
if command -v systemd-analyze >/dev/null; then
	mkdir -p "$tmp/units"
	for u in "$D"/usr/lib/systemd/system/*; do
		sed "s|/usr/bin/drmacct|$D/usr/bin/drmacct|" "$u" >"$tmp/units/${u##*/}"
	done
	out=$(MANPATH=$D/usr/share/man systemd-analyze verify "$tmp"/units/* 2>&1)
	rc=$?
	if [ $rc = 0 ] && [ -z "$out" ]; then ok "systemd-analyze verify: the units"; else fail "systemd-analyze verify: the units" "$out"; fi
	for s in drmacct-exporter drmacct-textfile; do
		e=$(systemd-analyze security --offline=true "$tmp/units/$s.service" 2>&1 |
			sed -n 's/.*Overall exposure level for .*: \([0-9.]*\) .*/\1/p')
		if [ -n "$e" ] && awk "BEGIN { exit !($e <= 2.5) }"; then
			ok "$s.service: exposure $e (systemd-analyze security), at most 2.5"
		else
			fail "$s.service: exposure '$e' at most 2.5"
		fi
	done
	has "the exporter runs without a user of its own" "$(cat "$tmp/units/drmacct-exporter.service")" "DynamicUser=yes"
	has "with only the two capabilities" "$(cat "$tmp/units/drmacct-exporter.service")" "AmbientCapabilities=CAP_DAC_READ_SEARCH CAP_SYS_PTRACE"
	has "the timer starts the textfile service" "$(systemd-analyze verify "$tmp/units/drmacct-textfile.timer" 2>&1; cat "$tmp/units/drmacct-textfile.timer")" "OnUnitActiveSec=15s"
else
	echo "ok $((n += 1)) systemd units # SKIP systemd-analyze not installed"
fi

# ---- a distribution's flags ----------------------------------------------------------
# Debian's hardening flags (dpkg-buildflags): each must show in the result.
out=$(cd "$repo" && PATH=$nobin make --no-print-directory install DESTDIR="$tmp/flags" PREFIX=/usr \
	CFLAGS='-g -O2 -fstack-protector-strong' CPPFLAGS='-D_FORTIFY_SOURCE=2' \
	LDFLAGS='-Wl,-z,relro -Wl,-z,now' 2>&1)
eq "make install with CFLAGS, CPPFLAGS, LDFLAGS" "$?" 0
for f in usr/bin/drmacct usr/lib/libdrmacct.so.0.1.0; do
	has "LDFLAGS reach $f (BIND_NOW)" "$(readelf -d "$tmp/flags/$f")" "BIND_NOW"
	t "CFLAGS reach $f (stack protector)" bash -c "nm -D '$tmp/flags/$f' | grep -q ' U __stack_chk_fail'"
	t "CPPFLAGS reach $f (fortify)" bash -c "nm -D '$tmp/flags/$f' | grep -q ' U __.*_chk@'"
done
case $(readelf -d "$D/usr/bin/drmacct" 2>/dev/null) in *BIND_NOW*) fail "... and not without them" ;; *) ok "... and not without them" ;; esac
t "the flags rebuilt the objects" test "$(grep -c -e '-D_FORTIFY_SOURCE=2' <<<"$out")" -gt 10
eq "no -Werror and no selftests/ include in a distribution build" \
	"$(grep -c -e '-Werror' -e '-Iselftests' <<<"$out")" 0

# ---- install-strip, uninstall -------------------------------------------------------
out=$(cd "$repo" && PATH=$nobin make --no-print-directory install-strip DESTDIR="$tmp/strip" \
	PREFIX=/usr WERROR=1 2>&1)
eq "make install-strip exits 0" "$?" 0
eq "install-strip strips the binary" "$(readelf -S "$tmp/strip/usr/bin/drmacct" | grep -c -e '\.symtab' -e '\.debug_info')" 0
eq "... and the library" "$(readelf -S "$tmp/strip/usr/lib/libdrmacct.so.0.1.0" | grep -c -e '\.symtab' -e '\.debug_info')" 0
t "make install keeps the symbols (the distribution strips)" bash -c "readelf -S '$D/usr/bin/drmacct' | grep -q '\.symtab'"
out=$(cd "$repo" && PATH=$nobin make --no-print-directory uninstall DESTDIR="$D" PREFIX=/usr 2>&1)
eq "make uninstall exits 0" "$?" 0
eq "make uninstall leaves no file" "$(find "$D" -type f -o -type l | wc -l)" 0

echo "1..$n"
echo "# drmacct-vm: end test_install rc=$((fails ? 1 : 0))"
[ $fails = 0 ]
