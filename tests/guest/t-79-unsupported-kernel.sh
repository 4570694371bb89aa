# SPDX-License-Identifier: GPL-2.0
# Unsupported kernel: a module built as for a kernel mmfix does not list
# (scripts/build-module --cflags -DMMFIX_TEST_UNSUPPORTED, installed as
# /lib/mmfix/mmfix-unsupported.ko) carries no fix, and loading it fails
# with one clear line naming the running kernel and the supported list,
# and leaves nothing behind: no module, no sysfs, no livepatch, no
# kprobe, no ftrace hook.  Sourced by /init after lib.sh.

. /tests/lib-reliability.sh

KO_UNSUP=/lib/mmfix/mmfix-unsupported.ko
t_begin unsupported-kernel
rel_require unsupported-kernel || return 0
if [ ! -f "$KO_UNSUP" ]; then
	t_skip unsupported-kernel "no $KO_UNSUP in this initrd (scripts/build-module --cflags -DMMFIX_TEST_UNSUPPORTED)"
	return 0
fi
t_check unsupported-build-carries-no-fix sh -c \
	"! strings -a $KO_UNSUP | grep -qx populate_vma_page_range"
if [ -f "$MMFIX_KO" ]; then	# (so that the check above can fail)
	t_check supported-build-carries-the-fix sh -c \
		"strings -a $MMFIX_KO | grep -qx populate_vma_page_range"
fi

hooks0=$(rel_hooks)
mark=$(kmsg_mark unsupported)
# one finit_module() call: busybox insmod would retry with init_module()
out=$(finit "$KO_UNSUP" 2>&1); rc=$?
echo "finit: exit $rc: $out"
dmesg_since "$mark"
msgs=$(dmesg_since "$mark" | grep '^mmfix: ' | grep -v 'taint')
echo "kernel log:"
echo "$msgs"
if [ "$rc" = 0 ]; then
	t_fail unsupported-load-refused "finit_module succeeded"
	rmmod mmfix
else
	t_pass unsupported-load-refused
fi
t_check unsupported-load-fails-enodev sh -c "echo '$out' | grep -q 'No such device'"
t_check unsupported-refusal-is-one-line test "$(echo "$msgs" | grep -c .)" = 1
printf '%s\n' "$msgs" >/tmp/unsupported.msgs
t_check unsupported-line-names-running-kernel-and-supported-list sh -c "
	grep -qF 'mmfix: kernel $(uname -r) (' /tmp/unsupported.msgs &&
	grep -q 'is not supported; supported: Debian amd64 6.1 6.12 7.2 7.3\$' /tmp/unsupported.msgs"
t_check unsupported-load-leaves-nothing \
	test ! -e /sys/module/mmfix -a ! -e "$MMFIX_SYS" -a ! -e "$MMFIX_KLP"
hooks1=$(rel_hooks)
t_check unsupported-load-leaves-no-probe-or-hook test "$hooks0" = "$hooks1"
if command -v mmfixctl >/dev/null; then
	# a state that is not loaded (5 load-refused, 6 not-loaded, 7
	# not-built: mmfixctl.8), said as the state line
	t_check unsupported-mmfixctl-says-not-loaded sh -c \
		"mmfixctl status >/tmp/unsupported.status 2>&1; rc=\$?
		 [ \$rc -ge 5 -a \$rc -le 7 ] &&
		 grep -qE '^state: +(load-refused|not-loaded|not-built) ' /tmp/unsupported.status" ||
		cat /tmp/unsupported.status
fi
dmesg_clean_since "$mark" && t_pass unsupported-kernel-log-clean ||
	t_fail unsupported-kernel-log-clean "see .out"

rel_report unsupported-kernel refused=$([ "$rc" != 0 ] && echo yes || echo no) \
	kernel_lines=$(echo "$msgs" | grep -c .) \
	left_behind=$([ -e /sys/module/mmfix ] || [ -e "$MMFIX_SYS" ] || [ "$hooks0" != "$hooks1" ] && echo yes || echo no)
