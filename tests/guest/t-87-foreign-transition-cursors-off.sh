# SPDX-License-Identifier: GPL-2.0
# khugepaged_scan's cursors while another livepatch's transition runs
# (issue #43.2).  A cursor is saved (mmhold, tests/guest/kmod, holds an
# idle 100k-VMA process's mmap_lock for write for 60 s from the middle of
# khugepaged's walk, as t-53 does), then:
#   lp_unrelated (tests/guest/kmod, patches only cmdline_proc_show())
#     loads: once its transition has ended mmfix's __khugepaged_exit()
#     still runs, and cursors are saved again under a new hold (they go
#     off while a livepatch module loads, and on again only then);
#   lp_replace (an atomic replace: its no-op puts the kernel's
#     __khugepaged_exit() back, which frees mm_slots without their
#     cursor) loads: once its transition has ended, no cursor is left
#     (the cursors gauge reads 0).  Before #43 the cursor stayed.
# fixes: khugepaged_scan
. /tests/lib-khugepaged.sh

T=foreign-cursors
KO_LU=/lib/mmfix/lp_unrelated.ko
KO_LR=/lib/mmfix/lp_replace.ko

t_begin $T
mmfix_require_ko $T || return 0
for ko in "$KO_LU" "$KO_LR"; do
	if [ ! -f "$ko" ]; then
		t_skip $T "no $ko (tests/guest/kmod/build)"
		return 0
	fi
done
mmhold_insert $T || return 0
saved="$(sed 's/.*\[\(.*\)\].*/\1/' $THP/enabled) $(cat $KD/scan_sleep_millisecs)"
echo madvise >$THP/enabled
echo 10 >$KD/scan_sleep_millisecs
mark=$(kmsg_mark)

if ! mmfix_load enable=khugepaged_scan; then
	t_fail $T-load "$MMFIX_ERR"
	rmmod mmhold
	return 0
fi
holder=
if khpidle_start $T-cursor-saved 100000; then
	echo "$idle 60000 20000" >$HOLD/hold &
	holder=$!
	t_check $T-cursor-saved loop_until 25 cursor_saved ||
		echo "mmhold $(hold_state), cursors $(ks cursors)"

	if out=$(insmod "$KO_LU" 2>&1) &&
	   loop_until 30 file_is /sys/kernel/livepatch/lp_unrelated/transition 0; then
		# a new hold from the middle of a walk: on 6.1 a scan that
		# never got the lock saves no cursor at address 0 (t-57)
		kill "$holder" 2>/dev/null
		loop_until 10 hold_over
		echo "$idle 60000 20000" >$HOLD/hold &
		holder=$!
		t_check $T-saved-again-after-other-livepatch loop_until 25 cursor_saved ||
			echo "mmhold $(hold_state), cursors $(ks cursors)"
	else
		t_fail $T-saved-again-after-other-livepatch "lp_unrelated: ${out:-transition not done in 30 s}"
	fi
	lp_remove lp_unrelated
	loop_until 15 cursor_saved

	step "atomic replace with cursors $(ks cursors)"
	if out=$(insmod "$KO_LR" 2>&1) &&
	   loop_until 30 file_is /sys/kernel/livepatch/lp_replace/transition 0; then
		t_check $T-none-left-after-atomic-replace file_is $KS/cursors 0 ||
			echo "cursors $(ks cursors)"
	else
		t_fail $T-none-left-after-atomic-replace "lp_replace: ${out:-transition not done in 30 s}"
	fi
fi
[ -z "$holder" ] || kill "$holder" 2>/dev/null
loop_until 10 hold_over
kill -9 $idle 2>/dev/null
wait 2>/dev/null
lp_remove lp_replace || t_fail $T-lp-replace-removed "lp_replace still loaded"
mmfix_unload || t_fail $T-unload "$MMFIX_ERR"
rmmod mmhold
set -- $saved
echo "$1" >$THP/enabled
echo "$2" >$KD/scan_sleep_millisecs
t_check $T-kernel-log-clean dmesg_clean_since "$mark"
