# SPDX-License-Identifier: GPL-2.0
#
# tests/guest/lib-writer-hold.sh - khugepaged never sleeps behind one
# process's mmap_lock writer (t-53 fix on, t-54 fix off; two scripts so
# that each stays within the per-script limit).  mmhold
# (tests/guest/kmod, a test-only module) takes an idle process's
# mmap_lock for write while khugepaged walks its 100k VMAs, and holds it
# 30 s (retried until, with the fix on, khugepaged dropped the lock for
# it in the middle of that walk).  Meanwhile another process's region
# collapses, khugepaged is never in D state for 10 s or more
# (/proc/PID/stat every 0.1 s), and switching the fix off, disabling the
# patch and rmmod each finish while the writer still holds the lock.
# The bug each catches is a wait for the writer's 30 s hold: khugepaged
# asleep behind it, or an unload step that only ends with it.  So the
# bounds are the hold, not a wall-clock guess (the unpatch itself takes
# 3-6 s on 6.12 under TCG, one RCU Tasks grace period per redirected
# function, more with two guests on two cores): a step passes when it
# finished with the hold still on (mmhold's state), and has at most
# until the hold ends; all with no hung-task or RCU stall report
# (hung_task_timeout lowered to 10 s for the test).  Usage, after lib.sh:
#
#	. /tests/lib-writer-hold.sh
#	writer_hold_test on|off

. /tests/lib-khugepaged.sh	# KS, THP, KD, field, kpid, within, mmhold

HOLD_MS=30000

# d_sampler OUT STOP: every 0.1 s, khugepaged's state; OUT gets the
# longest run of D samples in centiseconds (first to last D sample).
d_sampler() {
	local kp= st start=0 max=0 now
	while [ ! -e "$2" ]; do
		[ -n "$kp" ] && [ -r "/proc/$kp/stat" ] || kp=$(kpid)
		st=
		[ -z "$kp" ] || read -r _ _ st _ <"/proc/$kp/stat" 2>/dev/null
		now=$(now_cs)
		if [ "$st" = D ]; then
			[ "$start" -gt 0 ] || start=$now
			[ $((now - start)) -le "$max" ] || max=$((now - start))
		else
			start=0
		fi
		echo "$max" >"$1"
		sleep 0.1
	done
}

# before_hold_ends NAME CMD...: run CMD in the background; PASS NAME if
# it finished while mmhold still held the lock (a step that waited for
# the writer can only finish after the hold), else FAIL.  Waits at most
# until the hold is over (HOLD_MS from its start, plus 10 s).
before_hold_ends() {
	local name=$1 t0 held
	shift
	rm -f "/tmp/bhe-$name"
	t0=$(now_cs)
	("$@" >/dev/null 2>&1; rc=$?; s=$(hold_state); echo "$rc $s" >"/tmp/bhe-$name") &
	if ! loop_until $((HOLD_MS / 1000 + 10)) test -s "/tmp/bhe-$name"; then
		t_fail "$name" "not finished $((HOLD_MS / 1000 + 10)) s after it began, hold $(hold_state)"
		return 1
	fi
	held=$(cut -d' ' -f2- "/tmp/bhe-$name")
	echo "$name: $(( $(now_cs) - t0 )) cs, status and hold then: $(cat "/tmp/bhe-$name")"
	if [ "$held" != holding ]; then
		t_fail "$name" "finished only once the writer's hold was over ($held)"
		return 1
	fi
	t_pass "$name"
}

klp_gone() {
	[ ! -d "$MMFIX_KLP" ] || [ "$(cat "$MMFIX_KLP/transition" 2>/dev/null)" = 0 ] &&
		loop_until 10 test ! -d "$MMFIX_KLP"
}
disable_patch() { echo 0 >"$MMFIX_KLP/enabled" && loop_until 60 klp_gone; }
unload_module() { loop_until 60 sh -c "rmmod mmfix 2>/dev/null || ! test -d /sys/module/mmfix"; }

