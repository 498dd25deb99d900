# SPDX-License-Identifier: GPL-2.0
#
# drmacct — one entry point.
#
#   make run     install what is missing, build, boot the VM, run the demo
#   make test    install, build, host unit tests + VM selftests, summary line
#   make bench   install, build, host benchmarks + VM benchmarks
#   make fuzz    long libFuzzer runs
#   make clean
#
# Developer targets: deps, all, modules, bpf, host, guest, initramfs,
# host-test, vm-test [T=prog] [REPEAT=n], vm-shell, runner-test.
#
# The target kernel is the newest installed linux-headers-*-amd64 (KVER=
# overrides); the host's running kernel is never consulted.

SHELL := /bin/bash
.DEFAULT_GOAL := all
.DELETE_ON_ERROR:
.SECONDARY:

# ----------------------------------------------------------------------------
# Packages. Installed by `make deps`, which every top-level goal runs first.
# ----------------------------------------------------------------------------
DEB_PACKAGES := make gcc libc6-dev binutils clang llvm libclang-rt-14-dev \
	linux-image-amd64 linux-headers-amd64 libbpf-dev bpftool dwarves \
	libelf-dev zlib1g-dev libdrm-dev qemu-system-x86 busybox-static kmod \
	cpio xz-utils gzip bpftrace prometheus

.PHONY: deps
deps:
	@missing=; for p in $(DEB_PACKAGES); do \
		dpkg-query -W -f='$${Status}' "$$p" 2>/dev/null | grep -q 'install ok installed' \
			|| missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "deps: installing$$missing"; \
		if [ "$$(id -u)" = 0 ]; then sudo=; else sudo=sudo; fi; \
		export DEBIAN_FRONTEND=noninteractive; \
		$$sudo apt-get update -q && \
		$$sudo apt-get install -y -q --no-install-recommends $$missing; \
	fi

# The public goals install packages first and then re-enter make, so that
# everything computed from what is installed (KVER, the kernel build dir) is
# computed after the install.
PUBLIC_GOALS := all run test bench fuzz
.PHONY: $(PUBLIC_GOALS)
$(PUBLIC_GOALS):
	@t0=$$(date +%s); $(MAKE) --no-print-directory deps || exit 1; \
	t1=$$(date +%s); echo "timing: packages $$((t1 - t0)) s"; \
	DRMACCT_T1=$$t1 $(MAKE) --no-print-directory do-$@

