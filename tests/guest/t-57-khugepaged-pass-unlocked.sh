# SPDX-License-Identifier: GPL-2.0
# khugepaged_scan: an mm whose mmap_lock khugepaged cannot get is passed
# without the lock.  mmhold (tests/guest/kmod) holds khpidle's lock for
# write from before khugepaged's next scan of it; with the fix on (6.12,
# 7.x) that scan moves the scan address past every VMA in front of the
# first that holds a whole PMD (vmas_passed counts exactly those, read
# from /proc/PID/maps) and the scans after it pass nothing more; with the
# fix off, and on 6.1, nothing is passed.  khugepaged never waits for the
# lock.  Sourced by /init after lib.sh.
# fixes: khugepaged_scan
. /tests/lib-khugepaged.sh	# KS, THP, KD, ks, field, mmhold

N=2000

full_scans() { cat $KD/full_scans; }
scans_past() { [ "$(full_scans)" -ge "$1" ]; }

# front PID: the VMAs of PID in front of its first VMA that holds a whole
# PMD (2 MiB aligned), as /proc/PID/maps lists them.
front() {
	local n=0 range s e hs
	while read -r range _; do
		s=$((0x${range%-*}))
		e=$((0x${range#*-}))
		hs=$(( (s + 0x1fffff) & ~0x1fffff ))
		[ $((hs + 0x200000)) -le "$e" ] && break
		n=$((n + 1))
	done <"/proc/$1/maps"
	echo $n
}

# one_run on|off
one_run() {
	local st=$1 idle fs p0 p1 want
	step "$st"
	if [ "$st" = on ]; then mmfix_load enable=khugepaged_scan; else mmfix_load; fi ||
		{ t_fail "pass-unlocked-$st-load" "$MMFIX_ERR"; return; }
	if ! khpidle_start "pass-unlocked-$st-workload" $N; then
		mmfix_unload
		return
	fi
	# Scans that finish the mm each time (the whole list twice per
	# wake-up), then khugepaged asleep with no scan of khpidle under way.
	fs=$(full_scans)
	loop_until 30 scans_past $((fs + 2))
	echo 60000 >$KD/scan_sleep_millisecs	# wakes it once more
	sleep 1
	fs=$(full_scans)
	p0=$(ks vmas_passed)
	echo "$idle 8000 0" >$HOLD/hold &
	loop_until 10 holding
	echo 10 >$KD/scan_sleep_millisecs	# wakes it
	t_check "pass-unlocked-$st-scans-during-hold" \
		loop_until 6 scans_past $((fs + 4))
	p1=$(ks vmas_passed)
	t_check "pass-unlocked-$st-lock-still-held" holding
	want=0 least=0
	if [ "$st" = on ] && [ "$SERIES" != 6.1 ]; then
		want=$(front $idle)
		least=$N
	fi
	t_comment "pass-unlocked-$st: vmas_passed $p0 -> $p1 (want +$want), full_scans $fs -> $(full_scans), resumed $(ks resumed)"
	t_check "pass-unlocked-$st-passed" \
		test "$((p1 - p0))" = "$want" -a "$want" -ge "$least"
	loop_until 15 hold_over
	kill -9 $idle
	wait $idle 2>/dev/null
	mmfix_unload
}

t_begin khugepaged-pass-unlocked
mmfix_require_ko khugepaged-pass-unlocked || return 0
mmhold_insert khugepaged-pass-unlocked || return 0
saved="$(sed 's/.*\[\(.*\)\].*/\1/' $THP/enabled) $(cat $KD/scan_sleep_millisecs $KD/pages_to_scan)"
echo madvise >$THP/enabled
echo 10 >$KD/scan_sleep_millisecs
# every wake-up walks the whole list twice, so none ends inside khpidle
echo 1000000 >$KD/pages_to_scan
mark=$(kmsg_mark)

one_run off
one_run on

t_check khugepaged-pass-unlocked-kernel-log-clean dmesg_clean_since "$mark"
rmmod mmhold
set -- $saved
echo "$1" >$THP/enabled
echo "$2" >$KD/scan_sleep_millisecs
echo "$3" >$KD/pages_to_scan
