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

SERIES ?= 6.1 6.12 7.2 7.3
DEMO_SERIES ?= 7.3
KDIR ?= /lib/modules/$(shell uname -r)/build

.PHONY: all setup ctl tools guest-progs modules test demo bench soak style \
	module-local clean

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

style:
	scripts/style

clean:
	rm -rf build
	$(MAKE) -C userspace-ctl clean
	$(MAKE) -C tools/klp clean
	rm -f *.o *.ko *.mod *.mod.c .*.cmd modules.order Module.symvers \
		module/*.o module/.*.cmd
