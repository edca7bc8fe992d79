# SPDX-License-Identifier: GPL-2.0
#
# tdmwin: time-division multiplexed transmit windows for Ethernet on Linux.
#
#   make                 plugin, tools (tdmd, tdmctl), and modules for KDIR
#                        (the running kernel's headers by default, skipped
#                        if absent)
#   make install         install them, man pages, systemd units, examples
#                        (DESTDIR, PREFIX, KDIR honoured); make uninstall
#   make dkms-install    the module source into /usr/src/tdmwin-VERSION,
#                        then dkms add, build, install; make dkms-uninstall
#   make check           unit tests, lint, and the selftests on Debian's 6.1
#                        and 6.12 kernels in QEMU guests (sets up what is
#                        missing: packages, virtme-ng, kernels)
#   make check-debug     the kernel-side selftests on a debug kernel (KASAN,
#                        lockdep, kmemleak) built once from linux-source-6.1;
#                        slow (see selftests/README), not part of make check
#   make demo            the virtual testbed demo in a guest
#   make bench           benchmarks in a guest (ratios, not pass/fail)
#   make lint            checkpatch, sparse and W=1 on both kernels, plugin ABI
#   make unit            user-space unit tests under ASan/UBSan
#   make fuzz            each libFuzzer harness for FUZZ_TIME seconds (20)
#   make testbed-test    the testbed's host tests (testbed/tests: its models
#                        and judges on synthetic captures; no guest)

TOP	:= $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
BUILD	:= $(TOP)/build
KVER	?= $(shell uname -r)
KDIR	?= /lib/modules/$(KVER)/build
# Modules are built in a copy of kmod/ per kernel release, under KMODOUT.
KMODOUT	?= $(BUILD)/kmod
TESTBED	:= $(TOP)/testbed/guest
KERNELS	?= 6.1 6.12
DESTDIR	?=
PREFIX	?= /usr
MANDIR	?= $(PREFIX)/share/man
DOCDIR	?= $(PREFIX)/share/doc/tdmwin
SYSCONFDIR ?= /etc
include $(TOP)/version.mk

CC	?= cc
UCFLAGS	:= -std=c11 -O1 -g -Wall -Wextra -Werror -fno-omit-frame-pointer \
	   -fsanitize=address,undefined -fno-sanitize-recover=all

.PHONY: all modules modules-testbed testdev-build plugin tools install uninstall unit \
	fuzz lint check check-debug setup demo bench clean help dkms-install \
	dkms-uninstall testbed-test

# ($(MAKE) written out in each recipe: make passes its jobs to a
# sub-make only where the recipe names $(MAKE) itself)
US	:= -C $(TOP)/userspace O=$(BUILD)/us
FUZZ_TIME ?= 20

all: plugin tools modules

# tdmd and tdmctl, plus their sanitizer builds for the guest selftests.
tools:
	$(MAKE) $(US) tools $(BUILD)/us/san/bin/tdmd $(BUILD)/us/san/bin/tdmctl
	$(MAKE) -C $(TOP)/selftests tools

help:
	@sed -n '3,24p' $(TOP)/Makefile

plugin:
	$(MAKE) -C $(TOP)/tc-plugin O=$(BUILD)/tc

# Modules for one kernel tree: a private copy of kmod/ per kernel keeps the
# two testbed kernels' objects apart.
modules:
	@if [ -d "$(KDIR)" ]; then \
		$(MAKE) -f $(TOP)/Makefile kmod-build KDIR=$(KDIR) \
			KOUT=$(KMODOUT)/$$($(TOP)/tools/kernelrelease $(KDIR)); \
	else \
		echo "modules: no kernel headers at $(KDIR); skipped" \
		     "(set KDIR=..., or 'make modules-testbed' for the guest kernels)"; \
	fi

kmod-build:
	@mkdir -p $(KOUT)
	@cp -a $(TOP)/kmod/. $(KOUT)/
	$(MAKE) -C $(KDIR) M=$(KOUT) W=$(W) C=$(C) modules

# The selftests' test-double NIC (selftests/kmod/tdm_testdev.c), beside the
# modules in $(KOUT)/testdev: for the testbed kernels only, never installed
# by make install or DKMS.
testdev-build:
	@mkdir -p $(KOUT)/testdev
	@cp -a $(TOP)/selftests/kmod/. $(KOUT)/testdev/
	$(MAKE) -C $(KDIR) M=$(KOUT)/testdev W=$(W) C=$(C) modules

