# SPDX-License-Identifier: GPL-2.0
#
# mmfix - for humans.  Kbuild holds the kernel build; this file drives
# set-up, per-kernel builds, tests, demo and benchmarks.
#
#   make demo        set up what it needs (no Prometheus, no Ansible),
#                    boot $(DEMO_SERIES) in QEMU, load mmfix, A/B
#                    populate_drain; prints mmfixctl status, the table,
#                    a picture's path and a one-line result
#   make test        set everything up and run the whole suite, make
#                    demo included (ends with "N passed, N failed")
#   make bench       full-size benchmarks (figures quoted in docs/)
#   make soak        full-size reliability suite, and the kernel's own
#                    livepatch selftests, all of them, without and with mmfix
#   make soak-cloud  the whole guest suite on the 7.3 -cloud-amd64 build
#   make modules     mmfix.ko for every series (build/<series>/mmfix.ko)
#   make ctl         mmfixctl
#   make style       checkpatch over the module
#   make dkms-install  mmfix under DKMS for KVER (default: running kernel)
#   make dkms-remove   take it out of DKMS again
#   make install     mmfixctl, its man page and bash completion under
#                    PREFIX (default /usr/local; /usr is the packages')
#   make install-boot  mmfix.service, mmfix-textfile.{service,timer} and
#                    the /etc/modprobe.d default
#   make uninstall, make uninstall-boot   take them out again
#   make deb         mmfix-dkms and mmfixctl .deb packages in build/deb/
#   make test-verify-installed  mmfix-verify-build from the packages on a
#                    real older Debian build (not in make test)
#   make test-fleet-vm  contrib/ansible and contrib/prometheus against
#                    Debian guests over SSH and a real Prometheus (not in
#                    make test; FULL=1: 4 guests, a longer A/B window)
#   make test-deb-remove  the packages' apt-get remove and purge under a
#                    booted trixie system's own systemd (make test runs
#                    it too, in tests/host/deb)

SERIES ?= 6.1 6.12 7.2 7.3
DEMO_SERIES ?= 7.3
KDIR ?= /lib/modules/$(shell uname -r)/build
# promtool, prometheus, prometheus-node-exporter: unpacked by scripts/setup
export PATH := $(CURDIR)/.cache/bin:$(PATH)

.PHONY: all setup ctl tools guest-progs modules test demo bench soak soak-cloud style \
	module-local clean dkms-build dkms-src dkms-install dkms-remove install \
	install-boot uninstall uninstall-boot deb test-verify-installed test-fleet-vm \
	test-deb-remove

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
# Both names: mmfix, and mmfix_alt for upgrades (module/upgrade.c).
module-local: tools
	@for m in mmfix mmfix_alt; do \
		$(MAKE) -C $(KDIR) M=$(CURDIR) KBUILD_MODPOST_WARN=1 \
			MMFIX_MODULE=$$m modules && \
		tools/klp/klp-convert --syms module/klp-symbols \
			--symvers $(KDIR)/Module.symvers $$m.ko && \
		tools/klp/klp-check --symvers $(KDIR)/Module.symvers $$m.ko || \
		exit 1; \
	done

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
	tests/klp-selftests/run $(SERIES)