# ----------------------------------------------------------------------------
# Target kernel
# ----------------------------------------------------------------------------
KVER ?= $(shell ls -d /lib/modules/*/build 2>/dev/null | sed 's,/lib/modules/,,;s,/build,,' | sort -V | tail -n1)
KDIR ?= /lib/modules/$(KVER)/build
VMLINUZ ?= /boot/vmlinuz-$(KVER)

B := build
HB := $(B)/host
GB := $(B)/guest
VB := $(B)/vm
BB := $(B)/bpf
MB := $(B)/modules

# ----------------------------------------------------------------------------
# Flags
# ----------------------------------------------------------------------------
CC ?= gcc
CLANG ?= clang
INCLUDES := -Iuser/lib -Ikernel/include/uapi/drm -I/usr/include/libdrm \
	-Iselftests/harness -Iselftests/kernel -I$(BB)
WARN := -std=gnu11 -Wall -Wextra -Werror
SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined \
	-fno-omit-frame-pointer
HOST_CFLAGS := $(WARN) -g -O1 $(SAN) $(INCLUDES)
HOST_LDFLAGS := $(SAN)
# Host programs measured by `make bench` are built without sanitizers.
BENCH_CFLAGS := $(WARN) -g -O2 $(INCLUDES)
GUEST_CFLAGS := $(WARN) -g -O2 $(INCLUDES)
GUEST_LDFLAGS := -static
GUEST_LIBS := -lbpf -lelf -lz -lpthread
HOST_LIBS := -lbpf -lelf -lz -lpthread -lm
FUZZ_CFLAGS := -std=gnu11 -Wall -Wextra -Werror -g -O1 $(INCLUDES) \
	-fsanitize=fuzzer,address,undefined

# ----------------------------------------------------------------------------
# Sources (by convention; see README.md "Layout")
# ----------------------------------------------------------------------------
LIB_SRCS := $(wildcard user/lib/*.c)
CLI_SRCS := $(wildcard user/drmacct/*.c)
TOOL_SRCS := $(wildcard user/tools/*.c)
HTEST_SRCS := $(wildcard selftests/user/test_*.c)
HBENCH_SRCS := $(wildcard selftests/user/bench_*.c)
HSUP_SRCS := $(filter-out $(HTEST_SRCS) $(HBENCH_SRCS),$(wildcard selftests/user/*.c))
KTEST_SRCS := $(wildcard selftests/kernel/test_*.c)
KBENCH_SRCS := $(wildcard selftests/kernel/bench_*.c)
KSUP_SRCS := $(filter-out $(KTEST_SRCS) $(KBENCH_SRCS),$(wildcard selftests/kernel/*.c))
CTEST_SRCS := $(wildcard selftests/cli/test_*.c)
BTEST_SRCS := $(wildcard selftests/bpf/test_*.c)
BBENCH_SRCS := $(wildcard selftests/bpf/bench_*.c)
CSUP_SRCS := $(filter-out $(CTEST_SRCS),$(wildcard selftests/cli/*.c))
SELFCHECK_SRCS := $(wildcard selftests/vm/selfcheck/*.c)
FUZZ_SRCS := $(wildcard user/fuzz/fuzz_*.c)
BPF_SRCS := $(wildcard bpf/*.bpf.c)
KERNEL_SRCS := $(shell find kernel selftests/vm/testmod -name '*.[ch]' -o -name Kbuild 2>/dev/null) Kbuild

BPF_OBJS := $(BPF_SRCS:bpf/%.bpf.c=$(BB)/%.bpf.o)
BPF_SKELS := $(BPF_SRCS:bpf/%.bpf.c=$(BB)/%.skel.h)

HLIB := $(HB)/libdrmacct.a
GLIB := $(GB)/libdrmacct.a
BLIB := $(B)/bench/libdrmacct.a
HLIB_OBJS := $(LIB_SRCS:%.c=$(HB)/obj/%.o)
GLIB_OBJS := $(LIB_SRCS:%.c=$(GB)/obj/%.o)
BLIB_OBJS := $(LIB_SRCS:%.c=$(B)/bench/obj/%.o)

HOST_CLI := $(if $(CLI_SRCS),$(HB)/drmacct)
GUEST_CLI := $(if $(CLI_SRCS),$(GB)/bin/drmacct)
HOST_TOOLS := $(TOOL_SRCS:user/tools/%.c=$(HB)/%)
GUEST_TOOLS := $(TOOL_SRCS:user/tools/%.c=$(GB)/bin/%)
HOST_TESTS := $(HTEST_SRCS:selftests/user/%.c=$(HB)/tests/%)
HOST_BENCHES := $(HBENCH_SRCS:selftests/user/%.c=$(B)/bench/%)
GUEST_KTESTS := $(KTEST_SRCS:selftests/kernel/%.c=$(GB)/tests/%)
GUEST_CTESTS := $(CTEST_SRCS:selftests/cli/%.c=$(GB)/tests/%)
GUEST_BTESTS := $(BTEST_SRCS:selftests/bpf/%.c=$(GB)/tests/%)
GUEST_BBENCHES := $(BBENCH_SRCS:selftests/bpf/%.c=$(GB)/bench/%)
GUEST_KBENCHES := $(KBENCH_SRCS:selftests/kernel/%.c=$(GB)/bench/%)
GUEST_SELFCHECK := $(SELFCHECK_SRCS:selftests/vm/selfcheck/%.c=$(GB)/selfcheck/%)
FUZZERS := $(FUZZ_SRCS:user/fuzz/%.c=$(B)/fuzz/%)

HDT := $(HB)/obj/dtest.o
GDT := $(GB)/obj/dtest.o

# ----------------------------------------------------------------------------
# Top-level goals
# ----------------------------------------------------------------------------
.PHONY: do-all modules bpf host guest initramfs
do-all: modules bpf host guest initramfs

host: $(HLIB) $(HOST_CLI) $(HOST_TOOLS) $(HOST_TESTS)
guest: $(GLIB) $(GUEST_CLI) $(GUEST_TOOLS) $(GUEST_KTESTS) $(GUEST_CTESTS) $(GUEST_BTESTS) \
	$(GUEST_KBENCHES) $(GUEST_BBENCHES) $(GUEST_SELFCHECK)

# ---- kernel modules: kbuild in-tree objects, then BTF added to copies -------
MODULES_STAMP := $(MB)/.stamp
modules: $(MODULES_STAMP)
$(MODULES_STAMP): $(KERNEL_SRCS) $(B)/vmlinux-$(KVER)
	@test -d "$(KDIR)" || { echo "no kernel build dir $(KDIR) (KVER=$(KVER))"; exit 1; }
	$(MAKE) -C $(KDIR) M=$(CURDIR) W=1 modules 2>&1 | tee $(B)/kbuild.log
	@if grep -E 'warning:|error:' $(B)/kbuild.log; then \
		echo "modules: the kernel build printed warnings (W=1 must be clean)"; exit 1; fi
	@rm -rf $(MB) && mkdir -p $(MB)
	@for ko in $$(find kernel selftests/vm/testmod -name '*.ko' 2>/dev/null); do \
		cp $$ko $(MB)/ && \
		LLVM_OBJCOPY=objcopy pahole -J --btf_gen_floats -j --lang_exclude=rust \
			--btf_base $(B)/vmlinux-$(KVER) $(MB)/$$(basename $$ko) || exit 1; \
		echo "  BTF     $(MB)/$$(basename $$ko)"; \
	done
	@touch $@

$(B)/vmlinux-$(KVER): bpf/gen-vmlinux.sh
	@mkdir -p $(B)
	bpf/gen-vmlinux.sh $(VMLINUZ) $@

# ---- BPF -------------------------------------------------------------------
bpf: $(BPF_SKELS)
$(BB)/vmlinux.h: $(B)/vmlinux-$(KVER)
	@mkdir -p $(BB)
	bpftool btf dump file $< format c > $@.tmp && mv $@.tmp $@

$(BB)/%.bpf.o: bpf/%.bpf.c $(BB)/vmlinux.h $(wildcard bpf/*.h)
	$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_x86 -I$(BB) -Ibpf -Iuser/lib \
		-Wall -Werror -c $< -o $@

$(BB)/%.skel.h: $(BB)/%.bpf.o
	bpftool gen skeleton $< > $@.tmp && mv $@.tmp $@

# ---- libdrmacct ------------------------------------------------------------
$(HB)/obj/%.o: %.c $(BPF_SKELS)
	@mkdir -p $(dir $@)
	$(CC) $(HOST_CFLAGS) -MMD -MP -c $< -o $@
$(GB)/obj/%.o: %.c $(BPF_SKELS)
	@mkdir -p $(dir $@)
	$(CC) $(GUEST_CFLAGS) -MMD -MP -c $< -o $@
$(B)/bench/obj/%.o: %.c $(BPF_SKELS)
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_CFLAGS) -MMD -MP -c $< -o $@
$(HDT): selftests/harness/dtest.c selftests/harness/dtest.h
	@mkdir -p $(dir $@)
	$(CC) $(HOST_CFLAGS) -c $< -o $@
$(GDT): selftests/harness/dtest.c selftests/harness/dtest.h
	@mkdir -p $(dir $@)
	$(CC) $(GUEST_CFLAGS) -c $< -o $@

$(HLIB): $(HLIB_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^
$(GLIB): $(GLIB_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^
$(BLIB): $(BLIB_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

# ---- programs ----------------------------------------------------------------
$(HB)/drmacct: $(CLI_SRCS:%.c=$(HB)/obj/%.o) $(HLIB)
	$(CC) $(HOST_LDFLAGS) $^ $(HOST_LIBS) -o $@
$(GB)/bin/drmacct: $(CLI_SRCS:%.c=$(GB)/obj/%.o) $(GLIB)
	@mkdir -p $(dir $@)
	$(CC) $(GUEST_LDFLAGS) $^ $(GUEST_LIBS) -o $@
$(HB)/%: $(HB)/obj/user/tools/%.o $(HLIB)
	$(CC) $(HOST_LDFLAGS) $^ $(HOST_LIBS) -o $@
$(GB)/bin/%: $(GB)/obj/user/tools/%.o $(GLIB)
	@mkdir -p $(dir $@)
	$(CC) $(GUEST_LDFLAGS) $^ $(GUEST_LIBS) -o $@

$(HB)/tests/%: $(HB)/obj/selftests/user/%.o $(HSUP_SRCS:%.c=$(HB)/obj/%.o) $(HDT) $(HLIB)
	@mkdir -p $(dir $@)
	$(CC) $(HOST_LDFLAGS) $^ $(HOST_LIBS) -o $@
$(B)/bench/%: $(B)/bench/obj/selftests/user/%.o $(HSUP_SRCS:%.c=$(B)/bench/obj/%.o) $(B)/bench/obj/selftests/harness/dtest.o $(BLIB)
	$(CC) $^ $(HOST_LIBS) -o $@
# The harness's own test program (built without sanitizers: it crashes on
# purpose).
$(B)/bench/harness-sample: selftests/harness/sample.c $(B)/bench/obj/selftests/harness/dtest.o
	$(CC) $(BENCH_CFLAGS) $^ -o $@
$(B)/bench/obj/selftests/harness/dtest.o: selftests/harness/dtest.c
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_CFLAGS) -c $< -o $@

$(GB)/tests/test_%: $(GB)/obj/selftests/kernel/test_%.o $(KSUP_SRCS:%.c=$(GB)/obj/%.o) $(GDT) $(GLIB)
	@mkdir -p $(dir $@)
	$(CC) $(GUEST_LDFLAGS) $^ $(GUEST_LIBS) -o $@
$(GB)/bench/bench_%: $(GB)/obj/selftests/kernel/bench_%.o $(KSUP_SRCS:%.c=$(GB)/obj/%.o) $(GDT) $(GLIB)
	@mkdir -p $(dir $@)
	$(CC) $(GUEST_LDFLAGS) $^ $(GUEST_LIBS) -o $@
$(GB)/selfcheck/%: $(GB)/obj/selftests/vm/selfcheck/%.o $(GDT)
	@mkdir -p $(dir $@)
	$(CC) $(GUEST_LDFLAGS) $^ -o $@

# Guest programs outside selftests/kernel share the test_/bench_ names with
# the pattern rules above, so each gets an explicit rule:
# GUEST_PROG_RULE(program, source dir, output dir, support sources).
# selftests/cli has support code of its own; selftests/bpf drives simgpu
# through selftests/kernel's.
define GUEST_PROG_RULE
$(GB)/$(3)/$(1): $(GB)/obj/$(2)/$(1).o $(4:%.c=$(GB)/obj/%.o) $(GDT) $(GLIB)
	@mkdir -p $$(dir $$@)
	$$(CC) $$(GUEST_LDFLAGS) $$^ $$(GUEST_LIBS) -o $$@
endef
$(foreach t,$(CTEST_SRCS:selftests/cli/%.c=%),$(eval $(call GUEST_PROG_RULE,$(t),selftests/cli,tests,$(CSUP_SRCS) $(KSUP_SRCS))))
$(foreach t,$(BTEST_SRCS:selftests/bpf/%.c=%),$(eval $(call GUEST_PROG_RULE,$(t),selftests/bpf,tests,$(KSUP_SRCS))))
$(foreach t,$(BBENCH_SRCS:selftests/bpf/%.c=%),$(eval $(call GUEST_PROG_RULE,$(t),selftests/bpf,bench,$(KSUP_SRCS))))

$(B)/fuzz/%: user/fuzz/%.c $(LIB_SRCS)
	@mkdir -p $(dir $@)
	$(CLANG) $(FUZZ_CFLAGS) $^ $(HOST_LIBS) -o $@

# ---- initramfs -----------------------------------------------------------------
INITRAMFS := $(VB)/initramfs.cpio.gz
initramfs: $(INITRAMFS)
$(INITRAMFS): $(MODULES_STAMP) guest $(wildcard selftests/vm/guest/* selftests/vm/guest/*/*) selftests/vm/mkinitramfs.sh
	selftests/vm/mkinitramfs.sh --kver $(KVER) --out $@ --modules $(MB) \
		--bin $(GB)/bin --tests $(GB)/tests --bench $(GB)/bench \
		--selfcheck $(GB)/selfcheck --guest selftests/vm/guest

