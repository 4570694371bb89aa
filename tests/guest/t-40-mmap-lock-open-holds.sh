# SPDX-License-Identifier: GPL-2.0
# mmap_lock statistics around a write hold of mmhold (tests/guest/kmod,
# test-only; run-all puts it in the initramfs): a waiter killed is
# counted as failed reads; a hold open when stats/hold_time goes 1 is not
# timed, one open when it goes 0 (and ends within the second before the
# unlock probe goes) or when reset is written is; 4200 threads queued at
# once overflow the 4096-slot table of waits in progress into untracked.
# Apart from t-40-lock-stats.sh, whose time (up to 220 s on a busy host)
# leaves too little of the 300 s a script may take.  Sourced by /init
# after lib.sh.

ST=/sys/kernel/mmfix/stats
st() { cat "$ST/$1"; }

t_begin mmap-lock-open-holds
mmfix_require_ko mmap-lock-open-holds || return 0
if ! mmfix_load; then
	t_fail mmap-lock-open-holds-load "$MMFIX_ERR"
	return 0
fi
thp=/sys/kernel/mm/transparent_hugepage/enabled
thp_saved=$(sed -n 's/.*\[\(.*\)\].*/\1/p' $thp 2>/dev/null)
# khugepaged would take the victims' mmap_lock for reading while it scans
[ -z "$thp_saved" ] || echo never >$thp

# mmhold (tests/guest/kmod, test-only; run-all puts it in the initrd):
# "PID MS 0" >hold takes PID's mmap_lock for write at once and holds it
# MS ms, in the task that wrote (HOLDER), unless a signal ends it.
HOLD_KO=/lib/mmfix/mmhold.ko
HOLD=/sys/kernel/debug/mmhold
hold_state() { cat $HOLD/state; }
holding() { [ "$(hold_state)" = holding ]; }
hold_over() { case $(hold_state) in done*) return 0 ;; esac; return 1; }
# hold_start PID MS: the hold has begun (status 1 if not within 30 s)
# A hold's two ends are local_clock() reads, on the CPUs where the lock
# was taken and released: the kernel keeps those comparable across CPUs
# only to about a jiffy (4 ms at Debian's HZ=250), and mmhold's holder
# sleeps and may wake on the other CPU.  A hold of N ms may therefore
# read a little under N ms (7.3 under a busy host: 798.85 for 800).
SKEW_NS=8000000
hold_start() {
	echo "$1 $2 0" >$HOLD/hold &
	HOLDER=$!
	loop_until 30 holding
}
hold_end() { loop_until 60 hold_over; wait $HOLDER 2>/dev/null; }
# mmap_on HOLD_TIME: mmap_lock statistics on (only), reset
mmap_on() {
	echo "$1" >$ST/hold_time
	echo 1 >$ST/mmap_lock/enabled
	echo 1 >$ST/reset
}
# in_mmap_wait PID: PID sleeps (D) in access_remote_vm(), taking the
# victim's mmap_lock (the scheduler's frames are not in /proc/PID/stack)
in_mmap_wait() {
	[ "$(sed 's/.*) \(.\).*/\1/' /proc/$1/stat 2>/dev/null)" = D ] &&
		grep -q 'access_remote_vm' /proc/$1/stack 2>/dev/null
}

