# SPDX-License-Identifier: GPL-2.0
# khugepaged_scan: the khugepaged threads that loading and unloading
# start in place of the old one keep the CPU affinity, nice value and
# cgroup its admin gave it (CPU 1, nice 5, a cgroup2 group), and a
# patch loaded while THP is never starts none.  Sourced by /init after
# lib.sh.
# fixes: khugepaged_scan

. /tests/lib-khugepaged.sh

t_begin khugepaged-restart-keeps-settings
mmfix_require_ko khugepaged-restart-keeps-settings || return 0
saved=$(sed 's/.*\[\(.*\)\].*/\1/' $THP/enabled)
echo madvise >$THP/enabled
mark=$(kmsg_mark)
if ! khugepaged_settings_set; then
	t_fail khugepaged-settings-set "no khugepaged to set"
	return 0
fi
p0=$(kpid)
khugepaged_settings_kept
if ! mmfix_load enable=khugepaged_scan; then
	t_fail khugepaged-restart-load "$MMFIX_ERR"
	return 0
fi
t_check load-restarts-khugepaged test "$(kpid)" != "$p0" -a "$(ks restarts)" = 1
t_check load-keeps-khugepaged-cpu-nice-cgroup khugepaged_settings_kept
echo 0 >$KS/enabled
echo 1 >$KS/enabled
t_check fix-toggle-keeps-khugepaged-cpu-nice-cgroup khugepaged_settings_kept
p1=$(kpid)
if mmfix_unload; then
	t_pass khugepaged-restart-unload
else
	t_fail khugepaged-restart-unload "$MMFIX_ERR"
fi
t_check unload-restarts-khugepaged test -n "$(kpid)" -a "$(kpid)" != "$p1"
t_check unload-keeps-khugepaged-cpu-nice-cgroup khugepaged_settings_kept

echo never >$THP/enabled
loop_until 5 khugepaged_gone
if mmfix_load; then
	t_check load-with-thp-never-starts-no-khugepaged \
		test -z "$(kpids)" -a "$(ks restarts)" = 0
	mmfix_unload
	t_check unload-with-thp-never-starts-no-khugepaged khugepaged_gone
else
	t_fail khugepaged-restart-load-thp-never "$MMFIX_ERR"
fi
echo "$saved" >$THP/enabled
loop_until 5 test -n "$(kpid)"
khugepaged_settings_reset
t_check khugepaged-restart-kernel-log-clean dmesg_clean_since "$mark"