# ----------------------------------------------------------------------------
# Running
# ----------------------------------------------------------------------------
VM_TIMEOUT ?= 900
VM := selftests/vm/run-vm.sh --kernel $(VMLINUZ) --initrd $(INITRAMFS)

.PHONY: do-run do-test do-bench do-fuzz fuzz-short host-test vm-test vm-shell runner-test
do-run: do-all
	$(VM) --mode run --timeout $(VM_TIMEOUT) --log $(VB)/run

host-test: host
	selftests/run-host-tests.sh $(B)/test/host.log $(HOST_TESTS)

vm-test: do-all
	$(VM) --mode test $(if $(T),--only $(T),--expect "$(notdir $(GUEST_KTESTS) $(GUEST_CTESTS) $(GUEST_BTESTS))") \
		$(if $(REPEAT),--repeat $(REPEAT)) --timeout $(VM_TIMEOUT) --log $(VB)/test

runner-test: do-all
	selftests/vm/test_runner.sh $(VMLINUZ) $(INITRAMFS) $(B)/test/runner.log

vm-shell: do-all
	$(VM) --mode shell --timeout 0 --log $(VB)/shell

FUZZ_SECONDS ?= 20
FUZZ_LONG_SECONDS ?= 600
fuzz-short: $(FUZZERS)
	selftests/run-fuzz.sh $(FUZZ_SECONDS) $(B)/test/fuzz.log $(FUZZERS)
