# SPDX-License-Identifier: GPL-2.0
# Unsupported flavour: a module that reads the running kernel's flavour
# as -rt-amd64 (scripts/build-module --cflags -DMMFIX_TEST_FLAVOUR=rt-amd64,
# installed as /lib/mmfix/mmfix-rt.ko) refuses to load, even with
# allow_unverified=1, with one line naming the release, the flavour and
# why (include/mmfix_flavour.h), and leaves nothing behind: no module,
# no sysfs, no livepatch, no kprobe, no ftrace hook.  Only the flavour
# boots carry the module (tests/vm/run-flavour).  Sourced by /init after
# lib.sh.

. /tests/lib-reliability.sh

KO_RT=/lib/mmfix/mmfix-rt.ko

t_begin unsupported-flavour
rel_require unsupported-flavour || return 0
if [ ! -f "$KO_RT" ]; then
	t_skip unsupported-flavour "no $KO_RT in this initrd (tests/vm/run-flavour builds it)"
	return 0
fi
hooks0=$(rel_hooks)
mark=$(kmsg_mark rt-flavour)
out=$(finit "$KO_RT" allow_unverified=1 2>&1); rc=$?
echo "finit: exit $rc: $out"
msgs=$(dmesg_since "$mark" | grep '^mmfix: ' | grep -v 'taint')
echo "kernel log:"
echo "$msgs"
if [ "$rc" = 0 ]; then
	t_fail rt-flavour-refused-even-with-allow-unverified "finit_module succeeded"
	rmmod mmfix
else
	t_pass rt-flavour-refused-even-with-allow-unverified
fi
t_check rt-flavour-load-fails-enodev sh -c "echo '$out' | grep -q 'No such device'"
t_check rt-flavour-refusal-is-one-line test "$(echo "$msgs" | grep -c .)" = 1
printf '%s\n' "$msgs" >/tmp/rt-flavour.msgs
t_check rt-flavour-line-names-release-flavour-and-why grep -qF \
	"mmfix: kernel $(uname -r): flavour rt-amd64 is not supported (PREEMPT_RT: no transparent hugepages" /tmp/rt-flavour.msgs
t_check rt-flavour-load-leaves-nothing \
	test ! -e /sys/module/mmfix -a ! -e "$MMFIX_SYS" -a ! -e "$MMFIX_KLP"
t_check rt-flavour-load-leaves-no-probe-or-hook test "$hooks0" = "$(rel_hooks)"
dmesg_clean_since "$mark" && t_pass rt-flavour-kernel-log-clean ||
	t_fail rt-flavour-kernel-log-clean "see .out"
