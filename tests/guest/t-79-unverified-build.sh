# SPDX-License-Identifier: GPL-2.0
# Unverified build: a module whose list of verified builds does not hold
# the running one (scripts/build-module --cflags -DMMFIX_TEST_UNVERIFIED,
# installed as /lib/mmfix/mmfix-unverified.ko) refuses to load by
# default with one line naming the running build (release and Debian
# version), the verified builds of the series and allow_unverified=1, and
# leaves nothing behind; with allow_unverified=1 it loads, warns once and
# /sys/kernel/mmfix/build reads "unverified".  The normal module reads
# "verified" (the running build is in its list).  Sourced by /init after
# lib.sh.

. /tests/lib-reliability.sh

KO_UNVER=/lib/mmfix/mmfix-unverified.ko

t_begin unverified-build
rel_require unverified-build || return 0
if [ ! -f "$KO_UNVER" ]; then
	t_skip unverified-build "no $KO_UNVER in this initrd (scripts/build-module --cflags -DMMFIX_TEST_UNVERIFIED)"
	return 0
fi
debver=$(sed -n 's/.* Debian \([^ ]*\).*/\1/p' /proc/version)
echo "running $(uname -r), Debian version '$debver': $(cat /proc/version)"

# the normal module: this build is verified
if [ -f "$MMFIX_KO" ]; then
	if mmfix_load; then
		t_check verified-build-reads-verified file_is "$MMFIX_SYS/build" verified
		mmfix_unload || t_fail verified-build-unload "$MMFIX_ERR"
	else
		t_fail verified-build-loads "$MMFIX_ERR"
	fi
fi

mark=$(kmsg_mark unverified)
out=$(finit "$KO_UNVER" 2>&1); rc=$?
echo "finit: exit $rc: $out"
msgs=$(dmesg_since "$mark" | grep '^mmfix: ' | grep -v 'taint')
echo "kernel log:"
echo "$msgs"
if [ "$rc" = 0 ]; then
	t_fail unverified-load-refused "finit_module succeeded"
	mmfix_unload
else
	t_pass unverified-load-refused
fi
t_check unverified-load-fails-enodev sh -c "echo '$out' | grep -q 'No such device'"
t_check unverified-refusal-is-one-line test "$(echo "$msgs" | grep -c .)" = 1
printf '%s\n' "$msgs" >/tmp/unverified.msgs
t_check unverified-line-names-build-verified-list-and-override sh -c "
	grep -qF 'mmfix: build $(uname -r) (Debian $debver) is not verified; verified $SERIES builds: ' /tmp/unverified.msgs &&
	grep -qF '$(uname -r) ($debver~mmfixtest)' /tmp/unverified.msgs &&
	grep -qF 'allow_unverified=1' /tmp/unverified.msgs"
t_check unverified-refusal-leaves-nothing \
	test ! -e /sys/module/mmfix -a ! -e "$MMFIX_SYS" -a ! -e "$MMFIX_KLP"

mark=$(kmsg_mark unverified-allowed)
if MMFIX_KO=$KO_UNVER mmfix_load allow_unverified=1; then
	t_pass unverified-allowed-loads
	t_check unverified-allowed-build-reads-unverified file_is "$MMFIX_SYS/build" unverified
	t_check unverified-allowed-param-shows file_is /sys/module/mmfix/parameters/allow_unverified Y
	dmesg_since "$mark" | grep '^mmfix: ' >/tmp/unverified-allowed.msgs
	cat /tmp/unverified-allowed.msgs
	t_check unverified-allowed-warns-once test "$(grep -c 'is not verified' /tmp/unverified-allowed.msgs)" = 1
	t_check unverified-allowed-loaded-line-says-unverified \
		grep -q 'loaded on .* (unverified build)$' /tmp/unverified-allowed.msgs
	if command -v mmfixctl >/dev/null; then
		mmfixctl status >/tmp/unverified-status.txt 2>&1
		t_check unverified-mmfixctl-status-says-unverified \
			grep -q 'unverified build' /tmp/unverified-status.txt ||
			cat /tmp/unverified-status.txt
		mmfixctl check >/tmp/unverified-check.txt 2>&1
		t_check unverified-mmfixctl-check-says-unverified \
			grep -q '^module: *unverified build' /tmp/unverified-check.txt ||
			cat /tmp/unverified-check.txt
	fi
	mmfix_unload || t_fail unverified-allowed-unload "$MMFIX_ERR"
else
	t_fail unverified-allowed-loads "$MMFIX_ERR"
fi
t_check unverified-unload-leaves-nothing \
	test ! -e /sys/module/mmfix -a ! -e "$MMFIX_SYS" -a ! -e "$MMFIX_KLP"
dmesg_clean_since "$mark" && t_pass unverified-kernel-log-clean ||
	t_fail unverified-kernel-log-clean "see .out"

rel_report unverified-build refused=$([ "$rc" != 0 ] && echo yes || echo no) \
	kernel_lines=$(echo "$msgs" | grep -c .)
