# SPDX-License-Identifier: GPL-2.0
#
# mmfix - for humans.  Kbuild holds the kernel build; this file drives
# set-up, per-kernel builds, tests, demo and benchmarks.
#
#   make demo        set everything up, boot $(DEMO_SERIES) in QEMU, load
#                    mmfix, show mmfixctl status, run the churn benchmark
#   make test        set everything up and run the whole suite
#                    (ends with "N passed, N failed")
#   make bench       full-size benchmarks (figures quoted in docs/)
#   make soak        full-size reliability suite
#   make modules     mmfix.ko for every series (build/<series>/mmfix.ko)
#   make ctl         mmfixctl
#   make style       checkpatch over the module
#   make dkms-install  mmfix under DKMS for KVER (default: running kernel)
#   make dkms-remove   take it out of DKMS again
#   make install     mmfixctl, its man page and bash completion
#   make install-boot  /etc/modules-load.d and /etc/modprobe.d defaults

SERIES ?= 6.1 6.12 7.2 7.3
DEMO_SERIES ?= 7.3
KDIR ?= /lib/modules/$(shell uname -r)/build

.PHONY: all setup ctl tools guest-progs modules test demo bench soak style \
	module-local clean dkms-build dkms-src dkms-install dkms-remove install \
	install-boot

all: ctl tools

setup:
	scripts/setup

ctl:
	$(MAKE) -C userspace-ctl

tools:
	$(MAKE) -C tools/klp

guest-progs:
	tests/guest/build-progs build/guest-progs

modules: setup tools
	@for s in $(SERIES); do scripts/build-module $$s || exit 1; done

# Build against KDIR (e.g. the running kernel), as DKMS does.
module-local: tools
	$(MAKE) -C $(KDIR) M=$(CURDIR) KBUILD_MODPOST_WARN=1 modules
	tools/klp/klp-convert --syms module/klp-symbols \
		--symvers $(KDIR)/Module.symvers mmfix.ko
	tools/klp/klp-check --symvers $(KDIR)/Module.symvers mmfix.ko

test:
	tests/run-all $(SERIES)

demo:
	tests/demo $(DEMO_SERIES)

# Every bench/*/run, full size, on every series.
bench:
	@for b in bench/*/run; do for s in $(SERIES); do \
		$$b $$s full || exit 1; done; done

# The reliability suite (t-7x) at full size on every series, then
# docs/reliability.md from what the guests reported (hours under TCG).
soak: setup tools ctl
	scripts/reliability $(SERIES)

style:
	scripts/style

clean:
	rm -rf build
	$(MAKE) -C userspace-ctl clean
	$(MAKE) -C tools/klp clean
	rm -f *.o *.ko *.mod *.mod.c .*.cmd modules.order Module.symvers \
		module/*.o module/.*.cmd

# DKMS and installation (docs/install.md).  dkms.conf comes from
# scripts/gen-dkms-conf; the source tree DKMS builds from is
# /usr/src/mmfix-VERSION, holding only what dkms-build needs.
MMFIX_VERSION := $(shell scripts/abi-info version)
KVER ?= $(shell uname -r)
DKMS_SRC = /usr/src/mmfix-$(MMFIX_VERSION)
DKMS_FILES = dkms.conf Makefile Kbuild scripts/abi-info scripts/gen-dkms-conf \
	module/klp-symbols \
	$(wildcard module/*.c module/*.h include/*.h) tools/klp/Makefile \
	$(wildcard tools/klp/*.c tools/klp/*.h)
# dkms runs make itself; it must not see this make's MAKEFLAGS.
DKMS = env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS dkms
DKMS_HAS = $(DKMS) status mmfix/$(MMFIX_VERSION) 2>/dev/null | grep -q .

# What dkms.conf's MAKE runs in dkms's copy of the tree.
dkms-build: module-local

dkms-src:
	scripts/gen-dkms-conf --check
	rm -rf $(DESTDIR)$(DKMS_SRC)
	mkdir -p $(DESTDIR)$(DKMS_SRC)
	cp --parents $(DKMS_FILES) $(DESTDIR)$(DKMS_SRC)/

# Replaces an mmfix of the same version; KVER may list several kernels.
# An unsupported kernel is skipped (dkms exit status 77), not an error.
dkms-install:
	if $(DKMS_HAS); then $(DKMS) remove mmfix/$(MMFIX_VERSION) --all; fi
	$(MAKE) dkms-src DESTDIR=
	$(DKMS) add mmfix/$(MMFIX_VERSION)
	@for k in $(KVER); do \
		echo "dkms install mmfix/$(MMFIX_VERSION) -k $$k"; \
		$(DKMS) install mmfix/$(MMFIX_VERSION) -k $$k; rc=$$?; \
		if [ $$rc = 77 ]; then \
			echo "dkms-install: $$k is not a supported kernel; skipped"; \
		elif [ $$rc != 0 ]; then exit $$rc; fi; \
	done

dkms-remove:
	if $(DKMS_HAS); then $(DKMS) remove mmfix/$(MMFIX_VERSION) --all; fi
	rm -rf $(DKMS_SRC)

install:
	$(MAKE) -C userspace-ctl install

# Load mmfix at boot with the fixes named in modprobe.d switched on.
# Existing files are left alone: they hold the administrator's choice.
install-boot:
	@for f in modules-load.d/mmfix.conf modprobe.d/mmfix.conf; do \
		if [ -e $(DESTDIR)/etc/$$f ]; then \
			echo "install-boot: keeping existing /etc/$$f"; \
		else \
			install -D -m 0644 contrib/$$f $(DESTDIR)/etc/$$f; \
			echo "install-boot: installed /etc/$$f"; \
		fi; \
	done
