# SPDX-License-Identifier: GPL-2.0
# Switching a lock statistics source off waits for the tracepoints' grace
# periods before the module may free what its probes use or go away
# (include/linux/tracepoint.h: tracepoint_synchronize_unregister(), which
# calls synchronize_srcu() on all four kernels): for mmap_lock, and also
# for lru_lock, whose lock:contention_* probes are tracepoints too, when it
# is the last source switched off.  Counted independently of mmfix with a
# kprobe on synchronize_srcu() over the switch-off and the unhook a second
# later (a kretprobe on mmfix_stats_unhook() says when that has run).
# Before the fix (issue #30), lru_lock's stop made no such call.
ST=/sys/kernel/mmfix/stats
TR=/sys/kernel/tracing
G=mmfix_t44

t_begin stats-grace-period
mmfix_require_ko stats-grace-period || return 0
mmfix_unload
if ! mmfix_load; then
	t_fail stats-grace-period-load "$MMFIX_ERR"
	return 0
fi
if ! echo "p:$G/srcu synchronize_srcu" >>$TR/kprobe_events ||
   ! echo "r:$G/unhooked mmfix_stats_unhook" >>$TR/kprobe_events ||
   ! echo 1 >$TR/events/$G/enable; then
	t_fail stats-grace-period-probe "cannot place the probes on synchronize_srcu and mmfix_stats_unhook"
	mmfix_unload
	return 0
fi
hits() { awk -v e="$1" '$1 == e { print $2 }' $TR/kprobe_profile; }
hits_above() { [ "$(hits "$1")" -gt "$2" ]; }

# syncs_on_off SOURCE: synchronize_srcu() calls from switching SOURCE on
# alone and off again until mmfix's unhook work has run.
syncs_on_off() {
	local before unhooked
	echo 1 >$ST/$1/enabled || return 1
	sleep 1
	before=$(hits srcu)
	unhooked=$(hits unhooked)
	echo 0 >$ST/$1/enabled || return 1
	# returned: nothing of the source is registered any more
	loop_until 30 hits_above unhooked "$unhooked" || return 1
	echo $(( $(hits srcu) - before ))
}

n=$(syncs_on_off mmap_lock) || n=err
t_comment "mmap_lock off: $n synchronize_srcu() calls"
t_check stats-off-mmap-lock-waits-tracepoint-grace-period \
	test "$n" != err -a "$n" != 0
n=$(syncs_on_off lru_lock) || n=err
t_comment "lru_lock off: $n synchronize_srcu() calls"
t_check stats-off-lru-lock-waits-tracepoint-grace-period \
	test "$n" != err -a "$n" != 0

echo 0 >$TR/events/$G/enable
echo "-:$G/srcu" >>$TR/kprobe_events
echo "-:$G/unhooked" >>$TR/kprobe_events
mmfix_unload || t_fail stats-grace-period-unload "$MMFIX_ERR"
