# SPDX-License-Identifier: GPL-2.0
#
# drmacct — one entry point.
#
#   make run     install what is missing, build, boot the VM, run the demo
#   make test    install, build, host unit tests + VM selftests, summary line
#   make bench   install, build, host benchmarks + VM benchmarks
#   make fuzz    long libFuzzer runs
#   make test-debug  the VM suite under a lockdep/KASAN/kmemleak kernel, built
#                once and cached (Documentation/testing.rst, "The debug kernel")
#   make clean
#   make drmacct   only the CLI and libdrmacct (build/release/), with only
#                  the packages they need (CLI_PACKAGES; on Debian, when
#                  apt-get is there): no kernel images, qemu or prometheus
#   make install   the CLI, libdrmacct (shared, static, headers, pkg-config),
#                  man pages, completions and systemd units under
#                  $(DESTDIR)$(PREFIX) (PREFIX=/usr/local by default); runs
#                  no package manager, on any distribution. make uninstall
#                  removes them, make install-strip strips the binaries.
#   make dist      build/dist/drmacct-VERSION.tar.xz, which builds outside git
#   make spdx-check   every file's licence, and what each binary links
#
# Distribution builds take CFLAGS, CPPFLAGS and LDFLAGS as given (CFLAGS
# defaults to -g -O2) and warn without failing; WERROR=1 makes warnings
# errors, as every development and test build does. BPF=0 builds the CLI
# without the BPF collection (no libbpf, libelf, clang or bpftool), HTTP=0
# without the exporter's web server (no libmicrohttpd, GnuTLS, libcrypt,
# libyaml). VERSION comes from `git describe`, or from .tarball-version in a
# release tarball (scripts/version.sh); VERSION=... overrides both.
#
# Developer targets: deps, all, modules, bpf, host, guest, initramfs,
# host-test, vm-test [T=prog] [REPEAT=n], vm-shell, runner-test,
# bpf-insn-table (bpf.rst's verifier table from the last make test's logs),
# testing-table (testing.rst's results table, from the same logs),
# mutants (deliberate bugs the VM tests must catch; selftests/mutants/).
#
# Target kernels: Debian's 6.1 and 6.12 LTS, both installed by `make deps`.
# KVERS is every installed kernel with headers and image, the newest of each
# series (KVERS="a b" or KVER=a picks others); each gets its own build tree
# under build/k/<release>/. run, vm-shell and runner-test use the newest,
# test, vm-test and bench all of KVERS. The host's running kernel is never
# a target (it only verifies the BPF programs, see selftests/user).

SHELL := /bin/bash
.DEFAULT_GOAL := all
.DELETE_ON_ERROR:
.SECONDARY:

# ----------------------------------------------------------------------------
# Packages. Installed by `make deps`, which every top-level goal runs first.
# ----------------------------------------------------------------------------
DEB_PACKAGES := make gcc libc6-dev binutils clang llvm libclang-rt-14-dev \
	linux-image-amd64 linux-headers-amd64 \
	linux-image-6.12-amd64 linux-headers-6.12-amd64 \
	linux-image-rt-amd64 linux-headers-rt-amd64 \
	linux-image-6.12-rt-amd64 linux-headers-6.12-rt-amd64 libbpf-dev bpftool dwarves \
	libelf-dev zlib1g-dev libdrm-dev qemu-system-x86 busybox-static kmod \
	cpio xz-utils gzip zstd bpftrace prometheus libtraceevent-dev \
	python3-docutils tmux libncurses-dev \
	flex bison bc libssl-dev ccache \
	pkg-config libmicrohttpd-dev libgnutls28-dev libcrypt-dev libyaml-dev \
	python3 openssl curl systemd zsh fish
# What `make drmacct` needs: a C compiler, pkg-config, the libdrm headers,
# ncursesw (top's screen; the static libncursesw.a and libtinfo.a for the
# guest are in the same package), rst2man for the man page; with BPF (the default) clang and bpftool for the
# BPF skeleton the CLI embeds (built from bpf/ alone, no kernel image),
# libbpf and libelf; with HTTP (the default) libmicrohttpd, GnuTLS, libcrypt
# (bcrypt) and libyaml for the exporter's web server.
BPF ?= 1
HTTP ?= 1
CLI_PACKAGES := make gcc libc6-dev pkg-config libdrm-dev libncurses-dev python3-docutils \
	$(if $(filter 1,$(BPF)),clang bpftool libbpf-dev libelf-dev zlib1g-dev) \
	$(if $(filter 1,$(HTTP)),libmicrohttpd-dev libgnutls28-dev libcrypt-dev libyaml-dev)

# $(call INSTALL_PKGS,list): install what is missing of the Debian packages.
define INSTALL_PKGS
	@missing=; for p in $(1); do \
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
endef

.PHONY: deps deps-cli
deps:
	$(call INSTALL_PKGS,$(DEB_PACKAGES))
deps-cli:
	@if command -v apt-get >/dev/null && command -v dpkg-query >/dev/null; then \
		$(MAKE) --no-print-directory deps DEB_PACKAGES="$(CLI_PACKAGES)"; \
	else echo "deps: no apt-get/dpkg-query here: building with what is installed"; fi

# The public goals install packages first and then re-enter make, so that
# everything computed from what is installed (KVER, the kernel build dir) is
# computed after the install.
PUBLIC_GOALS := all run test bench fuzz
.PHONY: $(PUBLIC_GOALS)
$(PUBLIC_GOALS):
	@t0=$$(date +%s); $(MAKE) --no-print-directory deps || exit 1; \
	t1=$$(date +%s); echo "timing: packages $$((t1 - t0)) s"; \
	knew=; ktime=; \
	if [ "$(NEWEST)" = 1 ] && [ $@ != fuzz ]; then \
		out=$$(kernel/build-kernel.sh newest --print-root) || exit 1; \
		t2=$$(date +%s); \
		ktime="timing: kernel $$(echo "$$out" | sed -n 2p) (built or cached) $$((t2 - t1)) s"; \
		[ $@ = test ] || echo "$$ktime"; t1=$$t2; \
		knew="KNEWEST=$$(echo "$$out" | sed -n 2p) KNEWEST_ROOT=$$(echo "$$out" | sed -n 1p)"; \
	fi; \
	DRMACCT_T1=$$t1 DRMACCT_KTIME="$$ktime" $(MAKE) --no-print-directory do-$@ $$knew

