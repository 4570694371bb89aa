# SPDX-License-Identifier: GPL-2.0
# bench-populate.sh MODE: populate churn with populate_drain off vs on,
# interleaved repetitions in one boot (ci: small; full: docs figures).
# Needs mmfix loaded.  Prints TSV rows on stdout:
#   BENCH <metric>\t<config>\t<off|on>\t<rep>\t<value>
#   SUMMARY <metric>\t<config>\t<off median>\t<on median>\t<on/off>
# Metrics: ops_per_s (timing, noisy under TCG), drains_per_op (count),
# and stress-ng --mremap bogo_ops_per_s when stress-ng is present.
# Where unmap_drain and lru_add_free_dead apply (6.1, 6.12) also
# lru_locks_per_op, lruvec lock acquisitions per single-thread churn op
# counted with kprobes (lib-lru.sh): "off" is every switch off, "on" the
# config's switches on: pd (populate_drain), pd+ud (and unmap_drain),
# pd+ld (and lru_add_free_dead), pd+ud+ld.

. /tests/lib-bench.sh
. /tests/lib-lru.sh

PD=/sys/kernel/mmfix/fixes/populate_drain
UD=/sys/kernel/mmfix/fixes/unmap_drain
LD=/sys/kernel/mmfix/fixes/lru_add_free_dead

case ${1:-ci} in
full)	reps=7; ops=20000; threads="1 2"; sng_time=10 ;;
*)	reps=3; ops=2000; threads="1 2"; sng_time=2 ;;
esac


# one_churn THREADS STATE REP: one run, three metrics.
one_churn() {
	local t=$1 st=$2 rep=$3 d0 d1 out ns n
	echo "$([ "$st" = on ] && echo 1 || echo 0)" >$PD/enabled
	d0=$(cat $PD/drained)
	out=$(populate churn -n "$ops" -t "$t") || { echo "churn failed: $out" >&2; return 1; }
	d1=$(cat $PD/drained)
	ns=$(echo "$out" | sed -n 's/.*ns=\([0-9]*\).*/\1/p')
	n=$((ops * t))
	bench_row ops_per_s "churn-t$t" "$st" "$rep" "$(awk -v n=$n -v ns=$ns 'BEGIN { printf "%.0f", n * 1e9 / ns }')"
	bench_row drains_per_op "churn-t$t" "$st" "$rep" "$(awk -v d=$((d1 - d0)) -v n=$n 'BEGIN { printf "%.3f", d / n }')"
}

one_stress_ng() {
	local st=$1 rep=$2 v
	echo "$([ "$st" = on ] && echo 1 || echo 0)" >$PD/enabled
	v=$(stress-ng --mremap 2 --timeout "${sng_time}s" --metrics-brief 2>&1 |
		awk '$0 ~ /mremap/ && $NF ~ /^[0-9.]+$/ { v = $(NF - 1) } END { print v }')
	[ -n "$v" ] && bench_row bogo_ops_per_s stress-ng-mremap "$st" "$rep" "$v"
}

# set_switches PD UD LD (0/1 each)
set_switches() {
	echo "$1" >$PD/enabled
	echo "$2" >$UD/enabled
	echo "$3" >$LD/enabled
}

# one_locks CONFIG STATE REP: lruvec lock acquisitions per op of a
# single-thread churn on CPU 0, CONFIG's switches on (STATE on) or all
# off.
one_locks() {
	local cfg=$1 st=$2 rep=$3 p=0 u=0 l=0
	if [ "$st" = on ]; then
		p=1
		case $cfg in *ud*) u=1 ;; esac
		case $cfg in *ld*) l=1 ;; esac
	fi
	set_switches $p $u $l
	# (probes only around this run: they would slow the timed ones)
	lru_probe_start || { echo "lru probes: $LRU_PROBE_ERR" >&2; return 1; }
	lru_count_run taskset 1 populate churn -n "$ops" ||
		{ lru_probe_stop; echo "churn failed: $LRU_OUT" >&2; return 1; }
	lru_probe_stop
	bench_row lru_locks_per_op "churn-t1-$cfg" "$st" "$rep" "$(lru_per_op "$LRU_LOCKS" "$ops")"
}

split_fixes=0
[ "$(cat $UD/applicable 2>/dev/null)" = 1 ] &&
	[ "$(cat $LD/applicable 2>/dev/null)" = 1 ] && split_fixes=1

rows=/tmp/bench-populate.tsv
: >$rows
rep=1
while [ $rep -le $reps ]; do
	# alternate which state goes first, so drift hits both alike
	if [ $((rep % 2)) = 1 ]; then order="off on"; else order="on off"; fi
	for t in $threads; do
		for st in $order; do one_churn "$t" "$st" "$rep" | tee -a $rows; done
	done
	if command -v stress-ng >/dev/null; then
		for st in $order; do one_stress_ng "$st" "$rep" | tee -a $rows; done
	fi
	if [ $split_fixes = 1 ]; then
		for cfg in pd pd+ud pd+ld pd+ud+ld; do
			for st in $order; do one_locks "$cfg" "$st" "$rep" | tee -a $rows; done
		done
	fi
	rep=$((rep + 1))
done
[ $split_fixes = 0 ] || set_switches 0 0 0
echo 0 >$PD/enabled

bench_summary $rows
