# SPDX-License-Identifier: GPL-2.0
# Partially verified build: a verified build whose copied code of one fix
# differs (scripts/verify-build --partial records it with "without FIX")
# loads without allow_unverified=1 and carries the other fixes; the
# left-out fix reads applicable 1, patched 0, reason "applies, not
# verified on this build", is not recommended, refuses to be switched on
# (mmfixctl enable prints that reason), and none of its functions is
# patched; fixes= naming only it loads nothing.
# /lib/mmfix/mmfix-without.ko is built with
# -DMMFIX_TEST_WITHOUT=khugepaged_scan, which leaves khugepaged_scan out
# on every build of its list.  Sourced by /init after lib.sh.

KO_WITHOUT=/lib/mmfix/mmfix-without.ko
LEFT=khugepaged_scan
KEPT=populate_drain

t_begin partial-build
if [ ! -f "$KO_WITHOUT" ]; then
	t_skip partial-build "no $KO_WITHOUT in this initrd (scripts/build-module --cflags -DMMFIX_TEST_WITHOUT=$LEFT)"
	return 0
fi

mark=$(kmsg_mark partial-build)
if ! MMFIX_KO=$KO_WITHOUT mmfix_load enable=recommended; then
	t_fail partial-build-loads-without-override "$MMFIX_ERR"
	return 0
fi
t_pass partial-build-loads-without-override
S=/sys/kernel/mmfix
F=$S/fixes
t_check partial-build-reads-verified file_is "$S/build" verified
t_check partial-build-left-out-fix-applies file_is "$F/$LEFT/applicable" 1
t_check partial-build-left-out-fix-not-patched file_is "$F/$LEFT/patched" 0
t_check partial-build-left-out-fix-reason grep -q '^applies, not verified on this build: its copied code differs' "$F/$LEFT/reason" ||
	cat "$F/$LEFT/reason"
t_check partial-build-left-out-fix-not-recommended file_is "$F/$LEFT/recommended" 0
t_check partial-build-left-out-fix-off file_is "$F/$LEFT/enabled" 0
t_check partial-build-left-out-fix-refuses-on sh -c "test -f '$F/$LEFT/enabled' && ! echo 1 >'$F/$LEFT/enabled'"
t_check partial-build-left-out-fix-stays-off file_is "$F/$LEFT/enabled" 0
t_check partial-build-left-out-fix-lists-no-function test -z "$(cat "$F/$LEFT/functions")"
patched=$(ls "$MMFIX_KLP/vmlinux" | sed -n 's/,[0-9]*$//p')
echo "patched: $(echo $patched)"
t_check partial-build-left-out-functions-not-patched \
	sh -c "! echo '$patched' | grep -qx 'khugepaged'"
t_check partial-build-kept-fix-applicable file_is "$F/$KEPT/applicable" 1
t_check partial-build-kept-fix-patched \
	sh -c "echo '$patched' | grep -qx 'populate_vma_page_range'"
t_check partial-build-kept-fix-switches sh -c "echo 1 >'$F/$KEPT/enabled' && echo 0 >'$F/$KEPT/enabled'"
dmesg_since "$mark" | grep '^mmfix: ' >/tmp/partial.msgs
cat /tmp/partial.msgs
t_check partial-build-log-names-left-out-fix-once \
	test "$(grep -c "$LEFT not patched: it applies, but its copied code differs on this build" /tmp/partial.msgs)" = 1
t_check partial-build-loaded-line-says-verified \
	grep -q 'loaded on .* (verified build)$' /tmp/partial.msgs
if command -v mmfixctl >/dev/null; then
	mmfixctl status >/tmp/partial-status.txt 2>&1
	t_check partial-build-mmfixctl-status-shows-not-verified \
		grep -q 'reason: *applies, not verified on this build' /tmp/partial-status.txt ||
		cat /tmp/partial-status.txt
	enable_out=$(mmfixctl enable "$LEFT" 2>&1)
	t_check partial-build-mmfixctl-enable-says-not-verified \
		eval 'echo "$enable_out" | grep -q "^mmfixctl: fix $LEFT is not patched by the loaded mmfix: applies, not verified on this build"' ||
		echo "$enable_out"
	t_check partial-build-mmfixctl-enable-left-it-off file_is "$F/$LEFT/enabled" 0
fi
mmfix_unload || t_fail partial-build-unload "$MMFIX_ERR"
t_check partial-build-unload-leaves-nothing \
	test ! -e /sys/module/mmfix -a ! -e "$S" -a ! -e "$MMFIX_KLP"
# fixes= naming only the fix not verified here: nothing to patch
if MMFIX_KO=$KO_WITHOUT mmfix_load fixes=$LEFT; then
	t_fail partial-build-only-unverified-fix-loads-nothing "it loaded"
	mmfix_unload
else
	dmesg_since "$mark" | grep '^mmfix: ' >/tmp/partial.msgs
	t_check partial-build-only-unverified-fix-loads-nothing sh -c \
		"test ! -e /sys/module/mmfix && grep -q 'nothing to patch: $LEFT applies, but its copied code differs' /tmp/partial.msgs"
fi
dmesg_clean_since "$mark" && t_pass partial-build-kernel-log-clean ||
	t_fail partial-build-kernel-log-clean "see .out"