if insmod $HOLD_KO; then
	sleep 600 &
	victim=$!

	# A killable wait ended by a fatal signal: a reader of the victim's
	# /proc/PID/cmdline queues behind the write hold (mmap_read_lock_
	# killable() in access_remote_vm()) and is killed.  Nothing else in
	# the idle guest fails an mmap_lock: one failed read, or two (the
	# read looks at the arguments' last byte first, then at the rest,
	# and the second try ends at once with the signal pending); none
	# while it waits.
	mmap_on 0
	if hold_start $victim 60000; then
		cat /proc/$victim/cmdline >/dev/null &
		reader=$!
		loop_until 30 in_mmap_wait $reader || {
			echo "reader $reader not in the wait:"; cat /proc/$reader/stack; }
		f0=$(st mmap_lock/read/failed)
		kill -9 $reader
		wait $reader 2>/dev/null
		f1=$(st mmap_lock/read/failed)
		kill $HOLDER
		hold_end
		t_comment "read failed: $f0 while the reader waited, $f1 once it was killed; write failed $(st mmap_lock/write/failed)"
		t_check mmap-killed-wait-counts-as-failed-reads \
			test "$f0" = 0 -a "$f1" -ge 1 -a "$f1" -le 2 -a "$(st mmap_lock/write/failed)" = 0
	else
		t_fail mmap-killed-wait-counts-as-failed-reads "mmhold: $(hold_state)"
		kill $HOLDER
		hold_end
	fi

	# hold_time 1 written during a write hold opened under 0: that hold
	# is not timed (its 2 s would be the longest write hold by far)
	mmap_on 0
	if hold_start $victim 2000; then
		echo 1 >$ST/hold_time
		hold_end
		echo 0 >$ST/mmap_lock/enabled
		t_comment "hold_time 1 during a 2 s hold: write hold_max_ns $(st mmap_lock/write/hold_max_ns), worst hold pid $(st mmap_lock/worst_hold_pid) (holder $HOLDER)"
		t_check mmap-hold-open-before-hold-time-1-not-timed \
			test "$(st mmap_lock/write/hold_max_ns)" -lt 2000000000
	else
		t_fail mmap-hold-open-before-hold-time-1-not-timed "mmhold: $(hold_state)"
		hold_end
	fi

	# hold_time 0 written during a 0.8 s write hold: it ends before the
	# unlock probe goes (one second after the write) and is timed
	try=0
	while :; do
		try=$((try + 1))
		mmap_on 1
		hold_start $victim 800 || break
		echo 0 >$ST/hold_time
		st0=$(hold_state)
		hold_end
		echo 0 >$ST/mmap_lock/enabled
		# the switch must have come while the hold was still on
		[ "$st0" != holding ] && [ $try -lt 3 ] || break
		stats_wait_unhooked
	done
	t_comment "hold_time 0 during a 0.8 s hold (attempt $try, state then: $st0): write holds $(st mmap_lock/write/holds), hold_max_ns $(st mmap_lock/write/hold_max_ns), worst hold $(st mmap_lock/worst_hold_pid) $(st mmap_lock/worst_hold_mode) (holder $HOLDER)"
	t_check mmap-hold-open-when-hold-time-0-still-timed \
		test "$st0" = holding -a "$(st mmap_lock/write/hold_max_ns)" -ge $((800000000 - SKEW_NS)) -a \
		"$(st mmap_lock/worst_hold_pid)" = "$HOLDER" -a "$(st mmap_lock/worst_hold_mode)" = write

	# reset during a 2 s write hold: the hold is still counted when it
	# ends, from its own start
	mmap_on 1
	if hold_start $victim 2000; then
		echo 1 >$ST/reset
		hold_end
		echo 0 >$ST/mmap_lock/enabled
		t_comment "reset during a 2 s hold: write holds $(st mmap_lock/write/holds), hold_max_ns $(st mmap_lock/write/hold_max_ns), worst hold $(st mmap_lock/worst_hold_pid) $(st mmap_lock/worst_hold_ns) ns"
		t_check mmap-hold-open-at-reset-counted-when-it-ends \
			test "$(st mmap_lock/write/holds)" -ge 1 -a \
			"$(st mmap_lock/write/hold_max_ns)" -ge $((2000000000 - SKEW_NS)) -a \
			"$(st mmap_lock/worst_hold_pid)" = "$HOLDER" -a \
			"$(st mmap_lock/worst_hold_ns)" -ge $((2000000000 - SKEW_NS))
	else
		t_fail mmap-hold-open-at-reset-counted-when-it-ends "mmhold: $(hold_state)"
		hold_end
	fi
	kill $victim
	wait $victim 2>/dev/null
	echo 0 >$ST/hold_time
	stats_wait_unhooked

	# The table of waits and holds in progress has 4096 slots: 4200
	# threads queued at once on their own mm's lock (held for write by
	# mmhold) leave at least 104 untracked, each counted once, and the
	# others contended: together all 4200 (read before the threads go).
	NQ=4200
	rm -f /tmp/mmq-go /tmp/mmq-end
	mmqueue -t $NQ -g /tmp/mmq-go -e /tmp/mmq-end >/tmp/mmq.out 2>&1 &
	mmq=$!
	queued() {
		[ "$(cat /proc/$mmq/task/*/stat 2>/dev/null | grep -c ') D ')" -ge $NQ ]
	}
	t0=$(now_cs) t1=0 t2=0 t3=0 nd=0
	if loop_until 120 grep -q '^ready' /tmp/mmq.out; then
		t1=$(now_cs)
		mmap_on 0
		if hold_start $mmq 120000; then
			touch /tmp/mmq-go
			loop_until 120 queued
			t2=$(now_cs)
			nd=$(cat /proc/$mmq/task/*/stat 2>/dev/null | grep -c ') D ')
			kill $HOLDER
			hold_end
		fi
		loop_until 120 grep -q '^returned' /tmp/mmq.out
		t3=$(now_cs)
		echo 0 >$ST/mmap_lock/enabled
		touch /tmp/mmq-end
		loop_until 120 grep -q '^done' /tmp/mmq.out
	fi
	t_comment "mmqueue: started $(( (t1 - t0) / 100 )) s, queued $(( (t2 - t1) / 100 )) s, returned $(( (t3 - t2) / 100 )) s, gone $(( ($(now_cs) - t3) / 100 )) s"
	kill -9 $mmq 2>/dev/null
	wait $mmq 2>/dev/null
	unt=$(st mmap_lock/untracked) rc=$(st mmap_lock/read/contended)
	t_comment "$NQ threads queued ($nd seen in D; $(( (t1 - t0) / 100 )) s to start them, $(( ($(now_cs) - t1) / 100 )) s queued and gone): untracked $unt, read contended $rc; $(cat /tmp/mmq.out | tr '\n' ' ')"
	t_check mmap-table-overflow-counts-untracked \
		test "$nd" -ge $NQ -a "$unt" -ge $((NQ - 4096)) -a "$unt" -le $NQ -a \
		$((unt + rc)) -ge $NQ -a $((unt + rc)) -le $((NQ + 10))
	rmmod mmhold
else
	# run-all puts it in the initramfs
	t_fail mmap-killed-wait-counts-as-failed-reads "insmod $HOLD_KO failed"
fi

[ -z "$thp_saved" ] || echo "$thp_saved" >$thp
echo 0 >$ST/enabled
mmfix_unload || t_fail mmap-lock-open-holds-unload "$MMFIX_ERR"
