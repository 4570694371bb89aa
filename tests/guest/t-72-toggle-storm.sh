# SPDX-License-Identifier: GPL-2.0
# Toggle storm: two threads (toggler) flip every applicable fix's switch
# N times (1,000 in CI, 10,000 with mmfixtest.soak=full) and the lock
# stats switch M times (10, 10,000), while the anonymous fault and
# khugepaged workloads run and a populate churn of a known size runs
# alongside.  Every write is
# accepted, every read back is 0 or 1, no counter ever goes down, and
# populate_drain counts every populate of the churn exactly once
# (drained + skipped = populates).  Then the module unloads cleanly and
# the kernel log is clean.  Sourced by /init after lib.sh.

. /tests/lib-reliability.sh

t_begin toggle-storm
rel_require toggle-storm || return 0
mmfix_require_ko toggle-storm || return 0
n=$(rel_size 1000 10000)
# Each stats write that changes the state registers or unregisters every
# probe (unregistering ftrace callbacks waits for RCU-tasks grace
# periods): 0.3 to 1 s under TCG, so the full size takes one to three
# hours.  mmfixtest.stats_toggles=N (scripts/reliability --stats-toggles)
# sets another count; the report says how many were made.
n_stats=$(cmdline_get stats_toggles) || n_stats=$(rel_size 10 10000)
case $n_stats in
''|*[!0-9]*|0) t_fail toggle-storm-stats-toggles "mmfixtest.stats_toggles=$n_stats is not a positive count"; return 0 ;;
esac
churn_ops=$(rel_size 400 4000)	# per thread, 2 threads
PD=$MMFIX_SYS/fixes/populate_drain

if ! mmfix_load; then
	t_fail toggle-storm-load "$MMFIX_ERR"
	return 0
fi
fix_switches=$(for f in $(rel_applicable_fixes); do echo "$MMFIX_SYS/fixes/$f/enabled"; done)
counters=$(rel_monotonic_counters)
cargs=$(for c in $counters; do printf -- '-c %s ' "$c"; done)
t_comment "toggle storm: $n toggles of $(echo $fix_switches | wc -w) fix switches, $n_stats of stats/enabled, $(echo $counters | wc -w) counters watched"

mark=$(kmsg_mark storm)
# the measured churn below is the only MAP_POPULATE user: no populate
# workload here
rel_workloads_start faults khugepaged

pd0=$(( $(cat $PD/drained) + $(cat $PD/skipped) ))
# shellcheck disable=SC2086
toggler -n "$n" -t 2 -f 0 $cargs $fix_switches >"$REL_OUT/toggler" 2>&1 &
tg=$!
if [ -f "$MMFIX_SYS/stats/enabled" ]; then
	toggler -n "$n_stats" -t 2 -f 0 "$MMFIX_SYS/stats/enabled" >"$REL_OUT/toggler-stats" 2>&1 &
	ts=$!
else
	ts=
fi
churn=$(populate churn -n "$churn_ops" -t 2 2>&1); churn_rc=$?
wait $tg; tg_rc=$?
[ -z "$ts" ] || { wait $ts; ts_rc=$?; }
pd1=$(( $(cat $PD/drained) + $(cat $PD/skipped) ))
rel_workloads_stop; wl_rc=$?

cat "$REL_OUT/toggler"
[ -z "$ts" ] || cat "$REL_OUT/toggler-stats"
echo "churn: $churn; populate_drain drained+skipped delta $((pd1 - pd0))"

t_check toggle-storm-fix-switch-writes-accepted-reads-0-or-1 test "$tg_rc" = 0
if [ -n "$ts" ]; then
	t_check toggle-storm-stats-switch-writes-accepted test "$ts_rc" = 0
else
	t_skip toggle-storm-stats-switch-writes-accepted "no $MMFIX_SYS/stats/enabled"
fi
t_check toggle-storm-counters-never-go-down \
	grep -q ' decreases=0$' "$REL_OUT/toggler"
t_check toggle-storm-churn-data-intact test "$churn_rc" = 0
t_check toggle-storm-populate-drain-counts-every-populate-once \
	test "$((pd1 - pd0))" = "$((churn_ops * 2))"
if [ "$wl_rc" = 0 ]; then
	t_pass toggle-storm-workloads-data-intact
else
	t_fail toggle-storm-workloads-data-intact "$REL_ERR"
fi
t_check toggle-storm-switches-end-off sh -c \
	"for s in $(echo $fix_switches); do [ \"\$(cat \$s)\" = 0 ] || exit 1; done"

if mmfix_unload; then
	t_pass toggle-storm-unload
else
	t_fail toggle-storm-unload "$MMFIX_ERR"
fi
dmesg_clean_since "$mark" && t_pass toggle-storm-kernel-log-clean ||
	t_fail toggle-storm-kernel-log-clean "see .out"

field() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" "$2"; }
rel_report toggle-storm mode=$REL_MODE toggles_per_switch=$n \
	switches=$(echo $fix_switches | wc -w) \
	toggles=$(sed -n 's/^toggles=\([0-9]*\).*/\1/p' "$REL_OUT/toggler") \
	write_errors=$(field write_errors "$REL_OUT/toggler") \
	bad_reads=$(field bad_reads "$REL_OUT/toggler") \
	counter_reads=$(field counter_reads "$REL_OUT/toggler") \
	counter_decreases=$(field decreases "$REL_OUT/toggler") \
	stats_toggles=$([ -n "$ts" ] && sed -n 's/^toggles=\([0-9]*\).*/\1/p' "$REL_OUT/toggler-stats" || echo 0) \
	stats_write_errors=$([ -n "$ts" ] && field write_errors "$REL_OUT/toggler-stats" || echo 0) \
	populates=$((churn_ops * 2)) populate_drain_counted=$((pd1 - pd0)) \
	churn_ok=$([ "$churn_rc" = 0 ] && echo yes || echo no) \
	workloads_ok=$([ "$wl_rc" = 0 ] && echo yes || echo no) $(rel_workloads_summary)
