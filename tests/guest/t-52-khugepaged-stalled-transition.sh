# SPDX-License-Identifier: GPL-2.0
# khugepaged_scan during a patch transition stalled 30 s on purpose
# (uffdstall parks a thread in the kernel's populate_vma_page_range()):
# writes to THP enabled and defrag and to vm.min_free_kbytes each finish
# within 1 s, a THP-eligible region still collapses, and khugepaged keeps
# the CPU, nice value and cgroup its admin gave it; THP set to never
# during the stall leaves no khugepaged after it; released, the
# transition completes and the khugepaged THP then starts runs the
# patched code.  Sourced by /init after lib.sh.
# fixes: khugepaged_scan

. /tests/lib-khugepaged.sh
STALL_S=30

t_begin khugepaged-stalled-transition
mmfix_require_ko khugepaged-stalled-transition || return 0
saved="$(sed 's/.*\[\(.*\)\].*/\1/' $THP/enabled) $(cat $KD/scan_sleep_millisecs)"
echo madvise >$THP/enabled
echo 10 >$KD/scan_sleep_millisecs
mark=$(kmsg_mark)
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

step writes during the stall
min=$(cat /proc/sys/vm/min_free_kbytes)
defrag=$(sed 's/.*\[\(.*\)\].*/\1/' $THP/defrag)
within stalled-thp-enabled-write-within-1s 1 sh -c "echo madvise >$THP/enabled"
within stalled-thp-defrag-write-within-1s 1 sh -c "echo $defrag >$THP/defrag"
within stalled-min-free-kbytes-write-within-1s 1 sh -c "echo $min >/proc/sys/vm/min_free_kbytes"

step collapse during the stall
out=$(thpscan -n 1000 -r 4 -t 15)
echo "$out"
t_check stalled-transition-region-still-collapses \
	test "$(field collapsed "$out")" = 1 -a "$(field errors "$out")" = 0
t_check stalled-transition-khugepaged-keeps-cpu-nice-cgroup khugepaged_settings_kept
t_check stalled-transition-still-stalled file_is "$MMFIX_KLP/transition" 1

step THP never during the stall
within stalled-thp-never-write-within-1s 1 sh -c "echo never >$THP/enabled"
while [ $(( $(now_cs) - t0 )) -lt $((STALL_S * 100)) ]; do sleep 1; done
step release
stall_release st
t_check stalled-transition-completes-after-release \
	loop_until "$MMFIX_TRANSITION_TIMEOUT" transition_done
sleep 1
t_check stalled-thp-never-leaves-no-khugepaged khugepaged_gone || kpids
echo madvise >$THP/enabled
s0=$(ks scans)
out=$(thpscan -n 1000 -r 4 -t 15)
t_check after-stall-khugepaged-runs-patched-code \
	test -n "$(kpid)" -a "$(ks scans)" -gt "$s0" -a "$(field collapsed "$out")" = 1 ||
	echo "scans $s0 -> $(ks scans); $out"

mmfix_unload || t_fail khugepaged-stalled-unload "$MMFIX_ERR"
khugepaged_settings_reset
t_check khugepaged-stalled-transition-kernel-log-clean dmesg_clean_since "$mark"
set -- $saved
echo "$1" >$THP/enabled
echo "$2" >$KD/scan_sleep_millisecs
