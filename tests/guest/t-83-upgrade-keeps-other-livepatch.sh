# SPDX-License-Identifier: GPL-2.0
# An mmfix upgrade never replaces another livepatch (issue #30 point 4):
# with lp_unrelated (tests/guest/kmod/lp_unrelated.c: /proc/cmdline
# reads "lp_unrelated", standing for a vendor's security livepatch)
# and mmfix (populate_drain on) loaded, a hand-made load of
# mmfix_alt.ko upgrade=1 (the atomic replace mmfixctl upgrade uses) is
# refused, with one kernel log line naming lp_unrelated, and
# everything stays as it was: lp_unrelated enabled and its code running,
# mmfix's livepatch enabled, its switches writable and its fix running
# (populate_drain's skipped moves), no mmfix_alt.
# fixes: populate_drain

KO_NEXT=/lib/mmfix/mmfix_alt.ko
KO_LU=/lib/mmfix/lp_unrelated.ko
LU=/sys/kernel/livepatch/lp_unrelated
F=/sys/kernel/mmfix/fixes

t_begin upgrade-keeps-other
mmfix_require_ko upgrade-keeps-other || return 0
for ko in "$KO_NEXT" "$KO_LU"; do
	if [ ! -f "$ko" ]; then
		t_skip upgrade-keeps-other "no $ko in this initrd"
		return 0
	fi
done
mark=$(kmsg_mark upgrade-keeps-other)

if ! out=$(insmod "$KO_LU" 2>&1) || ! loop_until 30 file_is "$LU/transition" 0; then
	t_fail upgrade-keeps-other-lp-unrelated-loads "${out:-transition not done in 30 s}"
	lp_remove lp_unrelated
	return 0
fi
t_check upgrade-keeps-other-lp-unrelated-runs test "$(cat /proc/cmdline)" = lp_unrelated
if ! mmfix_load enable=populate_drain; then
	t_fail upgrade-keeps-other-mmfix-load "$MMFIX_ERR"
else
	mark2=$(kmsg_mark upgrade-keeps-other-insmod)
	# one load attempt: busybox insmod retries a refused finit_module()
	# with init_module()
	t_check upgrade-beside-other-livepatch-refused sh -c \
		"! finit $KO_NEXT upgrade=1"
	loop_until 30 sh -c "! test -d /sys/kernel/livepatch/mmfix_alt ||
		test \$(cat /sys/kernel/livepatch/mmfix_alt/transition) = 0"
	t_check upgrade-refused-lp-unrelated-still-enabled sh -c \
		"file_is $LU/enabled 1 && test \"\$(cat /proc/cmdline)\" = lp_unrelated"
	t_check upgrade-refused-no-mmfix-alt sh -c \
		"! test -d /sys/module/mmfix_alt && ! test -d /sys/kernel/livepatch/mmfix_alt"
	t_check upgrade-refused-mmfix-still-live sh -c \
		"file_is $MMFIX_KLP/enabled 1 && file_is /sys/kernel/mmfix/module mmfix &&
		 file_is $F/populate_drain/enabled 1"
	t_check upgrade-refused-switches-writable sh -c \
		"echo 0 >$F/populate_drain/enabled && echo 1 >$F/populate_drain/enabled &&
		 test \$(cat $F/populate_drain/enabled) = 1"
	s0=$(cat $F/populate_drain/skipped)
	populate churn -n 100 >/dev/null
	t_check upgrade-refused-fix-still-runs \
		test "$(cat $F/populate_drain/skipped)" -ge $((s0 + 100))
	dmesg_since "$mark2" | grep lp_unrelated >/tmp/upgrade-keeps.msgs
	t_check upgrade-refusal-one-line-names-it \
		test "$(wc -l </tmp/upgrade-keeps.msgs)" = 1 ||
		cat /tmp/upgrade-keeps.msgs
fi
# clean up, whatever happened (an upgrade that went through left
# mmfix_alt and maybe a livepatch-less mmfix)
lp_remove mmfix_alt || t_fail upgrade-keeps-other-mmfix-alt-removed "mmfix_alt still loaded"
mmfix_unload || t_fail upgrade-keeps-other-unload "$MMFIX_ERR"
lp_remove lp_unrelated || t_fail upgrade-keeps-other-lp-unrelated-removed "lp_unrelated still loaded"
t_check upgrade-keeps-other-cmdline-back sh -c "! grep -qx lp_unrelated /proc/cmdline"
t_check upgrade-keeps-other-dmesg-clean dmesg_clean_since "$mark"
