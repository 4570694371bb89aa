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
# fixes: populate_drain

. /tests/lib-reliability.sh

t_begin toggle-storm
rel_require toggle-storm || return 0
mmfix_require_ko toggle-storm || return 0
n=$(rel_size 1000 10000)
# The probes go a second after the stats switch stays off, so most writes
# only flip the switch: the writes come in bursts (2 in CI, 100 at full
# size), each ending off and followed by waiting for the probes to go, so
# that the next burst registers them again.  mmfixtest.stats_toggles=N
# (scripts/reliability --stats-toggles) sets another count; the report
# says how many were made.
n_stats=$(cmdline_get stats_toggles) || n_stats=$(rel_size 10 10000)
case $n_stats in
''|*[!0-9]*|0) t_fail toggle-storm-stats-toggles "mmfixtest.stats_toggles=$n_stats is not a positive count"; return 0 ;;
esac
stats_bursts=$(rel_size 2 100)
churn_ops=$(rel_size 400 4000)	# per thread, 2 threads
PD=$MMFIX_SYS/fixes/populate_drain

# stats_storm N BURSTS: N writes of stats/enabled in BURSTS bursts, each
# waited out until the probes are gone.  Prints the sums of the bursts'
# toggler lines and how many bursts ended with the probes gone.
stats_storm() {
	local left=$1 k=$(( ($1 + $2 - 1) / $2 )) rc=0 t=0 e=0 b=0 u=0 out v
	while [ "$left" -gt 0 ]; do
		[ "$k" -le "$left" ] || k=$left
		out=$(toggler -n "$k" -t 2 -f 0 "$MMFIX_SYS/stats/enabled" 2>&1) || rc=1
		echo "$out" >>"$REL_OUT/toggler-stats-bursts"
		v=$(echo "$out" | sed -n 's/^toggles=\([0-9]*\).*/\1/p')
		t=$((t + ${v:-0}))
		v=$(echo "$out" | sed -n 's/.* write_errors=\([0-9]*\).*/\1/p')
		e=$((e + ${v:-0}))
		b=$((b + 1))
		! stats_wait_unhooked 10 || u=$((u + 1))
		left=$((left - k))
	done
	echo "toggles=$t write_errors=$e bursts=$b unhooked=$u"
	return $rc
}

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
	stats_storm "$n_stats" "$stats_bursts" >"$REL_OUT/toggler-stats" 2>&1 &
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
	t_check toggle-storm-stats-probes-gone-after-every-burst \
		grep -qE ' bursts=([0-9]+) unhooked=\1$' "$REL_OUT/toggler-stats"
else
	t_skip toggle-storm-stats-switch-writes-accepted "no $MMFIX_SYS/stats/enabled"
	t_skip toggle-storm-stats-probes-gone-after-every-burst "no $MMFIX_SYS/stats/enabled"
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
	stats_bursts=$([ -n "$ts" ] && field bursts "$REL_OUT/toggler-stats" || echo 0) \
	stats_unhooked=$([ -n "$ts" ] && field unhooked "$REL_OUT/toggler-stats" || echo 0) \
	populates=$((churn_ops * 2)) populate_drain_counted=$((pd1 - pd0)) \
	churn_ok=$([ "$churn_rc" = 0 ] && echo yes || echo no) \
	workloads_ok=$([ "$wl_rc" = 0 ] && echo yes || echo no) $(rel_workloads_summary)
