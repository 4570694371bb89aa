# SPDX-License-Identifier: GPL-2.0
# khugepaged_scan: no scan cursor outlives its mm_slot when an unpatch
# transition is reversed.  With cursors saved for a contended mm, the
# patch is disabled while uffdstall holds the transition up; the mm's
# process exits meanwhile (its tasks already run the kernel's
# __khugepaged_exit(), which frees the mm_slot and knows no cursor);
# then the transition is reversed.  The cursors gauge must be 0 and
# cursors must work again once the patch is fully on.  Sourced by /init
# after lib.sh.
# fixes: khugepaged_scan

. /tests/lib-khugepaged.sh

t_begin khugepaged-reversed-unpatch
mmfix_require_ko khugepaged-reversed-unpatch || return 0
saved="$(sed 's/.*\[\(.*\)\].*/\1/' $THP/enabled) $(cat $KD/scan_sleep_millisecs)"
echo madvise >$THP/enabled
echo 10 >$KD/scan_sleep_millisecs
mark=$(kmsg_mark)
if ! mmfix_load enable=khugepaged_scan; then
	t_fail khugepaged-reversed-unpatch-load "$MMFIX_ERR"
	return 0
fi

thpscan -n 20000 -c 16 -r 8 -w 2 -d 30000 >/dev/null &
work=$!
t_check reversed-unpatch-cursor-saved-before loop_until 20 cursor_saved
if ! stall_start rv; then
	t_fail reversed-unpatch-stalls "uffdstall: $(cat /tmp/stall-rv.out)"
	kill -9 $work
	return 0
fi
step unpatch, stalled
echo 0 >"$MMFIX_KLP/enabled"
sleep 2
t_check reversed-unpatch-is-stalled file_is "$MMFIX_KLP/transition" 1
kill -9 $work
wait $work 2>/dev/null
sleep 1
step reverse
echo 1 >"$MMFIX_KLP/enabled"
t_check reversed-unpatch-completes-patched sh -c \
	"loop_until 30 file_is $MMFIX_KLP/transition 0 && file_is $MMFIX_KLP/enabled 1"
t_check reversed-unpatch-leaves-no-cursor loop_until 10 cursors_zero ||
	echo "cursors $(ks cursors)"
stall_release rv

thpscan -n 20000 -c 16 -r 8 -w 2 -d 30000 >/dev/null &
work=$!
t_check after-reversal-cursors-saved-again loop_until 20 cursor_saved
kill -9 $work
wait $work 2>/dev/null
t_check after-reversal-cursor-freed-with-its-mm loop_until 10 cursors_zero
mmfix_unload || t_fail khugepaged-reversed-unpatch-unload "$MMFIX_ERR"
t_check khugepaged-reversed-unpatch-kernel-log-clean dmesg_clean_since "$mark"
set -- $saved
echo "$1" >$THP/enabled
echo "$2" >$KD/scan_sleep_millisecs
