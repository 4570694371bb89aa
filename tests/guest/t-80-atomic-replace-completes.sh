# SPDX-License-Identifier: GPL-2.0
# Another livepatch's atomic replace (issue #30 point 1): with mmfix
# loaded, khugepaged_scan patched and on and khugepaged busy (scanning
# every 10 ms an mm with a MADV_HUGEPAGE region behind 2000 VMAs), the
# test livepatch lp_replace (tests/guest/kmod/lp_replace.c, replace =
# true, like a kpatch cumulative security patch) is loaded:
#   its transition completes within 10 s, and its code runs
#     (/proc/cmdline reads lp_replace);
#   mmfix says it was replaced and by whom: patch reads "replaced",
#     replaced_by "lp_replace", its livepatch directory is gone, every
#     switch reads 0 and writing 1 fails (EBUSY); mmfixctl status exits
#     8 saying "replaced", -j has "replaced_by":"lp_replace", the export
#     has mmfix_state{state="replaced"} 1 and
#     mmfix_livepatch_replaced{livepatch="lp_replace"} 1;
#   khugepaged runs on afterwards (the kernel's own code: full_scans
#     moves), and mmfixctl unload removes mmfix.
# On a stall (the issue saw 67 s) the test waits 30 s at most, then
# reverses lp_replace's transition and unloads mmfix for the next tests.
# fixes: khugepaged_scan

. /tests/lib-khugepaged.sh

RK=/lib/mmfix/lp_replace.ko
LP=/sys/kernel/livepatch/lp_replace
F=/sys/kernel/mmfix/fixes

# switches_all_0: every fixes/*/enabled reads 0 (prints those that don't)
switches_all_0() {
	local d bad=
	for d in $F/*; do
		file_is "$d/enabled" 0 || bad="$bad ${d##*/}=$(cat "$d/enabled")"
	done
	[ -z "$bad" ] || { echo "on:$bad"; return 1; }
}

