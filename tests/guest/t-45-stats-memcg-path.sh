# SPDX-License-Identifier: GPL-2.0
# 6.x: the mmap_lock statistics do not make the kernel format a memcg
# path for every mmap_lock event (issue #34), and a tracer on the same
# tracepoint still gets its paths.  On 6.1 and 6.12, mm/mmap_lock.c
# formats the task's memcg path (cgroup_path(), which is
# kernfs_path_from_node()) before calling the probes of any mmap_lock
# tracepoint while one of them has a probe; mmfix's probes never read
# it.  Counted independently of mmfix with a tracefs kprobe on
# kernfs_path_from_node() over populate churn (four mmap_lock events per
# op with the default tier, eight with hold times): with statistics on
# and no other tracer, well under one format per 10 ops (before the fix:
# one per event).  With the tracefs event mmap_lock_acquire_returned
# enabled beside mmfix's probe, its records carry a path ("/" here), in
# either order of switching, and once both are off the event alone
# still does (the kernel's count of registered tracepoints is back
# where it was).
ST=/sys/kernel/mmfix/stats
TR=/sys/kernel/tracing
EV=$TR/events/mmap_lock/mmap_lock_acquire_returned
G=mmfix_t45
OPS=400

t_begin stats-memcg-path
mmfix_require_ko stats-memcg-path || return 0
mmfix_unload
if ! mmfix_load; then
	t_fail stats-memcg-path-load "$MMFIX_ERR"
	return 0
fi
if ! echo "p:$G/path kernfs_path_from_node" >>$TR/kprobe_events ||
   ! echo 1 >$TR/events/$G/enable; then
	t_fail stats-memcg-path-probe "cannot place a kprobe on kernfs_path_from_node"
	mmfix_unload
	return 0
fi
mark=$(kmsg_mark stats-memcg-path)

hits() { awk -v e="path" '$1 == e { print $2 }' $TR/kprobe_profile; }
# formats: memcg paths formatted during one churn of $OPS ops
formats() {
	local h0
	h0=$(hits)
	populate churn -n $OPS >/dev/null || { echo churn-failed; return; }
	echo $(($(hits) - h0))
}
# traced_paths: the memcg_path of the records the tracefs event gets
# over a few ops, as "N records, M with a path"
traced_paths() {
	local n p
	echo >$TR/trace
	populate churn -n 20 >/dev/null
	# one read: reading it makes more records
	grep 'mmap_lock_acquire_returned:' $TR/trace >/tmp/t45.trace
	n=$(grep -c . /tmp/t45.trace)
	p=$(grep -c 'memcg_path=[^ ]' /tmp/t45.trace)
	echo "$n $p"
}
# traced_ok "N M": records were seen and every one had a path
traced_ok() { set -- $1; [ "$1" -gt 0 ] && [ "$1" = "$2" ]; }

base=$(formats)
echo 1 >$ST/mmap_lock/enabled
on=$(formats)
echo 1 >$ST/hold_time
hold=$(formats)
echo 0 >$ST/hold_time
t_comment "memcg paths per $OPS churn ops: $base stats off, $on default tier, $hold hold times"
t_check stats-memcg-path-not-formatted-for-mmfix-alone \
	test "$on" -le $((base + OPS / 10)) ||
	echo "$on formats with statistics on, $base off"
t_check stats-memcg-path-not-formatted-with-hold-times \
	test "$hold" -le $((base + OPS / 10)) ||
	echo "$hold formats with hold times, $base off"

# stats on, then the tracer
echo 1 >$EV/enable
tp=$(traced_paths)
with=$(formats)
t_check stats-memcg-path-tracer-after-stats-gets-paths traced_ok "$tp" ||
	echo "records, with a path: $tp"
t_check stats-memcg-path-formatted-for-the-tracer test "$with" -ge "$OPS" ||
	echo "$with formats over $OPS ops with the tracer on"
# stats off under the tracer, on again, off
echo 0 >$ST/mmap_lock/enabled
tp=$(traced_paths)
t_check stats-memcg-path-tracer-keeps-paths-after-stats-off traced_ok "$tp" ||
	echo "records, with a path: $tp"
echo 1 >$ST/mmap_lock/enabled
echo 1 >$ST/hold_time
tp=$(traced_paths)
t_check stats-memcg-path-tracer-before-stats-gets-paths traced_ok "$tp" ||
	echo "records, with a path: $tp"
echo 0 >$EV/enable
after=$(formats)
t_check stats-memcg-path-not-formatted-after-tracer-left \
	test "$after" -le $((base + OPS / 10)) ||
	echo "$after formats after the tracer left (hold times on)"
echo 0 >$ST/hold_time
echo 0 >$ST/mmap_lock/enabled
stats_wait_unhooked 10
# the tracer alone: the kernel's count is back where it was
echo 1 >$EV/enable
tp=$(traced_paths)
echo 0 >$EV/enable
t_check stats-memcg-path-tracer-alone-gets-paths-after-all traced_ok "$tp" ||
	echo "records, with a path: $tp"

echo 0 >$TR/events/$G/enable
echo "-:$G/path" >>$TR/kprobe_events
mmfix_unload || t_fail stats-memcg-path-unload "$MMFIX_ERR"
t_check stats-memcg-path-kernel-log-clean dmesg_clean_since "$mark"
