# SPDX-License-Identifier: GPL-2.0
# Once the livepatch is being disabled, no fix reads as on: from the
# moment `echo 0 > /sys/kernel/livepatch/mmfix/enabled` starts the
# unpatch transition, /sys/kernel/mmfix/patch reads "disabled", every
# fixes/<fix>/enabled reads 0 and writes to it fail with EBUSY without
# changing anything, until the module is removed.  A disable reversed
# while a task holds the transition up (uffdstall, asleep in the patched
# populate_vma_page_range()) gives every switch its value back once the
# patch is fully enabled again.  A bad value written while the patch is
# disabled fails with EINVAL, not EBUSY.  A load held up the same way
# (asleep in the kernel's populate_vma_page_range()) reads "transition"
# until it is reversed, then "disabled" until rmmod, with every switch
# refusing writes.  Sourced by /init after lib.sh.
# fixes: populate_drain

MMFIX_SYS=/sys/kernel/mmfix
PD=$MMFIX_SYS/fixes/populate_drain
KLP=$MMFIX_KLP

# all_switches_read VALUE: every fix's enabled file reads VALUE.
all_switches_read() {
	local f
	for f in "$MMFIX_SYS"/fixes/*/enabled; do
		[ "$(cat "$f")" = "$1" ] || { echo "$f reads $(cat "$f")"; return 1; }
	done
}

switch_write_busy() { write_fails "$1" "$2" '*[Bb]usy*'; }
switch_write_einval() { write_fails "$1" "$2" '*[Ii]nvalid*'; }

# every_switch_einval_first: a bad value is refused with EINVAL (checked
# before EBUSY) by every switch, which still reads 0.
every_switch_einval_first() {
	local f
	for f in "$MMFIX_SYS"/fixes/*/enabled; do
		switch_write_einval "$f" 2 && switch_write_einval "$f" on || return 1
	done
	all_switches_read 0
}

# every_switch_refuses: 0 and 1 are refused by every switch, which then
# still reads 0.
every_switch_refuses() {
	local f
	for f in "$MMFIX_SYS"/fixes/*/enabled; do
		switch_write_busy "$f" 1 && switch_write_busy "$f" 0 || return 1
	done
	all_switches_read 0
}

stall_release() {
	touch /tmp/release-t06
	loop_until 60 grep -q '^released ' /tmp/stall-t06.out
	wait "$STALL_PID"
}

t_begin patch-state
mmfix_require_ko patch-state-load || return 0
mark=$(kmsg_mark)
if ! mmfix_load enable=populate_drain; then
	t_fail patch-state-load "$MMFIX_ERR"
	return 0
fi
t_check patch-reads-enabled-after-load file_is $MMFIX_SYS/patch enabled
t_check switch-on-while-patch-enabled file_is $PD/enabled 1

# A thread asleep in the patched populate_vma_page_range() holds the
# unpatch transition up, so that the checks below run while it is in
# progress (from pre_unpatch on), not only after it.
rm -f /tmp/release-t06
uffdstall -r /tmp/release-t06 -t 120 >/tmp/stall-t06.out 2>&1 &
STALL_PID=$!
if ! loop_until 30 grep -q '^stalled ' /tmp/stall-t06.out; then
	t_fail patch-state-stall "uffdstall did not stall: $(cat /tmp/stall-t06.out)"
	kill "$STALL_PID" 2>/dev/null
	mmfix_unload
	return 0
fi
echo 0 >"$KLP/enabled"
t_check unpatch-held-up-by-sleeping-task \
	sh -c "sleep 1; [ \"\$(cat $KLP/transition)\" = 1 ]"
t_check patch-reads-disabled-during-unpatch file_is $MMFIX_SYS/patch disabled
t_check switches-read-0-during-unpatch all_switches_read 0
t_check switch-writes-fail-ebusy-during-unpatch every_switch_refuses

# Reverse the disable: the patch is fully enabled again once the
# transition ends, and the switch that was on is on again.
echo 1 >"$KLP/enabled"
if loop_until "$MMFIX_TRANSITION_TIMEOUT" file_is "$KLP/transition" 0; then
	t_check patch-reads-enabled-after-reversed-disable file_is $MMFIX_SYS/patch enabled
	t_check switch-back-on-after-reversed-disable file_is $PD/enabled 1
	t_check switch-writable-after-reversed-disable sh -c \
		"echo 0 >$PD/enabled && [ \$(cat $PD/enabled) = 0 ] && echo 1 >$PD/enabled"
else
	t_fail patch-reads-enabled-after-reversed-disable "reversed transition did not end"
fi
stall_release
t_check stalled-task-completes-with-data grep -q '^released mlock=0 errors=0' /tmp/stall-t06.out

# Disabled for good: the same until rmmod.
echo 0 >"$KLP/enabled"
if loop_until "$MMFIX_TRANSITION_TIMEOUT" test ! -d "$KLP"; then
	t_check patch-reads-disabled-after-unpatch file_is $MMFIX_SYS/patch disabled
	t_check switches-read-0-after-unpatch all_switches_read 0
	t_check switch-writes-fail-ebusy-after-unpatch every_switch_refuses
	t_check switch-bad-writes-fail-einval-not-ebusy-after-unpatch every_switch_einval_first
else
	t_fail patch-reads-disabled-after-unpatch "unpatch did not finish"
fi
mmfix_unload || t_fail patch-state-unload "$MMFIX_ERR"

# A load whose transition cannot finish (a task asleep in the kernel's
# populate_vma_page_range()): "transition" while it runs; reversed (0
# written during it), "disabled" from then until rmmod.
rm -f /tmp/release-t06 /tmp/stall-t06.out
uffdstall -r /tmp/release-t06 -t 120 >/tmp/stall-t06.out 2>&1 &
STALL_PID=$!
if loop_until 30 grep -q '^stalled ' /tmp/stall-t06.out &&
   timeout -s KILL 60 insmod "$MMFIX_KO" enable=populate_drain &&
   loop_until 10 test -d "$KLP"; then
	t_check patch-reads-transition-while-loading sh -c \
		"sleep 1; [ \"\$(cat $KLP/transition)\" = 1 ] && [ \"\$(cat $MMFIX_SYS/patch)\" = transition ]" ||
		echo "transition $(cat $KLP/transition), patch $(cat $MMFIX_SYS/patch)"
	echo 0 >"$KLP/enabled"
	t_check patch-reads-disabled-once-load-reversed file_is $MMFIX_SYS/patch disabled ||
		echo "patch $(cat $MMFIX_SYS/patch)"
	if loop_until "$MMFIX_TRANSITION_TIMEOUT" test ! -d "$KLP"; then
		t_check patch-reads-disabled-after-reversed-load sh -c \
			"[ \"\$(cat $MMFIX_SYS/patch)\" = disabled ] && [ -d /sys/module/mmfix ]"
		t_check switch-writes-fail-ebusy-after-reversed-load every_switch_refuses
	else
		t_fail patch-reads-disabled-after-reversed-load "reversed load did not end"
	fi
else
	t_fail patch-reads-transition-while-loading "no held-up load: $(cat /tmp/stall-t06.out)"
fi
stall_release
mmfix_unload || t_fail patch-state-reversed-load-unload "$MMFIX_ERR"
t_check no-kernel-warnings dmesg_clean_since "$mark"
