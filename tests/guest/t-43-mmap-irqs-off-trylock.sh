# SPDX-License-Identifier: GPL-2.0
# An mmap_lock trylock made in task context with interrupts disabled and
# released by an irq_work (what BPF's build-id stack walk does) is counted
# in skipped_irqs_off and leaves no slot behind: the same task's next
# read hold of its mm is timed from its own acquisition, not from the
# trylock 5 s earlier: under 2.5 s, half the hold a leaked slot times.  Needs /lib/mmfix/mmfix-irqsoff.ko, built with
# -DMMFIX_TEST_IRQS_OFF_TRYLOCK (tests/run-all), which has the trigger
# file stats/mmap_lock/test_irqs_off_trylock.
KO_IRQSOFF=/lib/mmfix/mmfix-irqsoff.ko
ST=/sys/kernel/mmfix/stats
t_begin mmap-irqs-off-trylock
if [ ! -f $KO_IRQSOFF ]; then
	t_skip mmap-irqs-off-trylock "no $KO_IRQSOFF in this initrd"
	return 0
fi
mmfix_unload
if ! MMFIX_KO=$KO_IRQSOFF mmfix_load; then
	t_fail mmap-irqs-off-trylock-load "$MMFIX_ERR"
	return 0
fi
# hold times: the leaked slot this test guards against is a hold's
echo 1 >$ST/hold_time
echo 1 >$ST/enabled
echo 1 >$ST/reset
mkfifo /tmp/t43.fifo
exec 3<>/tmp/t43.fifo
# Only shell builtins from here on: this shell is the task under test.
echo 1 >$ST/mmap_lock/test_irqs_off_trylock
trig=$?
read -t 5 x <&3
# a read hold of this shell's own mm (proc's maps reader takes it)
n=0
while read -r l; do n=$((n + 1)); done </proc/$$/maps
echo 0 >$ST/enabled
exec 3>&-
rm -f /tmp/t43.fifo
skipped=$(cat $ST/mmap_lock/skipped_irqs_off)
rmax=$(cat $ST/mmap_lock/read/hold_max_ns)
t_comment "trigger rc=$trig, $n maps lines; skipped_irqs_off $skipped, read hold_max_ns $rmax, untracked $(cat $ST/mmap_lock/untracked)"
t_check mmap-irqs-off-trylock-triggered test "$trig" = 0
t_check mmap-irqs-off-trylock-counted-as-skipped test "$skipped" = 1
# On 6.1 a page fault of this shell (mmap_lock there, no per-VMA locks)
# in between would end a leaked hold early: the skipped count above is
# the check that holds everywhere.  A leaked slot times at least the 5 s
# wait; reading a shell's maps takes milliseconds, under 2.5 s even with
# two TCG guests on two cores.
t_check mmap-irqs-off-trylock-next-hold-timed-from-its-own-acquisition \
	test "$rmax" -gt 0 -a "$rmax" -lt 2500000000
mmfix_unload || t_fail mmap-irqs-off-trylock-unload "$MMFIX_ERR"
