# SPDX-License-Identifier: GPL-2.0
# Switching the lock statistics on when a probe cannot be registered
# (docs/ABI/testing/sysfs-kernel-mmfix, stats/enabled: "fails with the
# kernel's error, and leaves nothing registered").  Needs
# /lib/mmfix/mmfix-probefail.ko, built with -DMMFIX_TEST_PROBE_FAIL: its
# test_probe_fail=N parameter makes the Nth probe registration from then
# on fail with ENOMEM in mmfix's own wrapper, before the kernel is asked,
# so the real unwind runs; and /lib/mmfix/tpprobes.ko
# (tests/guest/kmod/tpprobes.c), which lists mmfix's probes on the lock
# tracepoints (tracefs shows the ftrace callbacks: enabled_functions).
# With hold_time 1, stats/enabled=1 makes six registrations: lru_lock's
# contention_begin, contention_end, lock callback and unlock callback,
# then mmap_lock's acquire_returned and released.  For each N of 1..6:
# the write fails with ENOMEM and a kernel log line, the three switches
# read 0, and within 5 s (switching off unhooks a second later) no probe
# of mmfix is registered.  Then a write with no failure registers all
# six, and switching off removes them; the kernel log stays clean.
# N=2 (contention_begin fails after contention_end was registered): the
# failed write itself waits for the tracepoints' grace periods, counted
# with a kprobe on synchronize_srcu() (as t-44), before the module may go
# (issue #43.5: it unregistered contention_end and returned at once).
# Then, with test_lose_acquisitions=1 (the same build), contended waits
# happen and write/contended still reads no more than acquisitions
# (issue #43.6: counted apart, a wait could be read without its
# acquisition).
KO_PF=/lib/mmfix/mmfix-probefail.ko
TPKO=/lib/mmfix/tpprobes.ko
ST=/sys/kernel/mmfix/stats
TR=/sys/kernel/tracing
PF=/sys/module/mmfix/parameters/test_probe_fail
TP=/sys/kernel/debug/tpprobes/mmfix
ALL="ftrace=6 contention_begin=1 contention_end=1 mmap_lock_acquire_returned=1 mmap_lock_released=1"
NONE="ftrace=0 contention_begin=0 contention_end=0 mmap_lock_acquire_returned=0 mmap_lock_released=0"

# probes: mmfix's probes as the kernel has them: ftrace callbacks on the
# lock and unlock functions, then each tracepoint's probes of mmfix.
probes() {
	# shellcheck disable=SC2046 # one word per tracepoint line
	echo "ftrace=$(grep -cE '^(folio_lruvec_lock(_irq|_irqsave)?|_raw_spin_unlock(_irq|_irqrestore)?) ' \
		"$TR/enabled_functions")" $(sed 's/ /=/' "$TP")
}
none_registered() {
	P=$(probes)
	[ "$P" = "$NONE" ]
}
# logged_enomem TAG: one kernel log line since TAG says which probe
# could not be registered, with the error (-12).
logged_enomem() { [ "$(dmesg_since "$1" | grep -c 'stats: cannot .*(-12)')" = 1 ]; }
switches() { echo "$(cat $ST/enabled) $(cat $ST/lru_lock/enabled) $(cat $ST/mmap_lock/enabled)"; }

t_begin stats-probe-fail
for f in $KO_PF $TPKO; do
	if [ ! -f "$f" ]; then
		t_fail stats-probe-fail-files "no $f in this initrd (tests/run-all builds it)"
		return 0
	fi
done
mmfix_unload
mark=$(kmsg_mark)
if ! insmod $TPKO || [ ! -r $TP ]; then
	t_fail stats-probe-fail-tpprobes-loads "insmod $TPKO"
	return 0
fi
if ! MMFIX_KO=$KO_PF mmfix_load; then
	t_fail stats-probe-fail-load "$MMFIX_ERR"
	rmmod tpprobes
	return 0
fi
t_check stats-probe-fail-none-registered-before none_registered || probes
G=mmfix_t47
srcu_probe=0
echo "p:$G/srcu47 synchronize_srcu" >>$TR/kprobe_events &&
	echo 1 >$TR/events/$G/enable && srcu_probe=1
srcu_hits() { awk -v e=srcu47 '$1 == e { print $2 }' $TR/kprobe_profile; }
echo 1 >$ST/hold_time
for n in 1 2 3 4 5 6; do
	# each step from nothing registered, whatever the last one left
	echo 0 >$ST/enabled
	loop_until 5 none_registered || echo "before step $n: $(probes)"
	echo $n >$PF
	m=$(kmsg_mark)
	[ $srcu_probe = 0 ] || h0=$(srcu_hits)
	t_check stats-probe-fail-$n-write-fails-enomem \
		write_fails $ST/enabled 1 '*Cannot allocate memory*'
	if [ $n = 2 ]; then
		if [ $srcu_probe = 1 ]; then
			h=$(( $(srcu_hits) - h0 ))
			t_comment "contention_begin failed: $h synchronize_srcu() calls in the write"
			t_check stats-probe-fail-2-waits-tracepoint-grace-period test "$h" -ge 1
		else
			t_fail stats-probe-fail-2-waits-tracepoint-grace-period "no kprobe on synchronize_srcu"
		fi
	fi
	t_check stats-probe-fail-$n-logged logged_enomem "$m" || dmesg_since "$m"
	t_check stats-probe-fail-$n-switches-read-0 test "$(switches)" = "0 0 0" ||
		echo "enabled, lru_lock, mmap_lock: $(switches)"
	t_check stats-probe-fail-$n-leaves-no-probe loop_until 5 none_registered ||
		probes
done
echo 0 >$PF
t_check stats-probe-fail-then-write-succeeds sh -c "echo 1 >$ST/enabled"
t_check stats-probe-fail-then-all-registered test "$(probes)" = "$ALL" ||
	probes
# #43.6: with every mmap_lock acquisition lost (test_lose_acquisitions,
# what a switch-off between contention_end and acquire_returned does to
# one), contended waits still happen (wait_hist counts them), and
# contended never reads above acquisitions
LOSE=/sys/module/mmfix/parameters/test_lose_acquisitions
W=$ST/mmap_lock/write
echo 1 >$LOSE
echo 1 >$ST/reset
mmapcontend -w 2 -n 3000 >/dev/null
waits=$(awk '{ n += $2 } END { print n + 0 }' $W/wait_hist)
echo 0 >$LOSE
t_comment "acquisitions lost: write waits $waits, contended $(cat $W/contended), acquisitions $(cat $W/acquisitions)"
t_check stats-contended-never-above-acquisitions sh -c \
	"test $waits -ge 1 && test \$(cat $W/contended) -le \$(cat $W/acquisitions)"
echo 0 >$ST/enabled
echo 0 >$ST/hold_time
t_check stats-probe-fail-switched-off-leaves-no-probe loop_until 5 none_registered ||
	probes
if [ $srcu_probe = 1 ]; then
	echo 0 >$TR/events/$G/enable
	echo "-:$G/srcu47" >>$TR/kprobe_events
fi
mmfix_unload || t_fail stats-probe-fail-unload "$MMFIX_ERR"
rmmod tpprobes
t_check stats-probe-fail-kernel-log-clean dmesg_clean_since "$mark"
