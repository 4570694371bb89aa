# SPDX-License-Identifier: GPL-2.0
# An upgrade restarts khugepaged only when it has to (issue #30 point
# 6a): khugepaged sleeps in the code of whoever patched khugepaged_scan,
# so only a build that patches it, or an old module that did, needs a
# new thread.  Seen through khugepaged's pid, with khugepaged kept busy
# during the first upgrade (waking every millisecond to walk 65536
# pages' worth of an mm with 20000 VMAs and a MADV_HUGEPAGE region): a
# busy khugepaged is often on a CPU when the transition first tries to
# switch it, and the code before #30 restarted a thread the transition
# had not switched yet:
#   mmfix loaded with fixes=populate_drain, then "mmfixctl upgrade
#     mmfix_alt.ko fixes populate_drain": neither build patches
#     khugepaged_scan, khugepaged keeps its pid;
#   the control, that the pid check sees a restart: mmfix loaded with
#     fixes=populate_drain,khugepaged_scan (khugepaged_scan off), then
#     the same upgrade leaves khugepaged_scan out: khugepaged leaves
#     mmfix's code, with a new pid.
# Both upgrades exit 0 with populate_drain on throughout.
# fixes: populate_drain khugepaged_scan

. /tests/lib-khugepaged.sh

KO_NEXT=/lib/mmfix/mmfix_alt.ko
F=/sys/kernel/mmfix/fixes

have_kpid() { [ -n "$(kpids)" ]; }

# busy 0|1: khugepaged at the test's idle settings, or busy (above)
busy() {
	if [ "$1" = 1 ]; then
		echo 65536 >$KD/pages_to_scan
		echo 1 >$KD/scan_sleep_millisecs
	else
		echo 4096 >$KD/pages_to_scan
		echo 10000 >$KD/scan_sleep_millisecs
	fi
}

# upgrade_pid NAME FIXES BUSY: load mmfix with fixes=FIXES and
# populate_drain on, upgrade to mmfix_alt with fixes populate_drain
# (khugepaged busy during it if BUSY is 1), unload; prints
# "PID_BEFORE/PID_AFTER" (empty: a step failed, reported as NAME-*).
upgrade_pid() {
	local name=$1 p0 p1
	if ! mmfix_load fixes="$2" enable=populate_drain; then
		t_fail "$name-load" "$MMFIX_ERR" >&2
		return 1
	fi
	p0=$(kpids | tr '\n' ' ')
	busy "$3"
	ctl "$name" upgrade "$KO_NEXT" fixes populate_drain >&2
	busy 0
	t_check "$name-upgraded" sh -c "test $CTL_RC = 0 &&
		test \"\$(cat /sys/kernel/mmfix/module)\" = mmfix_alt &&
		test \$(cat $F/populate_drain/enabled) = 1 &&
		test \$(cat $F/khugepaged_scan/patched) = 0" >&2
	# a restart by the new module's callbacks is done once they ran
	loop_until 5 have_kpid
	p1=$(kpids | tr '\n' ' ')
	ctl "$name-unload" unload >&2
	mmfix_unload >&2 || t_fail "$name-unload" "$MMFIX_ERR" >&2
	echo "${p0% }/${p1% }"
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
khpidle -n 20000 >/tmp/khpidle-84.out 2>&1 &
idle=$!
loop_until 60 grep -q '^ready' /tmp/khpidle-84.out ||
	t_fail upgrade-khugepaged-workload "khpidle not ready: $(cat /tmp/khpidle-84.out)"
mark=$(kmsg_mark upgrade-khugepaged)

pids=$(upgrade_pid upgrade-khugepaged-neither populate_drain 1)
t_comment "neither build patches khugepaged_scan: khugepaged pid $pids"
t_check upgrade-neither-patching-khugepaged-keeps-its-pid sh -c \
	"test -n '${pids%/*}' && test '${pids%/*}' = '${pids#*/}'"

pids=$(upgrade_pid upgrade-khugepaged-old populate_drain,khugepaged_scan 0)
t_comment "the old build patched khugepaged_scan: khugepaged pid $pids"
t_check upgrade-leaving-khugepaged-scan-restarts-khugepaged sh -c \
	"test -n '${pids%/*}' && test -n '${pids#*/}' && test '${pids%/*}' != '${pids#*/}'"

kill -9 $idle 2>/dev/null
wait $idle 2>/dev/null
echo "$saved_thp" >$THP/enabled
echo "$saved_sleep" >$KD/scan_sleep_millisecs
echo "$saved_pages" >$KD/pages_to_scan
t_check upgrade-khugepaged-dmesg-clean dmesg_clean_since "$mark"
