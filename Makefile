# SPDX-License-Identifier: GPL-2.0
#
# tdmwin: time-division multiplexed transmit windows for Ethernet on Linux.
#
#   make                 plugin, tools (tdmd, tdmctl), and modules for KDIR
#                        (the running kernel's headers by default, skipped
#                        if absent)
#   make install         install them (DESTDIR, KDIR honoured)
#   make check           unit tests, lint, and the selftests on Debian's 6.1
#                        and 6.12 kernels in QEMU guests (sets up what is
#                        missing: packages, virtme-ng, kernels)
#   make demo            the virtual testbed demo in a guest
#   make bench           benchmarks in a guest (ratios, not pass/fail)
#   make lint            checkpatch, sparse and W=1 on both kernels, plugin ABI
#   make unit            user-space unit tests under ASan/UBSan
#   make fuzz            each libFuzzer harness for FUZZ_TIME seconds (20)

TOP	:= $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
BUILD	:= $(TOP)/build
KVER	?= $(shell uname -r)
KDIR	?= /lib/modules/$(KVER)/build
TESTBED	:= $(TOP)/tools/testbed
KERNELS	?= 6.1 6.12
DESTDIR	?=

CC	?= cc
UCFLAGS	:= -std=c11 -O1 -g -Wall -Wextra -Werror -fno-omit-frame-pointer \
	   -fsanitize=address,undefined -fno-sanitize-recover=all

.PHONY: all modules modules-testbed plugin tools install uninstall unit \
	fuzz lint check setup demo bench clean help

US	:= $(MAKE) -C $(TOP)/userspace O=$(BUILD)/us
FUZZ_TIME ?= 20

all: plugin tools modules

# tdmd and tdmctl, plus their sanitizer builds for the guest selftests.
tools:
	$(US) tools $(BUILD)/us/san/bin/tdmd $(BUILD)/us/san/bin/tdmctl
	$(MAKE) -C $(TOP)/selftests tools

help:
	@sed -n '3,18p' $(TOP)/Makefile

plugin:
	$(MAKE) -C $(TOP)/tc-plugin O=$(BUILD)/tc

# Modules for one kernel tree: a private copy of kmod/ per kernel keeps the
# two testbed kernels' objects apart.
modules:
	@if [ -d "$(KDIR)" ]; then \
		$(MAKE) -f $(TOP)/Makefile kmod-build KDIR=$(KDIR) \
			KOUT=$(BUILD)/kmod/$$($(TOP)/tools/kernelrelease $(KDIR)); \
	else \
		echo "modules: no kernel headers at $(KDIR); skipped" \
		     "(set KDIR=..., or 'make modules-testbed' for the guest kernels)"; \
	fi

kmod-build:
	@mkdir -p $(KOUT)
	@cp -a $(TOP)/kmod/. $(KOUT)/
	$(MAKE) -C $(KDIR) M=$(KOUT) W=$(W) C=$(C) modules

modules-testbed: setup
	@for k in $(KERNELS); do \
		kdir=$$($(TESTBED)/kinfo $$k KDIR) || exit 1; \
		kver=$$($(TESTBED)/kinfo $$k KVER) || exit 1; \
		$(MAKE) -f $(TOP)/Makefile kmod-build KDIR=$$kdir \
			KOUT=$(BUILD)/kmod/$$kver || exit 1; \
		$(TESTBED)/install-module $$k $(BUILD)/kmod/$$kver/*.ko || exit 1; \
	done

setup:
	@$(TESTBED)/setup

install: all
	@if [ -d "$(KDIR)" ]; then \
		kver=$$($(TOP)/tools/kernelrelease $(KDIR)); \
		install -D -m 0644 -t $(DESTDIR)/lib/modules/$$kver/extra \
			$(BUILD)/kmod/$$kver/sch_tdmwin.ko \
			$(BUILD)/kmod/$$kver/tdmrx.ko && \
		{ [ -n "$(DESTDIR)" ] || depmod -a $$kver; }; \
	else \
		echo "install: no kernel headers at $(KDIR); modules not installed"; \
	fi
	$(MAKE) -C $(TOP)/tc-plugin O=$(BUILD)/tc install DESTDIR=$(DESTDIR)
	$(US) install DESTDIR=$(DESTDIR)
	install -D -m 0644 -t $(DESTDIR)/usr/share/man/man8 \
		Documentation/man/tdmd.8 Documentation/man/tdmctl.8
	install -D -m 0644 -t $(DESTDIR)/usr/share/man/man5 \
		Documentation/man/tdm.conf.5
	install -D -m 0644 -t $(DESTDIR)/usr/share/man/man1 \
		Documentation/man/tdmgen.1 Documentation/man/tdmstat.1 \
		Documentation/man/tdmplot.1

uninstall:
	rm -f $(DESTDIR)/lib/modules/$(KVER)/extra/sch_tdmwin.ko \
	      $(DESTDIR)/lib/modules/$(KVER)/extra/tdmrx.ko
	-[ -n "$(DESTDIR)" ] || depmod -a $(KVER)
	$(MAKE) -C $(TOP)/tc-plugin O=$(BUILD)/tc uninstall DESTDIR=$(DESTDIR)
	$(US) uninstall DESTDIR=$(DESTDIR)
	rm -f $(DESTDIR)/usr/share/man/man8/tdmd.8 \
	      $(DESTDIR)/usr/share/man/man8/tdmctl.8 \
	      $(DESTDIR)/usr/share/man/man5/tdm.conf.5 \
	      $(DESTDIR)/usr/share/man/man1/tdmgen.1 \
	      $(DESTDIR)/usr/share/man/man1/tdmstat.1 \
	      $(DESTDIR)/usr/share/man/man1/tdmplot.1

# The gate arithmetic, then the user-space library and tools (one
# "N passed, N failed" line for both).
unit: $(BUILD)/test_gate
	@$(BUILD)/test_gate >$(BUILD)/test_gate.log 2>&1; rc=$$?; \
	  cat $(BUILD)/test_gate.log; \
	  if [ $$rc = 0 ]; then echo "ok - test_gate"; else echo "not ok - test_gate"; fi; \
	  $(US) tests >$(BUILD)/us-tests-build.log 2>&1 || { \
	    tail -n 40 $(BUILD)/us-tests-build.log; echo "0 passed, 1 failed"; exit 1; }; \
	  cd $(TOP)/userspace && ./tests/run-unit --extra $$rc $(BUILD)/us/tests/test_*

fuzz:
	$(US) fuzz FUZZ_TIME=$(FUZZ_TIME)

$(BUILD)/test_gate: userspace/tests/test_gate.c userspace/tests/kcompat.h \
		    kmod/tdmwin_gate.h kmod/uapi/linux/tdmwin.h
	@mkdir -p $(BUILD)
	$(CC) $(UCFLAGS) -o $@ $<

lint: setup
	$(TOP)/tools/lint

check: setup
	$(TOP)/tools/check

demo: setup plugin modules-testbed
	$(TOP)/tools/demo $(DEMO_ARGS)

bench: setup plugin tools modules-testbed
	$(TOP)/tools/bench $(BENCH_ARGS)

clean:
	rm -rf $(BUILD)
	$(MAKE) -C $(TOP)/tc-plugin O=$(BUILD)/tc clean
