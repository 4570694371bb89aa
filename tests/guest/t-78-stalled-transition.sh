# SPDX-License-Identifier: GPL-2.0
# Stalled livepatch transitions.  A thread blocked on a userfaultfd fault
# inside populate_vma_page_range() (uffdstall: mlock of a uffd-registered
# range) cannot switch patch state until the fault is resolved:
#   unload:  asleep in the replacement, it holds up unpatching;
#            mmfixctl transition names it with its stack, mmfixctl unload
#            times out, reverses the transition and leaves the patch
#            fully on; released, the unload goes through;
#   load:    asleep in the kernel's own function, it holds up patching;
#            insmod still returns, mmfixctl transition names it, waiting
#            times out; released, the patch completes; or
#            mmfixctl transition --revert leaves the patch fully off and
#            the module can be removed.
# Never unbounded: every command runs under timeout(1), uffdstall gives
# up by itself after 300 s.  Sourced by /init after lib.sh.
# fixes: populate_drain

. /tests/lib-reliability.sh
. /tests/lib-stall.sh

KLP=$MMFIX_KLP
STALL_T=$(rel_size 3 10)	# seconds mmfixctl waits before giving up

CTL_TIMEOUT=120	# ctl (lib.sh): no mmfixctl here may take longer

t_begin stalled-transition
rel_require stalled-transition || return 0
mmfix_require_ko stalled-transition || return 0
if ! command -v mmfixctl >/dev/null; then
	t_skip stalled-transition "no mmfixctl in this initrd"
	return 0
fi
echo "vm.unprivileged_userfaultfd=$(cat /proc/sys/vm/unprivileged_userfaultfd 2>/dev/null) (root needs none)"
mark=$(kmsg_mark stall)
if ! mmfix_load; then
	t_fail stalled-transition-load "$MMFIX_ERR"
	return 0
fi
# (the kernel's "signal" file went away in 5.1; none of ours has it)
signal_file=no
[ ! -e "$KLP/signal" ] || signal_file=yes
t_comment "livepatch signal file: $signal_file"

### unload while a task sleeps in the replacement ###############################

unload_ok=0 unload_reverted=0
if ! stall_start a; then
	t_fail stall-in-patched-populate "uffdstall did not stall: $(cat /tmp/stall-a.out)"
else
	stack_of
	t_check stall-in-patched-populate sh -c \
		"grep -q 'populate_vma_page_range.*\[mmfix\]' /proc/$STALL_PID/task/$STALL_TID/stack"
	# unpatching cannot finish while the replacement is on its stack
	echo 0 >"$KLP/enabled"
	sleep 2
	t_check unpatch-stalled-by-sleeping-task file_is "$KLP/transition" 1
	ctl transition-a transition
	t_check mmfixctl-transition-names-task-and-stack sh -c "
		grep -q 'direction: *unpatching' /tmp/ctl-transition-a &&
		grep -q 'tid $STALL_TID (uffdstall) state D' /tmp/ctl-transition-a &&
		grep -q 'populate_vma_page_range.*\[mmfix\]' /tmp/ctl-transition-a"
	ctl transition-a-json -j transition
	t_check mmfixctl-transition-json-lists-task \
		grep -q "\"tid\":$STALL_TID,\"comm\":\"uffdstall\",\"state\":\"D\"" /tmp/ctl-transition-a-json
	ctl signal-a transition --signal
	if [ "$signal_file" = no ]; then
		t_check mmfixctl-signal-explains-kernel-signals-itself sh -c "
			test $CTL_RC = 0 &&
			grep -q 'no /sys/kernel/livepatch/mmfix/signal: it sends the remaining tasks a fake signal itself every 15 s' /tmp/ctl-signal-a"
	else
		t_check mmfixctl-signal-writes-signal-file sh -c "
			test $CTL_RC = 0 && grep -q 'signalled the tasks: yes' /tmp/ctl-signal-a"
	fi
	ctl unload-a unload --timeout "$STALL_T"
	t_check mmfixctl-unload-times-out-and-reverses sh -c "
		test $CTL_RC = 1 &&
		grep -q 'timed out after $STALL_T s: the livepatch transition is still in progress (1 task(s) not yet switched); reversed it: the livepatch is fully enabled again' /tmp/ctl-unload-a &&
		grep -q 'tid $STALL_TID (uffdstall)' /tmp/ctl-unload-a" && unload_reverted=1
	t_check after-timeout-patch-fully-on sh -c \
		"file_is $KLP/enabled 1 && file_is $KLP/transition 0 && test -d /sys/module/mmfix"
	t_check after-timeout-switches-still-work sh -c \
		"echo 1 >$MMFIX_SYS/fixes/populate_drain/enabled && echo 0 >$MMFIX_SYS/fixes/populate_drain/enabled"
	stall_release a
	t_check stalled-mlock-completes-with-data-after-release \
		grep -q '^released mlock=0 errors=0' /tmp/stall-a.out
	ctl unload-a2 unload --timeout 60
	t_check unload-succeeds-once-task-released sh -c \
		"test $CTL_RC = 0 && test ! -e /sys/module/mmfix" && unload_ok=1