# The whole guest suite on the -cloud-amd64 build of 7.3 (make test runs
# a subset of it).
soak-cloud: setup tools ctl guest-progs
	tests/vm/run-flavour --full 7.3-cloud

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
	module/klp-symbols module/copied-functions module/verified-builds \
	scripts/verify-build scripts/kernel-function scripts/extract-btf \
	scripts/mmfix-verify-build tests/layout/run \
	$(wildcard module/*.c module/*.h include/*.h) tools/klp/Makefile \
	$(wildcard tools/klp/*.c tools/klp/*.h)
# dkms runs make itself; it must not see this make's MAKEFLAGS.
DKMS = env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS dkms
DKMS_HAS = $(DKMS) status mmfix/$(MMFIX_VERSION) 2>/dev/null | grep -q .

# What dkms.conf's MAKE runs in dkms's copy of the tree: first the
# verified list (include/mmfix_verified.h) gets the builds verified on
# this machine (/var/lib/mmfix/verified-builds), and with
# MMFIX_VERIFY_BUILDS in /etc/default/mmfix an unverified build is
# verified first (scripts/verify-build --dkms; docs/install.md).
dkms-build:
	scripts/verify-build --dkms $(KDIR)
	$(MAKE) module-local

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

# Source installs go to /usr/local; /usr belongs to dpkg (make deb).
PREFIX ?= /usr/local
SBINDIR = $(PREFIX)/sbin
LIBEXECDIR = $(PREFIX)/libexec/mmfix
UNITDIR = /etc/systemd/system
INSTALLED = $(SBINDIR)/mmfixctl $(PREFIX)/share/man/man8/mmfixctl.8 \
	$(PREFIX)/share/bash-completion/completions/mmfixctl \
	$(addprefix $(PREFIX)/lib/mmfix/workloads/,populate-churn anon-fault khugepaged-vmas)

install:
	$(MAKE) -C userspace-ctl install PREFIX=$(PREFIX)

uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED))
	for d in $(PREFIX)/lib/mmfix/workloads $(PREFIX)/lib/mmfix; do \
		[ ! -d $(DESTDIR)$$d ] || rmdir --ignore-fail-on-non-empty $(DESTDIR)$$d; done

# mmfix.service (loads mmfix at boot, fails visibly; docs/install.md),
# its helper, the node_exporter textfile export (mmfix-textfile.timer),
# and the fixes switched on at load in modprobe.d.  An
# existing modprobe.d file is left alone: it holds the administrator's
# choice.  The unit is installed, not enabled.
install-boot:
	install -D -m 0755 contrib/systemd/mmfix-load $(DESTDIR)$(LIBEXECDIR)/mmfix-load
	mkdir -p $(DESTDIR)$(UNITDIR)
	sed -e 's|/usr/libexec/mmfix/|$(LIBEXECDIR)/|' \
		-e 's|/usr/sbin/mmfixctl|$(SBINDIR)/mmfixctl|' \
		contrib/systemd/mmfix.service >$(DESTDIR)$(UNITDIR)/mmfix.service
	for u in mmfix-textfile.service mmfix-textfile.timer; do \
		sed -e 's|/usr/sbin/mmfixctl|$(SBINDIR)/mmfixctl|' \
			contrib/systemd/$$u >$(DESTDIR)$(UNITDIR)/$$u || exit 1; \
	done
	@f=modprobe.d/mmfix.conf; \
	if [ -e $(DESTDIR)/etc/$$f ]; then \
		echo "install-boot: keeping existing /etc/$$f"; \
	else \
		install -D -m 0644 contrib/$$f $(DESTDIR)/etc/$$f; \
		echo "install-boot: installed /etc/$$f"; \
	fi
	@echo "install-boot: installed $(UNITDIR)/mmfix.service; enable it with: systemctl daemon-reload && systemctl enable mmfix.service"

# The modprobe.d file only when it is still the one install-boot put
# there; the unit's enablement link with the unit.
uninstall-boot:
	rm -f $(DESTDIR)$(UNITDIR)/multi-user.target.wants/mmfix.service \
		$(DESTDIR)$(UNITDIR)/mmfix.service $(DESTDIR)$(LIBEXECDIR)/mmfix-load \
		$(DESTDIR)$(UNITDIR)/timers.target.wants/mmfix-textfile.timer \
		$(DESTDIR)$(UNITDIR)/mmfix-textfile.service \
		$(DESTDIR)$(UNITDIR)/mmfix-textfile.timer
	[ ! -d $(DESTDIR)$(LIBEXECDIR) ] || rmdir --ignore-fail-on-non-empty $(DESTDIR)$(LIBEXECDIR)
	@f=/etc/modprobe.d/mmfix.conf; \
	if cmp -s contrib$${f#/etc} $(DESTDIR)$$f; then \
		rm -f $(DESTDIR)$$f; \
	elif [ -e $(DESTDIR)$$f ]; then \
		echo "uninstall-boot: keeping $$f (changed by the administrator)"; \
	fi

# mmfix-verify-build from the packages, on a real Debian build not in the
# shipped list, in a clean bookworm root (tests/verify-installed/run),
# then that build's own image booted with the modules built before and
# after (tests/verify-installed/vm).  About 5 minutes on an idle host;
# not part of make test; needs tests/host/deb's root.
test-verify-installed: deb
	tests/verify-installed/run
	tests/verify-installed/vm

# The rollout of contrib/ansible over SSH to Debian 7.3 guests under QEMU,
# judged by Debian's Prometheus with contrib/prometheus's rules
# (tests/host/fleet-vm/rollout).  Not in make test: every Ansible task
# costs seconds of emulated Python, ~25-35 min on a busy 2-core host.
test-fleet-vm: setup guest-progs
	tests/host/fleet-vm/rollout $(if $(FULL),--full)

# tests/host/deb's trixie part alone, with the removal (dkms remove over
# two kernels; tests/guest/systemd/mmfix-unit-test), as make test runs it
test-deb-remove: setup tools guest-progs
	MMFIX_DEB_SUITES=trixie MMFIX_DEB_REMOVE=yes tests/host/deb/run

# Debian packages, built with dpkg-buildpackage from a copy of the
# tree's files (git ls-files; without git, as from a release tarball,
# every file but build/ and .cache/) in build/deb/, where the source
# package (.dsc, .tar.xz), the .debs and VERSION (debian/version: the
# version written into the copy) land.  Needs the build dependencies of
# debian/control and lintian, which must report no error or warning.
DEB_DIR = build/deb
deb:
	@command -v dpkg-buildpackage >/dev/null && command -v lintian >/dev/null || \
		{ echo "make deb: needs dpkg-dev, debhelper, dh-dkms and lintian" >&2; exit 1; }
	rm -rf $(DEB_DIR)
	mkdir -p $(DEB_DIR)
	debian/version >$(DEB_DIR)/VERSION
	set -e; v=$$(cat $(DEB_DIR)/VERSION); d=$(DEB_DIR)/mmfix-$$v; mkdir $$d; \
	if git rev-parse --verify -q HEAD >/dev/null 2>&1; then \
		git ls-files -z --cached --others --exclude-standard | \
			xargs -0 cp -P --parents -t $$d; \
	else \
		tar -c --exclude=./build --exclude=./.cache --exclude=./.git . | tar -x -C $$d; \
	fi; \
	debian/version --apply $$d $$v >/dev/null; \
	cd $$d && env -u MAKEFLAGS -u MAKELEVEL dpkg-buildpackage -us -uc; \
	cd .. && lintian --fail-on error,warning mmfix_$${v}_amd64.changes