do-fuzz: $(FUZZERS)
	selftests/run-fuzz.sh $(FUZZ_LONG_SECONDS) $(B)/fuzz/fuzz.log $(FUZZERS)

# `make test`: every part writes a TAP log; the summary reads them all.
# Each phase's wall time is printed at the end (timing: lines), before the
# summary line, which stays last.
do-test: do-all $(FUZZERS) $(B)/bench/harness-sample
	@rm -rf $(B)/test && mkdir -p $(B)/test
	@echo "timing: build $$(( $$(date +%s) - $${DRMACCT_T1:-$$(date +%s)} )) s" > $(B)/test/timing
	@t=$$(date +%s); \
	selftests/harness/test_harness.sh $(B)/bench/harness-sample | tee $(B)/test/harness.log; \
	selftests/test_tap_summary.sh | tee $(B)/test/tap-summary.log; \
	selftests/run-host-tests.sh $(B)/test/host.log $(HOST_TESTS); \
	echo "timing: host tests $$(( $$(date +%s) - t )) s" >> $(B)/test/timing; t=$$(date +%s); \
	selftests/run-fuzz.sh $(FUZZ_SECONDS) $(B)/test/fuzz.log $(FUZZERS); \
	echo "timing: fuzzers $$(( $$(date +%s) - t )) s" >> $(B)/test/timing; t=$$(date +%s); \
	selftests/vm/test_runner.sh $(VMLINUZ) $(INITRAMFS) $(B)/test/runner.log; \
	echo "timing: VM runner self-tests $$(( $$(date +%s) - t )) s" >> $(B)/test/timing; t=$$(date +%s); \
	$(VM) --mode test --timeout $(VM_TIMEOUT) --log $(VB)/test --tap $(B)/test/vm.log \
		--expect "$(notdir $(GUEST_KTESTS) $(GUEST_CTESTS) $(GUEST_BTESTS))"; \
	echo "timing: VM selftests $$(( $$(date +%s) - t )) s" >> $(B)/test/timing; \
	cat $(B)/test/timing; true
	@selftests/tap-summary.sh $(B)/test/*.log

do-bench: do-all $(HOST_BENCHES)
	@for b in $(HOST_BENCHES); do echo "== $$b"; $$b || exit 1; done
	VM_APPEND="clocksource=tsc tsc=reliable $(VM_APPEND)" \
		$(VM) --mode bench --timeout $(VM_TIMEOUT) --log $(VB)/bench

clean:
	-$(MAKE) -C $(KDIR) M=$(CURDIR) clean >/dev/null 2>&1
	rm -rf $(B)

-include $(shell find $(B) -name '*.d' 2>/dev/null)