# unswitched: the tasks a patching transition has not switched yet
# (patch_state 0), each with its kernel stack, for the log
unswitched() {
	local f p
	echo "unswitched: patch_state of all tasks (count state):" \
		$(cat /proc/[0-9]*/patch_state 2>/dev/null | sort | uniq -c)
	for f in /proc/[0-9]*/patch_state; do
		[ "$(cat "$f" 2>/dev/null)" = 0 ] || continue
		p=${f#/proc/}
		p=${p%/patch_state}
		echo "unswitched: $p $(cat /proc/$p/comm 2>/dev/null)"
		sed 's/^/    /' /proc/$p/stack 2>/dev/null | head -n 12
	done
}

moves() { # FILE S: FILE's number grows within S seconds
	local v0
	v0=$(cat "$1")
	loop_until "$2" sh -c "test \$(cat $1) -gt $v0"
}

t_begin atomic-replace
mmfix_require_ko atomic-replace || return 0
if [ ! -f "$RK" ]; then
	t_skip atomic-replace "no $RK (tests/guest/kmod/build)"
	return 0
fi
[ -d "$KD" ] || { t_skip atomic-replace "no $KD"; return 0; }
command -v mmfixctl >/dev/null || { t_skip atomic-replace "no mmfixctl"; return 0; }
saved_thp=$(sed 's/.*\[\(.*\)\].*/\1/' $THP/enabled)
saved_sleep=$(cat $KD/scan_sleep_millisecs)
echo madvise >$THP/enabled
echo 10 >$KD/scan_sleep_millisecs
mark=$(kmsg_mark atomic-replace)

khpidle_start atomic-replace-workload 2000

if ! mmfix_load enable=recommended,khugepaged_scan; then
	t_fail atomic-replace-mmfix-load "$MMFIX_ERR"
else
	t_check atomic-replace-khugepaged-scan-on sh -c \
		"test \$(cat $F/khugepaged_scan/patched) = 1 &&
		 test \$(cat $F/khugepaged_scan/enabled) = 1"
	t_check atomic-replace-khugepaged-busy-in-mmfix-code \
		moves $F/khugepaged_scan/scans 5

	step insmod lp_replace
	t0=$(now_cs)
	if ! out=$(insmod "$RK" 2>&1); then
		t_fail atomic-replace-loads "insmod $RK: $out"
	else
		# the issue's stall: wait 30 s at most, pass only within 10 s;
		# at 5 and 10 s, the tasks still to switch and where they are
		loop_until 5 file_is "$LP/transition" 0 || unswitched
		loop_until 5 file_is "$LP/transition" 0 || unswitched
		loop_until 20 file_is "$LP/transition" 0
		secs=$(( ($(now_cs) - t0) / 100 ))
		t_comment "lp_replace transition: $(cat "$LP/transition") after ${secs}s"
		t_check atomic-replace-transition-done-within-10s sh -c \
			"test \$(cat $LP/transition) = 0 && test $secs -le 10"
		t_check atomic-replace-lp-replace-runs sh -c \
			"test \$(cat $LP/enabled) = 1 && test \"\$(cat /proc/cmdline)\" = lp_replace"
		t_check replaced-mmfix-livepatch-gone test ! -d "$MMFIX_KLP"
		t_check replaced-patch-reads-replaced file_is /sys/kernel/mmfix/patch replaced ||
			echo "patch: $(cat /sys/kernel/mmfix/patch)"
		t_check replaced-by-reads-lp-replace file_is /sys/kernel/mmfix/replaced_by lp_replace ||
			echo "replaced_by: '$(cat /sys/kernel/mmfix/replaced_by)'"
		t_check replaced-switches-read-0 switches_all_0
		err=$(sh -c "echo 1 >$F/khugepaged_scan/enabled" 2>&1)
		t_check replaced-switch-on-refused-ebusy sh -c \
			"echo '$err' | grep -qi 'busy' && test \$(cat $F/khugepaged_scan/enabled) = 0" ||
			echo "write of 1: '$err'"
		ctl st-80 status
		t_check replaced-status-exits-8 sh -c \
			"test $CTL_RC = 8 && grep -q '^state: *replaced' /tmp/ctl-st-80" ||
			echo "exit $CTL_RC"
		ctl st-80-json -j status
		t_check replaced-status-json sh -c \
			"grep -q '\"state\":\"replaced\"' /tmp/ctl-st-80-json &&
			 grep -q '\"replaced_by\":\"lp_replace\"' /tmp/ctl-st-80-json"
		ctl exp-80 export
		t_check replaced-export-state sh -c \
			"grep -q '^mmfix_state{state=\"replaced\"} 1' /tmp/ctl-exp-80 &&
			 grep -q '^mmfix_livepatch_replaced{livepatch=\"lp_replace\"} 1' /tmp/ctl-exp-80"
		t_check replaced-khugepaged-runs khugepaged_runs
		t_check replaced-khugepaged-scans moves $KD/full_scans 10
		ctl unload-80 unload
		t_check replaced-mmfixctl-unload sh -c \
			"test $CTL_RC = 0 && ! test -d /sys/module/mmfix && ! test -d /sys/kernel/mmfix"
	fi
	# clean up, whatever happened: lp_replace first (a stalled
	# transition is reversed), then mmfix if it is still there
	lp_remove lp_replace || t_fail atomic-replace-lp-replace-removed \
		"lp_replace: $(cat $LP/enabled $LP/transition 2>/dev/null | tr '\n' ' ')"
	mmfix_unload || t_fail atomic-replace-unload "$MMFIX_ERR"
fi
kill -9 $idle 2>/dev/null
wait $idle 2>/dev/null
t_check atomic-replace-khugepaged-runs-after loop_until 5 khugepaged_runs
echo "$saved_sleep" >$KD/scan_sleep_millisecs
echo "$saved_thp" >$THP/enabled
t_check atomic-replace-dmesg-clean dmesg_clean_since "$mark"