modules-testbed: setup
	@for k in $(KERNELS); do \
		kdir=$$($(TESTBED)/kinfo $$k KDIR) || exit 1; \
		kver=$$($(TESTBED)/kinfo $$k KVER) || exit 1; \
		$(MAKE) -f $(TOP)/Makefile kmod-build KDIR=$$kdir \
			KOUT=$(KMODOUT)/$$kver || exit 1; \
		$(MAKE) -f $(TOP)/Makefile testdev-build KDIR=$$kdir \
			KOUT=$(KMODOUT)/$$kver || exit 1; \
		$(TESTBED)/install-module $$k $(KMODOUT)/$$kver/*.ko \
			$(KMODOUT)/$$kver/testdev/tdm_testdev.ko || exit 1; \
	done

setup:
	@$(TESTBED)/setup

# What make install puts where (make uninstall removes exactly these).
# The modules go to /lib/modules/<release of KDIR>/extra, the tc plugin to
# tc's own plugin folder (tc-plugin/Makefile, TCLIBDIR), the programs and
# systemd units through userspace/Makefile.  /etc/tdm/tdm.conf is never
# written: tdm.conf.example goes beside it.
MODULES	 := sch_tdmwin.ko tdmrx.ko
MAN1	 := tdmgen.1 tdmstat.1 tdmplot.1
MAN3	 := tdmgate.3
MAN5	 := tdm.conf.5
MAN8	 := tdmd.8 tdmctl.8 tc-tdmwin.8 libtdmgate-preload.8
EXAMPLES := $(notdir $(wildcard $(TOP)/userspace/examples/*))
DOCS	 := $(notdir $(wildcard $(TOP)/Documentation/*.rst))
MODDEST	 = $(DESTDIR)/lib/modules/$$kver/extra
# The kernel release the modules are for: KDIR's, or KVER without headers.
KREL	 = kver=$$([ -d "$(KDIR)" ] && $(TOP)/tools/kernelrelease $(KDIR) || echo $(KVER))

install: all
	@$(KREL); if [ -d "$(KDIR)" ]; then \
		echo "install: modules for $$kver into $(MODDEST)"; \
		install -D -m 0644 -t $(MODDEST) \
			$(addprefix $(KMODOUT)/$$kver/,$(MODULES)) && \
		{ [ -n "$(DESTDIR)" ] || depmod -a $$kver; }; \
	else \
		echo "install: no kernel headers at $(KDIR); modules not installed" \
		     "(set KDIR=..., or use make dkms-install)"; \
	fi
	$(MAKE) -C $(TOP)/tc-plugin O=$(BUILD)/tc install DESTDIR=$(DESTDIR)
	$(MAKE) $(US) install DESTDIR=$(DESTDIR) PREFIX=$(PREFIX)
	install -D -m 0644 -t $(DESTDIR)$(MANDIR)/man1 $(MAN1:%=$(TOP)/Documentation/man/%)
	install -D -m 0644 -t $(DESTDIR)$(MANDIR)/man3 $(MAN3:%=$(TOP)/Documentation/man/%)
	install -D -m 0644 -t $(DESTDIR)$(MANDIR)/man5 $(MAN5:%=$(TOP)/Documentation/man/%)
	install -D -m 0644 -t $(DESTDIR)$(MANDIR)/man8 $(MAN8:%=$(TOP)/Documentation/man/%)
	install -D -m 0644 -t $(DESTDIR)$(DOCDIR)/examples \
		$(EXAMPLES:%=$(TOP)/userspace/examples/%)
	install -D -m 0644 -t $(DESTDIR)$(DOCDIR) $(TOP)/README \
		$(DOCS:%=$(TOP)/Documentation/%)
	install -D -m 0644 $(TOP)/userspace/examples/tdm.conf.example \
		$(DESTDIR)$(SYSCONFDIR)/tdm/tdm.conf.example

uninstall:
	@$(KREL); rm -f $(addprefix $(MODDEST)/,$(MODULES)); \
	if [ -z "$(DESTDIR)" ] && [ -d /lib/modules/$$kver ]; then depmod -a $$kver; fi
	$(MAKE) -C $(TOP)/tc-plugin O=$(BUILD)/tc uninstall DESTDIR=$(DESTDIR)
	$(MAKE) $(US) uninstall DESTDIR=$(DESTDIR) PREFIX=$(PREFIX)
	rm -f $(MAN1:%=$(DESTDIR)$(MANDIR)/man1/%) \
	      $(MAN3:%=$(DESTDIR)$(MANDIR)/man3/%) \
	      $(MAN5:%=$(DESTDIR)$(MANDIR)/man5/%) \
	      $(MAN8:%=$(DESTDIR)$(MANDIR)/man8/%) \
	      $(EXAMPLES:%=$(DESTDIR)$(DOCDIR)/examples/%) \
	      $(DOCS:%=$(DESTDIR)$(DOCDIR)/%) $(DESTDIR)$(DOCDIR)/README \
	      $(DESTDIR)$(SYSCONFDIR)/tdm/tdm.conf.example
	@for d in $(DESTDIR)$(DOCDIR)/examples $(DESTDIR)$(DOCDIR) \
		  $(DESTDIR)$(SYSCONFDIR)/tdm; do \
		[ ! -d $$d ] || rmdir --ignore-fail-on-non-empty $$d; done

# DKMS: the module source (dkms.conf and kmod/) into /usr/src/tdmwin-VERSION;
# dkms then rebuilds the modules for every kernel installed later.
# DKMS_FLAGS passes options to dkms (e.g. -k KVER --kernelsourcedir DIR).
DKMS_SRC := $(DESTDIR)/usr/src/tdmwin-$(VERSION)
DKMS_FLAGS ?=
NODKMS	 := echo "dkms is not installed (apt-get install dkms); nothing done." \
	    "Without dkms: make modules && make install" >&2; exit 1

dkms-install:
	@command -v dkms >/dev/null || { $(NODKMS); }
	rm -rf $(DKMS_SRC)
	install -d $(DKMS_SRC)/kmod
	install -m 0644 $(TOP)/dkms.conf $(DKMS_SRC)/dkms.conf
	cp -R $(TOP)/kmod/. $(DKMS_SRC)/kmod/
	dkms add $(DKMS_FLAGS) -m tdmwin -v $(VERSION)
	dkms build $(DKMS_FLAGS) -m tdmwin -v $(VERSION)
	dkms install $(DKMS_FLAGS) -m tdmwin -v $(VERSION)

dkms-uninstall:
	@command -v dkms >/dev/null || { $(NODKMS); }
	-dkms remove $(DKMS_FLAGS) -m tdmwin -v $(VERSION) $(if $(filter -k,$(DKMS_FLAGS)),,--all)
	rm -rf $(DKMS_SRC)

# The gate arithmetic, then the user-space library and tools (one
# "N passed, N failed" line for both).
unit: $(BUILD)/test_gate
	@$(BUILD)/test_gate >$(BUILD)/test_gate.log 2>&1; rc=$$?; \
	  cat $(BUILD)/test_gate.log; \
	  if [ $$rc = 0 ]; then echo "ok - test_gate"; else echo "not ok - test_gate"; fi; \
	  $(MAKE) $(US) tests >$(BUILD)/us-tests-build.log 2>&1 || { \
	    tail -n 40 $(BUILD)/us-tests-build.log; echo "0 passed, 1 failed"; exit 1; }; \
	  cd $(TOP)/userspace && ./tests/run-unit --extra $$rc $(BUILD)/us/tests/test_*

fuzz:
	$(MAKE) $(US) fuzz FUZZ_TIME=$(FUZZ_TIME)

$(BUILD)/test_gate: userspace/tests/test_gate.c userspace/lib/tdm_gate.h \
		    kmod/tdmwin_gate.h kmod/uapi/linux/tdmwin.h
	@mkdir -p $(BUILD)
	$(CC) $(UCFLAGS) -Iuserspace/lib -o $@ $<

lint: setup
	$(TOP)/tools/lint

# The testbed's host tests: Debian's python3, standard library only.
testbed-test:
	/usr/bin/python3 $(TOP)/testbed/tests/run

check: setup
	$(TOP)/tools/check

check-debug: setup
	$(TOP)/tools/check-debug

demo: setup plugin tools modules-testbed
	$(TOP)/tools/demo $(DEMO_ARGS)

bench: setup plugin tools modules-testbed
	$(TOP)/tools/bench $(BENCH_ARGS)

clean:
	rm -rf $(BUILD)
	$(MAKE) -C $(TOP)/tc-plugin O=$(BUILD)/tc clean