# ----------------------------------------------------------------------------
# Target kernels
# ----------------------------------------------------------------------------
# Installed kernels with headers and an image, the newest release of each
# series and flavour, oldest first (kernel/target-kernels.sh).
#
# The fifth target, Linux 7.3, Debian does not ship in a form bookworm can
# build modules for: kernel/build-kernel.sh builds it from Debian's
# linux-source-7.3 into a machine-wide cache (Documentation/testing.rst).
# The public goals build or find it after the packages and pass KNEWEST
# (its release) and KNEWEST_ROOT (a directory laid out like / for it) to
# the make that does the work; a developer target run directly takes the
# one already built, if any. NEWEST=0 leaves it out.
NEWEST ?= 1
ifeq ($(NEWEST),1)
ifndef KNEWEST
KNEWEST_INFO := $(shell kernel/build-kernel.sh newest --check 2>/dev/null)
KNEWEST_ROOT := $(word 1,$(KNEWEST_INFO))
KNEWEST := $(word 2,$(KNEWEST_INFO))
endif
else
KNEWEST :=
KNEWEST_ROOT :=
endif
KVERS_INSTALLED := $(shell kernel/target-kernels.sh) $(KNEWEST)
ifdef KVER
KVERS := $(KVER)
endif
KVERS ?= $(KVERS_INSTALLED)
# The newest kernel (make run, the runner's own tests, the host verifier
# test): of the stock flavour when one is there, as a desktop runs it.
KNEW := $(lastword $(or $(filter-out %-rt-amd64 %-rt-arm64,$(KVERS)),$(KVERS)))

B := build
HB := $(B)/host
GB := $(B)/guest
# The build machine's bpftrace goes into every initramfs as an appended
# piece (selftests/vm/mkbpftrace.sh), with the one-liners of
# Documentation/bpf.rst that selftests/bpf/test_bpftrace.c runs.
BPFTRACE := $(shell command -v bpftrace 2>/dev/null)
BPFTRACE_PIECE := $(if $(BPFTRACE),$(GB)/bpftrace.cpio.zst)
BB := $(B)/bpf
# Per target kernel K: $(call KB,K) holds its module build tree (src/), its
# vmlinux ELF and vmlinux.h, the modules with BTF (modules/), the BPF object
# built against its vmlinux.h (a check), its initramfs and VM logs (vm/).
KB = $(B)/k/$(1)
# Where the target kernels are installed: / for Debian's; `make test-debug`
# points it at the debug kernel's cache (kernel/build-kernel.sh debug), which
# has the same layout (boot/vmlinuz-R, boot/config-R, lib/modules/R/build).
# KROOT_OF: the root of kernel K, KNEWEST_ROOT for the newest kernel.
KROOT ?=
KROOT_OF = $(if $(and $(KNEWEST),$(filter $(KNEWEST),$(1))),$(KNEWEST_ROOT),$(KROOT))
KIMG = $(call KROOT_OF,$(1))/boot/vmlinuz-$(1)
KDIR = $(call KROOT_OF,$(1))/lib/modules/$(1)/build
# Does kernel K have BTF? Module BTF, vmlinux.h and the BPF check need it;
# only a kernel whose config says no (the debug kernel) goes without.
KBTF = $(shell c=$(call KROOT_OF,$(1))/boot/config-$(1); test -r $$c && \
	! grep -q '^CONFIG_DEBUG_INFO_BTF=y' $$c || echo y)
# Does kbuild write module BTF itself? Only when the build tree keeps its
# vmlinux (the kernels we build); Debian's headers have none, so pahole
# adds it after the build (see KERNEL_RULES).
KTREE_BTF = $(if $(call KBTF,$(1)),$(wildcard $(call KDIR,$(1))/vmlinux))


# ----------------------------------------------------------------------------
# Flags
# ----------------------------------------------------------------------------
CC ?= gcc
CLANG ?= clang
PKG_CONFIG ?= pkg-config
# -Werror: in every development and test build, not in distribution builds
# (a newer compiler's new warning must not break a distribution's build).
RELEASE_GOALS := drmacct do-drmacct install do-install install-strip uninstall dist
ifneq ($(filter $(RELEASE_GOALS),$(MAKECMDGOALS)),)
WERROR ?= 0
else
WERROR ?= 1
endif
WERR := $(if $(filter 1,$(WERROR)),-Werror)
INCLUDES := -Iinclude -Iinclude/drmacct -Iuser/lib -Ikernel/include/uapi/drm -I/usr/include/libdrm \
	-Iselftests/harness -Iselftests/kernel -I$(BB)
WARN := -std=gnu11 -Wall -Wextra $(WERR)
SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined \
	-fno-omit-frame-pointer
HOST_CFLAGS := $(WARN) -g -O1 $(SAN) $(INCLUDES)
HOST_LDFLAGS := $(SAN)
# Host programs measured by `make bench` are built without sanitizers.
BENCH_CFLAGS := $(WARN) -g -O2 $(INCLUDES)
# The guest CLI is static: no web server in it (GnuTLS has no static build
# here, and the VM tests do not serve metrics).
GUEST_CFLAGS := $(WARN) -g -O2 $(INCLUDES) -DDRMACCT_NO_HTTP
GUEST_LDFLAGS := -static
GUEST_LIBS := -lbpf -lelf -lz -ldrm -lpthread
HOST_LIBS := -lbpf -lelf -lz -ldrm -lpthread -lm -lcrypt
# What the exporter's web server links (HTTP=1).
HTTP_LIBS := -lmicrohttpd -lgnutls -lcrypt -lyaml
# Only the drmacct program links ncursesw (top); for the static guest the
# terminfo library is named too (it is separate in Debian's build).
CURSES_LIBS := -lncursesw -ltinfo
FUZZ_CFLAGS := -std=gnu11 -Wall -Wextra $(WERR) -g -O1 $(INCLUDES) \
	-fsanitize=fuzzer,address,undefined

# ----------------------------------------------------------------------------
# Sources (by convention; see README.md "Layout")
# ----------------------------------------------------------------------------
# bpf_none.c stands in for the BPF files in a BPF=0 build only.
LIB_SRCS := $(filter-out user/lib/bpf_none.c,$(wildcard user/lib/*.c))
CLI_SRCS := $(wildcard user/drmacct/*.c)
TOOL_SRCS := $(wildcard user/tools/*.c)
HTEST_SRCS := $(wildcard selftests/user/test_*.c)
# Packaging tests (shell, TAP): install without apt, pkg-config, units,
# completions, licences, the release tarball. The install test builds the
# distribution build (build/release), the licence test checks it.
PKG_TESTS := selftests/pkg/test_install.sh selftests/pkg/test_licences.sh \
	selftests/pkg/test_dist.sh selftests/pkg/test_doc_examples.sh
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
# A BPF object is one source, bpf/X.bpf.c, or the link of several,
# bpf/X/*.bpf.c (bpftool gen object: maps and globals shared by name).
BPF_SINGLE := $(wildcard bpf/*.bpf.c)
BPF_LINKED := $(patsubst bpf/%/,%,$(sort $(dir $(wildcard bpf/*/*.bpf.c))))
BPF_NAMES := $(BPF_SINGLE:bpf/%.bpf.c=%) $(BPF_LINKED)
BPF_SRCS := $(BPF_SINGLE) $(wildcard bpf/*/*.bpf.c)
BPF_HDRS := $(wildcard bpf/*.h bpf/*/*.h)
KERNEL_SRCS := $(shell find kernel selftests/vm/testmod -name '*.[ch]' -o -name Kbuild 2>/dev/null) Kbuild