fi
mmfix_unload >/dev/null 2>&1

### load while a task sleeps in the kernel's own function ########################

load_ok=0 load_waited=0
if ! stall_start b; then
	t_fail stall-in-original-populate "uffdstall did not stall: $(cat /tmp/stall-b.out)"
else
	stack_of
	t_check stall-in-original-populate sh -c "
		grep -q populate_vma_page_range /proc/$STALL_PID/task/$STALL_TID/stack &&
		! grep -q mmfix /proc/$STALL_PID/task/$STALL_TID/stack"
	t_check insmod-returns-despite-stalled-task timeout -s KILL 60 insmod "$MMFIX_KO"
	loop_until 10 test -d "$KLP"
	sleep 2
	t_check patch-stalled-by-sleeping-task file_is "$KLP/transition" 1
	ctl transition-b transition
	t_check mmfixctl-transition-names-task-while-patching sh -c "
		grep -q 'direction: *patching' /tmp/ctl-transition-b &&
		grep -q 'tid $STALL_TID (uffdstall) state D' /tmp/ctl-transition-b"
	ctl wait-b transition --timeout "$STALL_T"
	t_check mmfixctl-transition-wait-times-out sh -c "
		test $CTL_RC = 1 &&
		grep -q 'the livepatch transition (patching) is still in progress after $STALL_T s' /tmp/ctl-wait-b" &&
		load_waited=1
	stall_release b
	t_check stalled-mlock-completes-after-release-b \
		grep -q '^released mlock=0 errors=0' /tmp/stall-b.out
	ctl wait-b2 transition --timeout 60
	t_check patch-completes-once-task-released sh -c "
		test $CTL_RC = 0 && file_is $KLP/enabled 1 && file_is $KLP/transition 0" &&
		load_ok=1
fi
mmfix_unload >/dev/null 2>&1

### reverting a stalled load #####################################################

revert_ok=0
if ! stall_start c; then
	t_fail stall-for-revert "uffdstall did not stall: $(cat /tmp/stall-c.out)"
else
	timeout -s KILL 60 insmod "$MMFIX_KO"
	loop_until 10 test -d "$KLP"
	sleep 1
	ctl revert-c transition --revert --timeout 60
	t_check mmfixctl-revert-leaves-patch-fully-off sh -c "
		test $CTL_RC = 0 && grep -q 'patching -> unpatched' /tmp/ctl-revert-c &&
		test ! -e $KLP && test -d $MMFIX_SYS"
	ctl unload-c unload --timeout 60
	t_check unload-after-revert-removes-module sh -c \
		"test $CTL_RC = 0 && test ! -e /sys/module/mmfix && test ! -e $MMFIX_SYS" &&
		revert_ok=1
	stall_release c
	t_check stalled-mlock-completes-after-release-c \
		grep -q '^released mlock=0 errors=0' /tmp/stall-c.out
fi
mmfix_unload >/dev/null 2>&1
t_check nothing-left-after-stalls test ! -e /sys/module/mmfix -a ! -e "$KLP"
dmesg_clean_since "$mark" && t_pass stalled-transition-kernel-log-clean ||
	t_fail stalled-transition-kernel-log-clean "see .out"

rel_report stalled-transition mode=$REL_MODE give_up_after_s=$STALL_T \
	unload_stall_reverted=$unload_reverted unload_after_release=$unload_ok \
	load_stall_timed_out=$load_waited load_after_release=$load_ok \
	load_stall_reverted=$revert_ok \
	signal_file=$signal_file
