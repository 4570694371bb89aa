# SPDX-License-Identifier: GPL-2.0
# Two mmfix modules loaded at the same moment (mmfix and mmfix_alt, neither
# an upgrade): exactly one makes the handover and loads, the other is
# refused with "another mmfix is loaded", and the kernel log stays clean.
# The handover is made in one step (klp_shadow_get_or_alloc()); a lookup
# followed by an allocation let both loads see none and the second
# allocation hit the livepatch core's "Duplicate shadow variable" WARN,
# which panics a panic_on_warn machine (issue #30).  The mmfix_alt of
# tests/run-all (build/<series>-next, -DMMFIX_TEST_HANDOVER_DELAY) is
# loaded with test_handover_delay_ms=20000: it waits 20 s where the
# handover is looked up, longer than mmfix's load takes to reach it
# (~9 s on 6.1 under TCG), and mmfix is loaded in that window.
KO_ALT=/lib/mmfix/mmfix_alt.ko

t_begin concurrent-loads
mmfix_require_ko concurrent-loads || return 0
if [ ! -f "$KO_ALT" ]; then
	t_fail concurrent-loads "no $KO_ALT in this initrd (tests/run-all builds it)"
	return 0
fi
mmfix_unload
mark=$(kmsg_mark concurrent-loads)
insmod "$KO_ALT" test_handover_delay_ms=20000 >/tmp/t86.alt 2>&1 &
alt=$!
waiting() { dmesg_since "$mark" | grep -q 'mmfix_alt: test: waiting .* before the handover'; }
if ! loop_until 60 waiting; then
	t_fail concurrent-loads-window "mmfix_alt never reached the handover"
	wait $alt
else
	insmod "$MMFIX_KO" >/tmp/t86.mmfix 2>&1
	rc_mmfix=$?
	wait $alt
	rc_alt=$?
	t_comment "insmod mmfix: $rc_mmfix, mmfix_alt: $rc_alt"
	t_check concurrent-loads-one-loads \
		test "$rc_mmfix" = 0 -a "$rc_alt" != 0 -a -d /sys/module/mmfix \
		-a ! -d /sys/module/mmfix_alt
	refused=$(dmesg_since "$mark" | grep -c 'mmfix_alt: another mmfix is loaded')
	t_check concurrent-loads-refusal-says-why test "$refused" -ge 1
	t_check concurrent-loads-kernel-log-clean dmesg_clean_since "$mark"
fi
mmfix_unload || t_fail concurrent-loads-unload "$MMFIX_ERR"
MMFIX_MOD=mmfix_alt MMFIX_KLP=/sys/kernel/livepatch/mmfix_alt
mmfix_unload || t_fail concurrent-loads-unload-alt "$MMFIX_ERR"
MMFIX_MOD=mmfix MMFIX_KLP=/sys/kernel/livepatch/mmfix