BPF_SKELS := $(BPF_NAMES:%=$(BB)/%.skel.h)

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

# ---- per kernel: modules with BTF, vmlinux.h, BPF check, initramfs ---------
# kbuild builds in a tree of links to kernel/, Kbuild and the test module
# under $(call KB,K)/src, so each kernel has its own objects and the kernels
# can build side by side. pahole then adds module BTF to copies of the .ko
# files, against that kernel's vmlinux (Debian ships module BTF only for its
# own modules); where kbuild wrote it itself (KTREE_BTF), the copies keep
# kbuild's (7.3 refuses a module whose BTF pahole re-encoded: "failed to
# validate module BTF: -22"). vmlinux.h of each kernel compiles the BPF programs once more
# with that kernel's full types, as a check of the CO-RE declarations in
# bpf/kernel_types.h. The initramfs holds that kernel's modules and the
# shared guest programs.
KBUILD_TREE := kernel Kbuild selftests/vm/testmod
define KERNEL_RULES
$(call KB,$(1))/modules/.stamp: $(KERNEL_SRCS) $(if $(call KBTF,$(1)),$(call KB,$(1))/vmlinux)
	@test -d $(call KDIR,$(1)) || { echo "no kernel build dir $(call KDIR,$(1))"; exit 1; }
	@mkdir -p $(call KB,$(1))/src/selftests/vm
	@cp -rsf $(CURDIR)/kernel $(CURDIR)/Kbuild $(call KB,$(1))/src/
	@cp -rsf $(CURDIR)/selftests/vm/testmod $(call KB,$(1))/src/selftests/vm/
	@find $(call KB,$(1))/src -xtype l -delete
	$$(MAKE) -C $(call KDIR,$(1)) M=$(CURDIR)/$(call KB,$(1))/src W=1 modules 2>&1 \
		| tee $(call KB,$(1))/kbuild.log; test $$$${PIPESTATUS[0]} = 0
	@if grep -E 'warning:|error:' $(call KB,$(1))/kbuild.log; then \
		echo "modules: the kernel build printed warnings (W=1 must be clean)"; exit 1; fi
	@rm -rf $(call KB,$(1))/modules && mkdir -p $(call KB,$(1))/modules
	@for ko in $$$$(find $(call KB,$(1))/src -name '*.ko'); do \
		m=$(call KB,$(1))/modules/$$$$(basename $$$$ko); \
		cp $$$$ko $$$$m || exit 1; \
		$(if $(and $(call KBTF,$(1)),$(if $(call KTREE_BTF,$(1)),,y)),LLVM_OBJCOPY=objcopy pahole -J --btf_gen_floats -j \
			--lang_exclude=rust --btf_base $(call KB,$(1))/vmlinux $$$$m || exit 1; \
		echo "  BTF     $$$$m";) \
	done
	@touch $$@

$(call KB,$(1))/vmlinux: bpf/gen-vmlinux.sh
	@mkdir -p $$(@D)
	bpf/gen-vmlinux.sh $(call KIMG,$(1)) $$@

$(call KB,$(1))/vmlinux.h: $(call KB,$(1))/vmlinux
	bpftool btf dump file $$< format c > $$@.tmp && mv $$@.tmp $$@

# -fms-extensions: since 6.19 the kernel is built with it, and its BTF has
# anonymous members of tagged types ("struct ns_tree;" inside a struct),
# which vmlinux.h then declares as the kernel does; plain C rejects them.
$(call KB,$(1))/bpf/%.bpf.o: bpf/%.bpf.c $(call KB,$(1))/vmlinux.h $(BPF_HDRS)
	@mkdir -p $$(@D)
	$$(CLANG) $$(BPF_CFLAGS) -fms-extensions -Wno-microsoft-anon-tag -DDAC_VMLINUX_H \
		-I$(call KB,$(1)) -c $$< -o $$@

$(call KB,$(1))/initramfs.cpio.gz: $(call KB,$(1))/modules/.stamp guest $(BPFTRACE_PIECE) \
		$(wildcard selftests/vm/guest/* selftests/vm/guest/*/*) selftests/vm/mkinitramfs.sh
	selftests/vm/mkinitramfs.sh --kver $(1) $(if $(call KROOT_OF,$(1)),--kroot $(call KROOT_OF,$(1))) --out $$@ \
		--modules $(call KB,$(1))/modules \
		--bin $(GB)/bin --tests $(GB)/tests --bench $(GB)/bench \
		--selfcheck $(GB)/selfcheck --guest selftests/vm/guest \
		$(if $(BPFTRACE_PIECE),--append $(BPFTRACE_PIECE))
endef
$(foreach k,$(KVERS),$(eval $(call KERNEL_RULES,$(k))))

modules: $(foreach k,$(KVERS),$(call KB,$(k))/modules/.stamp)
BPF_CHECKS := $(foreach k,$(KVERS),$(if $(call KBTF,$(k)),$(BPF_SRCS:bpf/%.bpf.c=$(call KB,$(k))/bpf/%.bpf.o)))

# ---- BPF -------------------------------------------------------------------
# One object for every kernel (CO-RE): the kernel types it touches are
# declared in bpf/kernel_types.h, so building needs no kernel image and the
# skeleton, and every program linking it, is the same for all targets.
# The BPF target arch (for PT_REGS & co.): ARCH= as the kernel spells it
# (x86, arm64, ...) or, by default, the build machine's.
# -mcpu=v3: the BPF atomics (fetch-add, cmpxchg; kernel 5.12+, so every
# target) that the programs' lock-free updates need.
BPF_ARCH ?= $(shell echo $(or $(ARCH),$(shell uname -m)) | sed 's/x86_64/x86/;s/aarch64/arm64/;s/^arm.*/arm/;s/ppc64.*/powerpc/;s/riscv64/riscv/;s/s390x/s390/;s/loongarch64/loongarch/')
BPF_MULTIARCH := $(shell $(CC) -print-multiarch 2>/dev/null)
BPF_CFLAGS := -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(BPF_ARCH) -Ibpf -Iuser/lib \
	$(if $(BPF_MULTIARCH),-idirafter /usr/include/$(BPF_MULTIARCH)) -Wall $(WERR)
bpf: $(BPF_SKELS) $(BPF_CHECKS)

# The depfile (X.bpf.d) also tells spdx-check what the skeleton is made of.
$(BB)/%.bpf.o: bpf/%.bpf.c $(BPF_HDRS)
	@mkdir -p $(@D)
	$(CLANG) $(BPF_CFLAGS) -MMD -MP -c $< -o $@

