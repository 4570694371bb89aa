# SPDX-License-Identifier: GPL-2.0
# khugepaged_scan during patch transitions stalled on purpose (uffdstall
# parks a thread in the kernel's populate_vma_page_range(), then in
# mmfix's): while patching is stalled 30 s, writes to THP enabled and
# defrag and to vm.min_free_kbytes each finish within 10 s, a memory block
# goes offline and online again within 20 s each (both reach
# khugepaged_min_free_kbytes_update(), see lib-khugepaged.sh), khugepaged
# runs and is not in D state, a THP-eligible region still collapses, and
# khugepaged keeps the CPU, nice value and cgroup its admin gave it;
# contended scans of the fix save no cursor (cursors are kept only from
# post_patch to pre_unpatch); THP set to never during the stall leaves no
# khugepaged after it; released, the transition completes, the khugepaged
# THP then starts runs the patched code, and the same contended scans
# save cursors again.  Then the same writes, memory offline/online and
# khugepaged check while unpatching is stalled, and the unpatch completes
# once released.  Sourced by /init after lib.sh.
# fixes: khugepaged_scan

. /tests/lib-khugepaged.sh
STALL_S=30

# contended_scans MS: MS ms of two mmap_lock writers in a 20k-VMA mm, the
# cursors gauge read every 0.2 s meanwhile; sets CMAX (highest cursors
# read), DS (scans), DR (resumed: cursors taken, so saved before) and DL
# (lock_drops + retake_failed + vmas_passed: scans of the fix that met a
# writer, which save a cursor when cursors are on).
ks_sum() { echo $(( $(ks lock_drops) + $(ks retake_failed) + $(ks vmas_passed) )); }
contended_scans() {
	local s0 r0 l0 c pid
	s0=$(ks scans) r0=$(ks resumed) l0=$(ks_sum) CMAX=0
	thpscan -n 20000 -c 16 -r 8 -w 2 -d "$1" >/dev/null &
	pid=$!
	while kill -0 $pid 2>/dev/null; do
		c=$(ks cursors)
		[ "$c" -le "$CMAX" ] || CMAX=$c
		sleep 0.2
	done
	wait $pid
	DS=$(( $(ks scans) - s0 )) DR=$(( $(ks resumed) - r0 )) DL=$(( $(ks_sum) - l0 ))
	echo "contended: scans +$DS resumed +$DR drops/lost/passed +$DL cursors max $CMAX"
}

t_begin khugepaged-stalled-transition
mmfix_require_ko khugepaged-stalled-transition || return 0
saved="$(sed 's/.*\[\(.*\)\].*/\1/' $THP/enabled) $(cat $KD/scan_sleep_millisecs)"
echo madvise >$THP/enabled
echo 10 >$KD/scan_sleep_millisecs
mark=$(kmsg_mark)
mem_block_pick || t_comment "memory offline/online not tested: $MEM_WHY"
khugepaged_settings_set || t_fail khugepaged-stalled-settings-set "no khugepaged?"

if ! stall_start st; then
	t_fail khugepaged-stalled-transition-stalls "uffdstall: $(cat /tmp/stall-st.out)"
	return 0
fi
t0=$(now_cs)
step insmod while a task sleeps in the kernel\'s populate
timeout -s KILL 60 insmod "$MMFIX_KO" enable=khugepaged_scan
loop_until 10 test -d "$MMFIX_KLP"
sleep 2
t_check khugepaged-stalled-transition-is-stalled file_is "$MMFIX_KLP/transition" 1

step writes and memory offline/online during the stall
stalled_writes stalled

step collapse during the stall
out=$(thpscan -n 1000 -r 4 -t 15)
echo "$out"
t_check stalled-transition-region-still-collapses \
	test "$(field collapsed "$out")" = 1 -a "$(field errors "$out")" = 0
t_check stalled-transition-khugepaged-keeps-cpu-nice-cgroup khugepaged_settings_kept

step contended scans during the stall
contended_scans 4000
t_check stalled-transition-contended-scans-run-fix test "$DS" -gt 0 -a "$DL" -gt 0
t_check stalled-transition-saves-no-cursor \
	test "$CMAX" = 0 -a "$DR" = 0 -a "$(ks cursors)" = 0
t_check stalled-transition-still-stalled file_is "$MMFIX_KLP/transition" 1

step THP never during the stall
within stalled-thp-never-write-within-10s 10 sh -c "echo never >$THP/enabled"
while [ $(( $(now_cs) - t0 )) -lt $((STALL_S * 100)) ]; do sleep 1; done
step release
stall_release st
t_check stalled-transition-completes-after-release \
	loop_until "$MMFIX_TRANSITION_TIMEOUT" transition_done
mem_restore stalled
sleep 1
t_check stalled-thp-never-leaves-no-khugepaged khugepaged_gone || kpids
echo madvise >$THP/enabled
s0=$(ks scans)
out=$(thpscan -n 1000 -r 4 -t 15)
t_check after-stall-khugepaged-runs-patched-code \
	test -n "$(kpid)" -a "$(ks scans)" -gt "$s0" -a "$(field collapsed "$out")" = 1 ||
	echo "scans $s0 -> $(ks scans); $out"
contended_scans 3000
t_check after-stall-contended-scans-save-cursors test "$CMAX" -ge 1 -o "$DR" -ge 1

step unpatch while a task sleeps in mmfix\'s populate
if stall_start su; then
	echo 0 >"$MMFIX_KLP/enabled"
	sleep 1
	t_check stalled-unpatch-is-stalled file_is "$MMFIX_KLP/transition" 1
	stalled_writes stalled-unpatch
	step release
	stall_release su
	t_check stalled-unpatch-completes-after-release loop_until \
		"$MMFIX_TRANSITION_TIMEOUT" test ! -d "$MMFIX_KLP"
	mem_restore stalled-unpatch
else
	t_fail stalled-unpatch-stalls "uffdstall: $(cat /tmp/stall-su.out)"
fi
mmfix_unload || t_fail khugepaged-stalled-unload "$MMFIX_ERR"
khugepaged_settings_reset
t_check khugepaged-stalled-transition-kernel-log-clean dmesg_clean_since "$mark"
set -- $saved
echo "$1" >$THP/enabled
echo "$2" >$KD/scan_sleep_millisecs
