# SPDX-License-Identifier: GPL-2.0
# An upgrade restarts khugepaged only when it has to (issue #30 point
# 6a): khugepaged sleeps in the code of whoever patched khugepaged_scan,
# so only a build that patches it, or an old module that did, needs a
# new thread.  Seen through khugepaged's pid, with khugepaged busy on
# CPU 1 during the first upgrade (waking every millisecond to walk
# 65536 pages' worth of an mm with 20000 VMAs and a MADV_HUGEPAGE
# region) while the test runs on CPU 0: the transition's first try
# cannot switch a task running on another CPU, and the code before #30
# restarted a thread the transition had not switched yet.  (Never
# scan_sleep 0: on 6.1 a kthread that never sleeps is never switched,
# and every transition stalls.)
#   mmfix loaded with fixes=populate_drain, then "mmfixctl upgrade
#     mmfix_alt.ko fixes populate_drain": neither build patches
#     khugepaged_scan, khugepaged keeps its pid;
#   the control, that the pid check sees a restart: upgraded back to
#     mmfix.ko with fixes populate_drain,khugepaged_scan, khugepaged
#     moves into the new build's code, with a new pid.
# Both upgrades exit 0 with populate_drain on throughout.  (Three module
# loads: each takes ~9 s on 6.1 under TCG.)
# fixes: populate_drain khugepaged_scan

. /tests/lib-khugepaged.sh

KO_NEXT=/lib/mmfix/mmfix_alt.ko
F=/sys/kernel/mmfix/fixes

have_kpid() { [ -n "$(kpids)" ]; }

# busy 0|1: khugepaged at the test's idle settings, or busy (above):
# khugepaged on CPU 1, this shell (and what it starts) on CPU 0
busy() {
	if [ "$1" = 1 ]; then
		taskset -p 2 "$(kpid)" >/dev/null
		taskset -p 1 $$ >/dev/null
		echo 65536 >$KD/pages_to_scan
		echo 1 >$KD/scan_sleep_millisecs
	else
		echo 4096 >$KD/pages_to_scan
		echo 10000 >$KD/scan_sleep_millisecs
		taskset -p 3 $$ >/dev/null
		taskset -p 3 "$(kpid)" >/dev/null
	fi
}

t_begin upgrade-khugepaged
mmfix_require_ko upgrade-khugepaged || return 0
if [ ! -f "$KO_NEXT" ]; then
	t_skip upgrade-khugepaged "no $KO_NEXT in this initrd (scripts/build-module --name mmfix_alt)"
	return 0
fi
command -v mmfixctl >/dev/null || { t_skip upgrade-khugepaged "no mmfixctl"; return 0; }
[ -d "$KD" ] || { t_skip upgrade-khugepaged "no $KD"; return 0; }
saved_thp=$(sed 's/.*\[\(.*\)\].*/\1/' $THP/enabled)
saved_sleep=$(cat $KD/scan_sleep_millisecs)
saved_pages=$(cat $KD/pages_to_scan)
echo madvise >$THP/enabled
busy 0
loop_until 5 have_kpid
khpidle_start upgrade-khugepaged-workload 20000
mark=$(kmsg_mark upgrade-khugepaged)

if ! mmfix_load fixes=populate_drain enable=populate_drain; then
	t_fail upgrade-khugepaged-load "$MMFIX_ERR"
else
	p0=$(kpids | tr '\n' ' ')
	busy 1
	ctl up-84 upgrade "$KO_NEXT" fixes populate_drain
	busy 0
	t_check upgrade-khugepaged-neither-upgraded sh -c "test $CTL_RC = 0 &&
		file_is /sys/kernel/mmfix/module mmfix_alt &&
		file_is $F/populate_drain/enabled 1 && file_is $F/khugepaged_scan/patched 0"
	loop_until 5 have_kpid
	p1=$(kpids | tr '\n' ' ')
	t_comment "neither build patches khugepaged_scan: khugepaged pid $p0-> $p1"
	t_check upgrade-neither-patching-khugepaged-keeps-its-pid \
		test -n "$p0" -a "$p0" = "$p1"
	# the control: the pid check sees a restart
	ctl up-84-back upgrade "$MMFIX_KO" fixes populate_drain,khugepaged_scan
	t_check upgrade-khugepaged-patching-upgraded sh -c "test $CTL_RC = 0 &&
		file_is /sys/kernel/mmfix/module mmfix &&
		file_is $F/populate_drain/enabled 1 && file_is $F/khugepaged_scan/patched 1"
	loop_until 5 have_kpid
	p2=$(kpids | tr '\n' ' ')
	t_comment "the new build patches khugepaged_scan: khugepaged pid $p1-> $p2"
	t_check upgrade-patching-khugepaged-scan-restarts-khugepaged \
		test -n "$p1" -a -n "$p2" -a "$p1" != "$p2"
	ctl unload-84 unload
	mmfix_unload || t_fail upgrade-khugepaged-unload "$MMFIX_ERR"
fi

kill -9 $idle 2>/dev/null
wait $idle 2>/dev/null
echo "$saved_thp" >$THP/enabled
echo "$saved_sleep" >$KD/scan_sleep_millisecs
echo "$saved_pages" >$KD/pages_to_scan
t_check upgrade-khugepaged-dmesg-clean dmesg_clean_since "$mark"