# The depfile alone, for a BPF object built before depfiles were written.
$(BB)/%.bpf.d: bpf/%.bpf.c $(BPF_HDRS)
	@mkdir -p $(@D)
	$(CLANG) $(BPF_CFLAGS) -MM -MP -MT $(BB)/$*.bpf.o $< > $@.tmp && mv $@.tmp $@

# A linked object, and its depfile: every unit's, under the object's name.
define BPF_LINK_RULES
$(BB)/$(1).bpf.o: $(patsubst bpf/%.bpf.c,$(BB)/%.bpf.o,$(wildcard bpf/$(1)/*.bpf.c))
	bpftool gen object $$@ $$(filter %.bpf.o,$$^)

$(BB)/$(1).bpf.d: $(patsubst bpf/%.bpf.c,$(BB)/%.bpf.d,$(wildcard bpf/$(1)/*.bpf.c))
	sed 's|^$(BB)/$(1)/[^:]*\.bpf\.o:|$(BB)/$(1).bpf.o:|' $$^ > $$@.tmp && mv $$@.tmp $$@
endef
$(foreach o,$(BPF_LINKED),$(eval $(call BPF_LINK_RULES,$(o))))

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
	$(CC) $(HOST_LDFLAGS) $^ $(HOST_LIBS) $(HTTP_LIBS) $(CURSES_LIBS) -o $@
$(GB)/bin/drmacct: $(CLI_SRCS:%.c=$(GB)/obj/%.o) $(GLIB)
	@mkdir -p $(dir $@)
	$(CC) $(GUEST_LDFLAGS) $^ $(GUEST_LIBS) $(CURSES_LIBS) -o $@
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
# Parses the VM suites' drmacct events with libtraceevent (after each suite).
TEP_CHECK := $(HB)/tep-check
$(TEP_CHECK): selftests/vm/tep-check.c
	@mkdir -p $(dir $@)
	$(CC) $(HOST_CFLAGS) $< $(HOST_LDFLAGS) -ltraceevent -o $@

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
# test_kunit reads KUnit's KTAP with the reader the host test test_ktap checks.
$(GB)/tests/test_kunit: $(GB)/obj/selftests/user/ktap.o
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
$(foreach t,$(CTEST_SRCS:selftests/cli/%.c=%),$(eval $(call GUEST_PROG_RULE,$(t),selftests/cli,tests,$(CSUP_SRCS) $(KSUP_SRCS) selftests/user/json_dom.c)))
$(foreach t,$(BTEST_SRCS:selftests/bpf/%.c=%),$(eval $(call GUEST_PROG_RULE,$(t),selftests/bpf,tests,$(KSUP_SRCS) selftests/user/json_dom.c)))
$(foreach t,$(BBENCH_SRCS:selftests/bpf/%.c=%),$(eval $(call GUEST_PROG_RULE,$(t),selftests/bpf,bench,$(KSUP_SRCS))))

$(B)/fuzz/%: user/fuzz/%.c $(LIB_SRCS)
	@mkdir -p $(dir $@)
	$(CLANG) $(FUZZ_CFLAGS) $^ $(HOST_LIBS) -o $@

# ---- initramfs -----------------------------------------------------------------
$(GB)/bpftrace/.stamp: Documentation/bpf.rst selftests/bpf/bpftrace-extract.sh
	selftests/bpf/bpftrace-extract.sh $< $(@D) && touch $@
$(GB)/bpftrace.cpio.zst: $(GB)/bpftrace/.stamp selftests/vm/mkbpftrace.sh $(BPFTRACE)
	selftests/vm/mkbpftrace.sh $@ $(GB)/bpftrace

INITRAMFS_ALL := $(foreach k,$(KVERS),$(call KB,$(k))/initramfs.cpio.gz)
initramfs: $(INITRAMFS_ALL)

# ----------------------------------------------------------------------------
# Running
# ----------------------------------------------------------------------------
VM_TIMEOUT ?= 900
# $(call VM,K): the runner for kernel K; its kallsyms cache and the modules
# its hang reports symbolize live in K's build tree.
VM_ENV = VM_MODDIR=$(call KB,$(1))/modules VM_KALLSYMS=$(call KB,$(1))/kallsyms.txt
VM = $(call VM_ENV,$(1)) \
	selftests/vm/run-vm.sh --kernel $(call KIMG,$(1)) --initrd $(call KB,$(1))/initramfs.cpio.gz
RUNNER_TEST = $(call VM_ENV,$(KNEW)) selftests/vm/test_runner.sh $(call KIMG,$(KNEW)) \
	$(call KB,$(KNEW))/initramfs.cpio.gz $(B)/test/runner.log
GUEST_TEST_NAMES = $(notdir $(GUEST_KTESTS) $(GUEST_CTESTS) $(GUEST_BTESTS))

.PHONY: do-run do-test do-bench do-fuzz fuzz-short host-test vm-test vm-shell runner-test
do-run: do-all
	$(call VM,$(KNEW)) --mode run --timeout $(VM_TIMEOUT) --log $(call KB,$(KNEW))/vm/run

host-test: host
	selftests/run-host-tests.sh $(B)/test/host.log $(HOST_TESTS)
.PHONY: pkg-test
pkg-test: host
	@status=0; for p in $(PKG_TESTS); do mkdir -p $(B)/test; \
		$$p | tee $(B)/test/$$(basename $$p .sh).log; \
		test $${PIPESTATUS[0]} = 0 || status=1; done; exit $$status

# One boot per kernel of KVERS; the TAP log of each names its kernel.
# T= picks programs, separated by spaces or commas.
T_COMMA := ,
T_SPACE := $(subst ,, )
# (make expands the per-kernel paths: a kernel's root is make's to know.)
vm-test: do-all
	@status=0; \
	$(foreach k,$(KVERS),echo "== vm-test on $(k)"; \
		$(call VM,$(k)) --mode test --label "$(k)" \
			$(if $(T),--only $(subst $(T_SPACE),$(T_COMMA),$(strip $(T))),--expect "$(GUEST_TEST_NAMES)") \
			$(if $(REPEAT),--repeat $(REPEAT)) $(if $(VM_ENV_VARS),--env $(VM_ENV_VARS)) \
			--timeout $(VM_TIMEOUT) \
			--log $(call KB,$(k))/vm/test --tap $(B)/vm-test-$(k).log || status=1;) \
	selftests/tap-summary.sh $(foreach k,$(KVERS),$(B)/vm-test-$(k).log); exit $$status

runner-test: do-all
	$(RUNNER_TEST)

vm-shell: do-all
	$(call VM,$(KNEW)) --mode shell --timeout 0 --log $(call KB,$(KNEW))/vm/shell

FUZZ_SECONDS ?= 20
FUZZ_LONG_SECONDS ?= 600
fuzz-short: $(FUZZERS)
	selftests/run-fuzz.sh $(FUZZ_SECONDS) $(B)/test/fuzz.log $(FUZZERS)
do-fuzz: $(FUZZERS)
	selftests/run-fuzz.sh $(FUZZ_LONG_SECONDS) $(B)/fuzz/fuzz.log $(FUZZERS)

# `make test`: every part writes a TAP log; the summary reads them all.
# The parts are independent and each is one busy thread (a TCG VM runs its
# vCPUs on one host thread), so a sub-make runs TEST_JOBS of them at once
# (default: the machine's cores), longest first: the VM selftests on every
# kernel of KVERS (one log each, vm-<release>.log, whose program and test
# names carry the release), the VM runner's own tests on the newest kernel,
# then the host tests and the fuzzers. --output-sync prints each part's
# output in one piece when it ends. Each part's wall time is printed at the
# end (timing: lines), before the summary line, which stays last.
TEST_JOBS ?= $(shell nproc 2>/dev/null || echo 1)
# Longest first, so that the last part to start is a short one: the newest
# kernel's VM part (twice as long as the others: a bigger kernel, 7.x's
# verifier), then the RT kernels', then the rest.
TEST_KORDER := $(filter $(KNEW),$(KVERS)) $(filter %-rt-amd64 %-rt-arm64,$(KVERS)) \
	$(filter-out $(KNEW) %-rt-amd64 %-rt-arm64,$(KVERS))
TEST_PARTS := $(foreach k,$(TEST_KORDER),test-part-vm-$(k)) test-part-runner test-part-host
do-test: do-all $(FUZZERS) $(B)/bench/harness-sample $(TEP_CHECK)
	@rm -rf $(B)/test && mkdir -p $(B)/test
	@{ [ -z "$${DRMACCT_KTIME:-}" ] || echo "$$DRMACCT_KTIME"; \
	echo "timing: build $$(( $$(date +%s) - $${DRMACCT_T1:-$$(date +%s)} )) s"; } > $(B)/test/timing
	@t=$$(date +%s); \
	$(MAKE) --no-print-directory -k -j$(TEST_JOBS) --output-sync=target $(TEST_PARTS); \
	cat $(foreach p,$(TEST_PARTS),$(B)/test/timing-$(p)) >> $(B)/test/timing 2>/dev/null; \
	echo "timing: all test parts, $(TEST_JOBS) at a time, $$(( $$(date +%s) - t )) s" >> $(B)/test/timing; \
	cat $(B)/test/timing; true
	@selftests/tap-summary.sh $(B)/test/*.log

# The parts of do-test. Each records its time and never fails the sub-make
# (the summary judges the logs), so one part's failure stops no other.
.PHONY: test-part-host test-part-runner
test-part-host:
	@t=$$(date +%s); \
	selftests/harness/test_harness.sh $(B)/bench/harness-sample | tee $(B)/test/harness.log; \
	selftests/test_tap_summary.sh | tee $(B)/test/tap-summary.log; \
	selftests/test_compat_probe.sh | tee $(B)/test/compat-probe.log; \
	selftests/vm/test_emulator_faults.sh | tee $(B)/test/emulator-faults.log; \
	selftests/run-host-tests.sh $(B)/test/host.log $(HOST_TESTS); \
	for p in $(PKG_TESTS); do $$p | tee $(B)/test/$$(basename $$p .sh).log; done; \
	echo "timing: host tests $$(( $$(date +%s) - t )) s" > $(B)/test/timing-$@; t=$$(date +%s); \
	selftests/run-fuzz.sh $(FUZZ_SECONDS) $(B)/test/fuzz.log $(FUZZERS); \
	echo "timing: fuzzers $$(( $$(date +%s) - t )) s" >> $(B)/test/timing-$@; true

test-part-runner:
	@t=$$(date +%s); $(RUNNER_TEST); \
	echo "timing: VM runner self-tests ($(KNEW)) $$(( $$(date +%s) - t )) s" > $(B)/test/timing-$@; true

test-part-vm-%:
	@t=$$(date +%s); \
	$(call VM,$*) --mode test --label "$*" --timeout $(VM_TIMEOUT) \
		--log $(call KB,$*)/vm/test --tap $(B)/test/vm-$*.log \
		--expect "$(GUEST_TEST_NAMES)"; \
	echo "timing: VM selftests on $* $$(( $$(date +%s) - t )) s" > $(B)/test/timing-$@; \
	$(TEP_CHECK) $(call KB,$*)/vm/test/serial.log "$*" > $(B)/test/tep-$*.log || \
		echo "# tep-check exited with status $$?" >> $(B)/test/tep-$*.log

do-bench: do-all $(HOST_BENCHES)
	@for b in $(HOST_BENCHES); do echo "== $$b"; $$b || exit 1; done
	@$(foreach k,$(KVERS),echo "== VM benchmarks on $(k)"; \
		VM_APPEND="clocksource=tsc tsc=reliable $(VM_APPEND)" \
			$(call VM,$(k)) --mode bench --timeout $(VM_TIMEOUT) \
			--log $(call KB,$(k))/vm/bench || exit 1;) true

# ---- distribution: make drmacct, install, uninstall, dist, spdx-check ------
# What a distribution ships, built without sanitizers under build/release/:
# the CLI, libdrmacct (a versioned shared library exporting only the public
# API of include/drmacct/, a static one, the headers and libdrmacct.pc), the
# man page, completions for bash, zsh and fish (from one option table,
# user/drmacct/options.tab) and systemd units. No package manager runs here.
PREFIX ?= /usr/local
EXEC_PREFIX ?= $(PREFIX)
BINDIR ?= $(EXEC_PREFIX)/bin
LIBDIR ?= $(EXEC_PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
DATADIR ?= $(PREFIX)/share
MANDIR ?= $(DATADIR)/man
DOCDIR ?= $(DATADIR)/doc/drmacct
# What drmacct(1) cites as Documentation/NAME.rst, and what those cite in turn
# (but the kernel's own drm-usage-stats.rst), installed as $(DOCDIR)/NAME.rst
MAN_CITED_DOCS := $(addprefix Documentation/,bpf.rst conformance.rst exporter.rst \
	counters.rst fdinfo-validation.rst json-schema.rst libdrmacct.rst record-format.rst)
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
BASHCOMPDIR ?= $(DATADIR)/bash-completion/completions
ZSHCOMPDIR ?= $(DATADIR)/zsh/site-functions
FISHCOMPDIR ?= $(DATADIR)/fish/vendor_completions.d
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
SYSCONFDIR ?= $(if $(filter /usr,$(PREFIX)),/etc,$(PREFIX)/etc)
INSTALL ?= install
STRIP ?= strip
CFLAGS ?= -g -O2

ifeq ($(origin VERSION),undefined)
VERSION := $(shell scripts/version.sh 2>/dev/null)
endif

# libdrmacct's ABI: LIB_SOVERSION (the soname's number) changes with every
# incompatible change of include/drmacct/, structures included; LIB_VERSION
# is the library's own version (file name, libdrmacct.pc, symbol versions
# in user/lib/libdrmacct.map).
LIB_SOVERSION := 0
LIB_VERSION := 0.1.0

REL := $(B)/release
REL_CPPFLAGS := -Iinclude -Iinclude/drmacct -Iuser/lib \
	$(shell $(PKG_CONFIG) --cflags libdrm 2>/dev/null || echo -I/usr/include/libdrm) \
	$(if $(filter 1,$(BPF)),-I$(BB),-DDRMACCT_NO_BPF) $(if $(filter 1,$(HTTP)),,-DDRMACCT_NO_HTTP)
REL_CFLAGS := -std=gnu11 -Wall -Wextra $(WERR)
LIB_LIBS := $(shell $(PKG_CONFIG) --libs libdrm 2>/dev/null || echo -ldrm) -lm
CLI_LIBS := $(if $(filter 1,$(BPF)),-lbpf -lelf -lz) $(LIB_LIBS) \
	$(if $(filter 1,$(HTTP)),$(HTTP_LIBS)) $(CURSES_LIBS) -lpthread
# The installed library: everything in user/lib but the BPF collection,
# which is the CLI's (its API, user/lib/bpf.h, is not public).
REL_CORE_SRCS := $(filter-out user/lib/bpf%.c,$(LIB_SRCS))
REL_BPF_SRCS := $(if $(filter 1,$(BPF)),$(filter user/lib/bpf%.c,$(LIB_SRCS)),user/lib/bpf_none.c)
REL_PIC := $(REL_CORE_SRCS:%.c=$(REL)/pic/%.o)
REL_OBJ := $(CLI_SRCS:%.c=$(REL)/obj/%.o) $(REL_BPF_SRCS:%.c=$(REL)/obj/%.o)
REL_A := $(REL)/libdrmacct.a
REL_SONAME := libdrmacct.so.$(LIB_SOVERSION)
REL_SO := $(REL)/libdrmacct.so.$(LIB_VERSION)
LIB_MAP := user/lib/libdrmacct.map
REL_PC := $(REL)/libdrmacct.pc
REL_CLI := $(REL)/drmacct
REL_MAN := $(REL)/drmacct.1
REL_COMP := $(REL)/completion/drmacct.bash $(REL)/completion/_drmacct \
	$(REL)/completion/drmacct.fish
UNITS := drmacct-exporter.service drmacct-textfile.service drmacct-textfile.timer
REL_UNITS := $(UNITS:%=$(REL)/systemd/%)
PUBLIC_HEADERS := $(wildcard include/drmacct/*.h)
# The bpftrace one-liners of Documentation/bpf.rst, as files (DATADIR/drmacct/bpftrace).
REL_BT := $(REL)/bpftrace/.stamp
REL_ALL := $(REL_CLI) $(REL_MAN) $(REL_A) $(REL_SO) $(REL_PC) $(REL_COMP) $(REL_UNITS) $(REL_BT)

.PHONY: drmacct do-drmacct install do-install install-strip uninstall dist spdx-check
drmacct:
	@$(MAKE) --no-print-directory deps-cli && $(MAKE) --no-print-directory do-drmacct
do-drmacct: $(REL_ALL)
$(REL_BT): Documentation/bpf.rst selftests/bpf/bpftrace-extract.sh
	@mkdir -p $(@D)
	selftests/bpf/bpftrace-extract.sh $< $(@D) && touch $@

# Rebuild everything when the build's configuration changes, and what
# carries the version when VERSION does.
REL_CONFIG := CC=$(CC) CFLAGS=$(CFLAGS) CPPFLAGS=$(CPPFLAGS) LDFLAGS=$(LDFLAGS) \
	BPF=$(BPF) HTTP=$(HTTP) WERROR=$(WERROR)
$(REL)/.config: FORCE
	@mkdir -p $(@D); echo '$(REL_CONFIG)' | cmp -s - $@ || echo '$(REL_CONFIG)' > $@
# The installation paths written into libdrmacct.pc and the systemd units:
# a make install with another PREFIX must not install the last one's.
REL_PATHS := PREFIX=$(PREFIX) LIBDIR=$(LIBDIR) INCLUDEDIR=$(INCLUDEDIR) BINDIR=$(BINDIR) \
	SYSCONFDIR=$(SYSCONFDIR)
$(REL)/.paths: FORCE
	@mkdir -p $(@D); echo '$(REL_PATHS)' | cmp -s - $@ || echo '$(REL_PATHS)' > $@
$(REL)/.version: FORCE
	@test -n '$(VERSION)' || { echo "no VERSION: not a git checkout and no" \
		".tarball-version; give VERSION=..." >&2; exit 1; }
	@mkdir -p $(@D); echo '$(VERSION)' | cmp -s - $@ || echo '$(VERSION)' > $@
REL_VERSIONED := $(REL)/obj/user/drmacct/main.o $(REL)/obj/user/drmacct/export.o
$(REL_VERSIONED): REL_CPPFLAGS += -DDRMACCT_VERSION='"$(VERSION)"'
$(REL_VERSIONED) $(REL_MAN): $(REL)/.version
.PHONY: FORCE
FORCE:

$(REL)/pic/%.o: %.c $(REL)/.config
	@mkdir -p $(dir $@)
	$(CC) $(REL_CPPFLAGS) $(CPPFLAGS) $(REL_CFLAGS) $(CFLAGS) -fPIC -ffunction-sections \
		-fdata-sections -MMD -MP -c $< -o $@
$(REL)/obj/%.o: %.c $(REL)/.config $(if $(filter 1,$(BPF)),$(BPF_SKELS))
	@mkdir -p $(dir $@)
	$(CC) $(REL_CPPFLAGS) $(CPPFLAGS) $(REL_CFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@
$(REL_A): $(REL_PIC)
	rm -f $@ && $(AR) rcs $@ $^
# Only the symbols the map names are exported; --gc-sections drops the code
# nothing exported reaches; -z defs: every symbol the library uses resolved.
$(REL_SO): $(REL_PIC) $(LIB_MAP)
	$(CC) $(CFLAGS) $(LDFLAGS) -shared -Wl,-soname,$(REL_SONAME) \
		-Wl,--version-script=$(LIB_MAP) -Wl,--gc-sections -Wl,-z,defs \
		$(REL_PIC) $(LIB_LIBS) -o $@
	ln -sf $(notdir $@) $(REL)/$(REL_SONAME)
	ln -sf $(REL_SONAME) $(REL)/libdrmacct.so
$(REL_PC): user/lib/libdrmacct.pc.in $(REL)/.config $(REL)/.paths
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
		-e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(LIB_VERSION)|' $< > $@
$(REL_CLI): $(REL_OBJ) $(REL_A)
	$(CC) $(CFLAGS) $(LDFLAGS) $^ $(CLI_LIBS) -o $@
$(REL_MAN): Documentation/drmacct.rst user/drmacct/gen-man.sh
	@mkdir -p $(dir $@)
	user/drmacct/gen-man.sh $< $(VERSION) > $@.tmp && mv $@.tmp $@
$(REL)/completion/drmacct.bash: user/drmacct/options.tab user/drmacct/gen-completion.sh
	@mkdir -p $(dir $@)
	user/drmacct/gen-completion.sh bash $< > $@.tmp && mv $@.tmp $@
$(REL)/completion/_drmacct: user/drmacct/options.tab user/drmacct/gen-completion.sh
	@mkdir -p $(dir $@)
	user/drmacct/gen-completion.sh zsh $< > $@.tmp && mv $@.tmp $@
$(REL)/completion/drmacct.fish: user/drmacct/options.tab user/drmacct/gen-completion.sh
	@mkdir -p $(dir $@)
	user/drmacct/gen-completion.sh fish $< > $@.tmp && mv $@.tmp $@
$(REL)/systemd/%: systemd/%.in $(REL)/.config $(REL)/.paths
	@mkdir -p $(dir $@)
	sed -e 's|@BINDIR@|$(BINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' $< > $@

# Installs what do-drmacct built; builds it first when needed.
INSTALL_STRIP :=
install: do-install
do-install: do-drmacct
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(PKGCONFIGDIR) \
		$(DESTDIR)$(INCLUDEDIR)/drmacct $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(BASHCOMPDIR) \
		$(DESTDIR)$(ZSHCOMPDIR) $(DESTDIR)$(FISHCOMPDIR) $(DESTDIR)$(SYSTEMDUNITDIR) \
		$(DESTDIR)$(DOCDIR)/examples $(DESTDIR)$(DOCDIR)/LICENSES \
		$(DESTDIR)$(DATADIR)/drmacct/bpftrace
	$(INSTALL) -m 0755 $(INSTALL_STRIP) $(REL_CLI) $(DESTDIR)$(BINDIR)/drmacct
	$(INSTALL) -m 0755 $(REL_SO) $(DESTDIR)$(LIBDIR)/
	$(if $(INSTALL_STRIP),$(STRIP) --strip-unneeded $(DESTDIR)$(LIBDIR)/$(notdir $(REL_SO)))
	ln -sf $(notdir $(REL_SO)) $(DESTDIR)$(LIBDIR)/$(REL_SONAME)
	ln -sf $(REL_SONAME) $(DESTDIR)$(LIBDIR)/libdrmacct.so
	$(INSTALL) -m 0644 $(REL_A) $(DESTDIR)$(LIBDIR)/
	$(INSTALL) -m 0644 $(REL_PC) $(DESTDIR)$(PKGCONFIGDIR)/
	$(INSTALL) -m 0644 $(PUBLIC_HEADERS) $(DESTDIR)$(INCLUDEDIR)/drmacct/
	$(INSTALL) -m 0644 $(REL_MAN) $(DESTDIR)$(MANDIR)/man1/drmacct.1
	$(INSTALL) -m 0644 $(REL)/completion/drmacct.bash $(DESTDIR)$(BASHCOMPDIR)/drmacct
	$(INSTALL) -m 0644 $(REL)/completion/_drmacct $(DESTDIR)$(ZSHCOMPDIR)/_drmacct
	$(INSTALL) -m 0644 $(REL)/completion/drmacct.fish $(DESTDIR)$(FISHCOMPDIR)/drmacct.fish
	$(INSTALL) -m 0644 $(REL_UNITS) $(DESTDIR)$(SYSTEMDUNITDIR)/
	$(INSTALL) -m 0644 COPYING $(MAN_CITED_DOCS) $(DESTDIR)$(DOCDIR)/
	$(INSTALL) -m 0644 LICENSES/preferred/* LICENSES/exceptions/* $(DESTDIR)$(DOCDIR)/LICENSES/
	$(INSTALL) -m 0644 user/examples/*.c systemd/web-config.yml $(DESTDIR)$(DOCDIR)/examples/
	$(INSTALL) -m 0644 $(REL)/bpftrace/*.bt $(DESTDIR)$(DATADIR)/drmacct/bpftrace/
	$(INSTALL) -m 0644 Documentation/perfetto-drmacct.pbtxt $(DESTDIR)$(DATADIR)/drmacct/
install-strip:
	$(MAKE) --no-print-directory do-install INSTALL_STRIP='-s --strip-program=$(STRIP)'

# Removes exactly what install installs (and the directories only it uses).
INSTALLED = $(BINDIR)/drmacct $(LIBDIR)/$(notdir $(REL_SO)) $(LIBDIR)/$(REL_SONAME) \
	$(LIBDIR)/libdrmacct.so $(LIBDIR)/libdrmacct.a $(PKGCONFIGDIR)/libdrmacct.pc \
	$(PUBLIC_HEADERS:include/%=$(INCLUDEDIR)/%) $(MANDIR)/man1/drmacct.1 \
	$(BASHCOMPDIR)/drmacct $(ZSHCOMPDIR)/_drmacct $(FISHCOMPDIR)/drmacct.fish \
	$(UNITS:%=$(SYSTEMDUNITDIR)/%)
uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED))
	rm -rf $(DESTDIR)$(INCLUDEDIR)/drmacct $(DESTDIR)$(DOCDIR) $(DESTDIR)$(DATADIR)/drmacct

# A release tarball of the committed tree (HEAD) with .tarball-version, so
# that it builds, and knows its version, without git.
DIST_VERSION = $(shell scripts/version.sh --commit)
dist:
	@test -e .git || { echo "make dist: not a git checkout" >&2; exit 1; }
	@git diff-index --quiet HEAD -- || echo "make dist: uncommitted changes are" \
		"not in the tarball (it is HEAD)" >&2
	@v='$(DIST_VERSION)'; test -n "$$v" || exit 1; \
	rm -rf $(B)/dist/stage && mkdir -p $(B)/dist/stage && \
	echo "$$v" > $(B)/dist/stage/.tarball-version && \
	git archive --format=tar --prefix=drmacct-$$v/ \
		--add-file=$(B)/dist/stage/.tarball-version HEAD | xz -T1 > $(B)/dist/drmacct-$$v.tar.xz.tmp && \
	mv $(B)/dist/drmacct-$$v.tar.xz.tmp $(B)/dist/drmacct-$$v.tar.xz && \
	rm -rf $(B)/dist/stage && echo "$(B)/dist/drmacct-$$v.tar.xz"

# Every file's licence; then what the library, the CLI and the host
# programs are made of (their objects' depfiles) and link, against each
# one's licence: MIT for the library and the CLI, GPL-2.0 for tests.
spdx-check: $(REL_ALL) host $(BPF_NAMES:%=$(BB)/%.bpf.d)
	scripts/spdx-check.py tree
	scripts/spdx-check.py link libdrmacct MIT $(REL_PIC) $(filter -l%,$(LIB_LIBS))
	scripts/spdx-check.py link drmacct MIT $(REL_OBJ) $(REL_PIC) $(filter -l%,$(CLI_LIBS))
	@$(foreach t,$(HOST_TESTS),scripts/spdx-check.py link $(notdir $(t)) GPL-2.0 \
		$(HB)/obj/selftests/user/$(notdir $(t)).o $(HSUP_SRCS:%.c=$(HB)/obj/%.o) \
		selftests/harness/dtest.c selftests/harness/dtest.h $(HLIB_OBJS) \
		$(filter -l%,$(HOST_LIBS)) && ) true
	@$(foreach t,$(HOST_TOOLS),scripts/spdx-check.py link $(notdir $(t)) GPL-2.0 \
		$(HB)/obj/user/tools/$(notdir $(t)).o $(HLIB_OBJS) $(filter -l%,$(HOST_LIBS)) \
		&& ) true
# Documentation/bpf.rst's table of verified instructions, from the logs the
# last make test left (test_bpf_sets in each guest, test_bpf_verify here).
.PHONY: bpf-insn-table
bpf-insn-table:
	@scripts/bpf-insn-table.py $(B)/test
# Documentation/testing.rst's results table (counts per part, wall times,
# skips per kernel), from the logs the last make test left.
.PHONY: testing-table
testing-table:
	@scripts/testing-table.py $(B)/test

# `make mutants`: do the VM tests catch the bugs they are named after? Each
# patch under selftests/mutants/ is one deliberate bug; run-mutants.sh
# applies each in a scratch worktree under build/mutants/ (this tree is never
# modified), rebuilds, runs the programs the patch names on MUTANTS_KVER and
# prints which tests caught it, or NOT CAUGHT (then it fails). Not part of
# make test: a baseline run and one run per mutant, each with its own build.
MUTANTS_KVER ?= 6.12.117+deb12-amd64
.PHONY: mutants
mutants:
	selftests/mutants/run-mutants.sh $(MUTANTS_KVER) $(sort $(wildcard selftests/mutants/*.patch))

# ----------------------------------------------------------------------------
# The debug kernel: lockdep, KASAN, kmemleak, debug objects, atomic-sleep,
# UBSAN (kernel/configs/debug.config). Built once from Debian's linux-source-6.12 and cached
# outside the tree; then this make runs again with KROOT at the cache and
# KVERS the debug release, so modules, initramfs and VM runs take the same
# rules as for Debian's kernels. Too long for `make test` (a cold build took
# 26-54 min here, the suite under it 18-31 min, see testing.rst), hence a
# target of its own.
# ----------------------------------------------------------------------------
DEBUG_DEB_PACKAGES := linux-source-6.12
# The debug kernel's guest is slow: KASAN and lockdep under TCG. The
# bounded-results test runs 5000 rounds (still past the 4096 results kept)
# instead of 20000.
# With DEBUG_BTF=1 the BPF tests run too (they skip without BTF): one run
# of the suite took 3796 s before its last five programs, under load.
DEBUG_VM_TIMEOUT ?= $(if $(filter 1,$(DEBUG_BTF)),7200,3600)
DEBUG_VM_ENV ?= DT_TIMEOUT_SCALE=6,DRMACCT_BOUNDED_ROUNDS=5000
# no5lvl: with 5-level paging (-cpu max offers LA57) this kernel's KASAN
# reports a wild-memory-access in handle_edge_irq at early boot.
DEBUG_VM_APPEND := no5lvl dtimeout=1800
# DEBUG_BTF=1: the debug kernel with DWARF and BTF (kernel/configs/btf.config),
# cached under its own key; the BPF tests that need BTF run instead of skipping.
DEBUG_BTF ?= 0
comma := ,
.PHONY: test-debug debug-kernel do-test-debug
debug-kernel:
	@$(MAKE) --no-print-directory deps DEB_PACKAGES="$(DEB_PACKAGES) $(DEBUG_DEB_PACKAGES)"
	DEBUG_BTF=$(DEBUG_BTF) kernel/build-kernel.sh debug --print-root

test-debug:
	@t0=$$(date +%s); \
	$(MAKE) --no-print-directory deps DEB_PACKAGES="$(DEB_PACKAGES) $(DEBUG_DEB_PACKAGES)" || exit 1; \
	out=$$(DEBUG_BTF=$(DEBUG_BTF) kernel/build-kernel.sh debug --print-root) || exit 1; \
	t1=$$(date +%s); echo "timing: debug kernel (built or cached) $$((t1 - t0)) s"; \
	$(MAKE) --no-print-directory do-test-debug NEWEST=0 KROOT="$$(echo "$$out" | sed -n 1p)" \
		KVERS="$$(echo "$$out" | sed -n 2p)" DRMACCT_T1=$$t1

# Runner checks under the debug kernel: a failing test, a WARNING, and the
# two debug-only ones (lockdep, kmemleak); then the whole VM suite, checked
# for every report class (run-vm.sh) after the guest's kmemleak scan.
do-test-debug: do-all
	@rm -rf $(B)/test-debug && mkdir -p $(B)/test-debug
	@export VM_APPEND="$(DEBUG_VM_APPEND) $(VM_APPEND)"; t=$$(date +%s); \
	echo "timing: build $$((t - $${DRMACCT_T1:-$$t})) s" > $(B)/test-debug/timing; \
	RUNNER_CHECKS="fail warn lockdep kmemleak" $(call VM_ENV,$(KNEW)) \
		selftests/vm/test_runner.sh $(call KIMG,$(KNEW)) \
		$(call KB,$(KNEW))/initramfs.cpio.gz $(B)/test-debug/runner.log; \
	echo "timing: VM runner debug checks $$(( $$(date +%s) - t )) s" >> $(B)/test-debug/timing; \
	t=$$(date +%s); \
	$(call VM,$(KNEW)) --mode test --label "$(KNEW)" --timeout $(DEBUG_VM_TIMEOUT) \
		--env $(DEBUG_VM_ENV)$(if $(VM_ENV_VARS),$(comma)$(VM_ENV_VARS)) \
		$(if $(T),--only $(T),--expect "$(GUEST_TEST_NAMES)") \
		--log $(call KB,$(KNEW))/vm/test --tap $(B)/test-debug/vm-$(KNEW).log; \
	echo "timing: VM selftests on $(KNEW) $$(( $$(date +%s) - t )) s" >> $(B)/test-debug/timing; \
	cat $(B)/test-debug/timing; true
	@selftests/tap-summary.sh $(B)/test-debug/*.log

clean:
	rm -rf $(B)

# (not build/mutants/: make mutants' scratch tree has a build of its own)
-include $(shell find $(B) -path $(B)/mutants -prune -o -name '*.d' -type f -print 2>/dev/null)