# one_run on|off
one_run() {
	local st=$1 idle out mark kp misses hit sampler attempt drops holder
	step() { echo "--- $st: $* (uptime $(cut -d' ' -f1 /proc/uptime))"; }
	mark=$(kmsg_mark)
	if [ "$st" = on ]; then mmfix_load enable=khugepaged_scan; else mmfix_load; fi ||
		{ t_fail "writer-hold-$st-load" "$MMFIX_ERR"; return; }
	khpidle_start "writer-hold-$st-workload" 100000 || return
	step hold
	# mmhold retries its trylock until a reader (khugepaged) holds the
	# lock; with the fix on, the attempt counts only if khugepaged then
	# dropped it for this writer (lock_drops moved), else the hold is
	# cut short (a signal ends mmhold's sleep) and tried again.
	attempt=0
	while :; do
		attempt=$((attempt + 1))
		drops=$(cat $KS/lock_drops)
		echo "$idle $HOLD_MS 20000" >$HOLD/hold &
		holder=$!
		loop_until 25 sh -c "! grep -q trying $HOLD/state"
		holding || break
		[ "$st" = on ] || break
		sleep 0.3
		[ "$(cat $KS/lock_drops)" = "$drops" ] || break
		[ $attempt -lt 10 ] || break
		kill $holder
		wait $holder 2>/dev/null
		loop_until 5 hold_over
	done
	t_comment "writer-hold-$st: attempts $attempt, lock_drops $drops -> $(cat $KS/lock_drops)"
	if ! holding || { [ "$st" = on ] && [ "$(cat $KS/lock_drops)" = "$drops" ]; }; then
		t_fail "writer-hold-$st-taken-while-khugepaged-walks" \
			"$(hold_state) after $attempt attempts"
		kill $holder
		kill -9 $idle
		wait
		mmfix_unload
		return
	fi
	t_pass "writer-hold-$st-taken-while-khugepaged-walks"
	rm -f /tmp/d-stop
	d_sampler /tmp/d-max /tmp/d-stop &
	sampler=$!
	out=$(thpscan -n 1000 -r 4 -t 15)
	echo "other process: $out"
	t_check "writer-hold-$st-other-process-collapses" \
		test "$(field collapsed "$out")" = 1 -a "$(field errors "$out")" = 0
	[ "$st" = off ] || t_comment "writer-hold-$st: lock_drops $(cat $KS/lock_drops) retake_failed $(cat $KS/retake_failed 2>/dev/null)"
	kp=$(kpid)
	echo "khugepaged $kp: $(cat /proc/$kp/stat 2>/dev/null | cut -d' ' -f3) wchan $(cat /proc/$kp/wchan 2>/dev/null)"
	cat /proc/$kp/stack 2>/dev/null
	t_check "writer-hold-$st-hold-still-on" holding
	step unload during hold
	before_hold_ends "writer-hold-$st-fix-off-before-hold-ends" sh -c "echo 0 >$KS/enabled"
	before_hold_ends "writer-hold-$st-patch-disabled-before-hold-ends" disable_patch
	before_hold_ends "writer-hold-$st-rmmod-before-hold-ends" unload_module
	loop_until 40 hold_over
	touch /tmp/d-stop
	wait $sampler
	echo "mmhold: $(hold_state)"
	misses=$(field misses "$(hold_state)")
	hit=$(field hit "$(hold_state)")
	t_comment "writer-hold-$st: writer queued behind a reader after $misses free trylocks; waited $(field wait_us "$(hold_state)") us; held $(field held_ms "$(hold_state)") ms"
	t_check "writer-hold-$st-held-${HOLD_MS}ms" test "$hit" = 1 -a \
		"$(field held_ms "$(hold_state)")" -ge $((HOLD_MS - 1000))
	# the bug: asleep behind the 30 s hold (D from the hold's start to
	# its end); a page allocation or I/O wait is far shorter than 10 s
	t_check "writer-hold-$st-khugepaged-never-in-d-10s" \
		test "$(cat /tmp/d-max)" -lt 1000 || echo "longest D: $(cat /tmp/d-max) cs"
	# (not dmesg_since: its awk also "finds" the marker in any line one
	# character shorter than the marker)
	t_check "writer-hold-$st-no-hung-task-or-rcu-stall" sh -c \
		"! dmesg | sed -n '/mmfix-test: marker $mark\$/,\$p' |
			grep -E 'blocked for more than|rcu.*(stall|Stall)'"
	t_check "writer-hold-$st-kernel-log-clean" dmesg_clean_since "$mark"
	kill -9 $idle
	wait $idle 2>/dev/null
	mmfix_unload
}

writer_hold_test() {
	local saved
	t_begin "khugepaged-writer-hold-$1"
	mmfix_require_ko "khugepaged-writer-hold-$1" || return 0
	mmhold_insert "khugepaged-writer-hold-$1" || return 0
	saved="$(sed 's/.*\[\(.*\)\].*/\1/' $THP/enabled) $(cat $KD/scan_sleep_millisecs /proc/sys/kernel/hung_task_timeout_secs)"
	echo madvise >$THP/enabled
	echo 10 >$KD/scan_sleep_millisecs
	echo 10 >/proc/sys/kernel/hung_task_timeout_secs

	one_run "$1"

	rmmod mmhold
	set -- $saved
	echo "$1" >$THP/enabled
	echo "$2" >$KD/scan_sleep_millisecs
	echo "$3" >/proc/sys/kernel/hung_task_timeout_secs
}
