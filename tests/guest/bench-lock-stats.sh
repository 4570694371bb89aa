# SPDX-License-Identifier: GPL-2.0
# bench-lock-stats.sh MODE: what lock statistics cost.  The populate churn
# (one and two threads) and an mmap/munmap + mincore loop, with
# /sys/kernel/mmfix/stats/enabled 0 vs 1 -- the default tier (hold_time
# 0, configs churn-t1 ...) and the hold tier (hold_time 1, configs
# churn-t1+hold ...; their "off" rows repeat the same off run) --
# interleaved repetitions in one boot (ci: small; full: docs figures).  Needs mmfix loaded; the fixes are
# left as they are (all off after load).  Prints TSV rows on stdout:
#   BENCH <metric>\t<config>\t<off|on>\t<rep>\t<value>
#   SUMMARY <metric>\t<config>\t<off median>\t<on median>\t<on/off>
#   PAIRS <metric>\t<config>\t<n>\t<median>\t<min>\t<max>  (on/off per rep)
# ops_per_s is timing (noisy under TCG: read the ratio, not the value);
# lru_per_op, mmap_{write,read}_per_op: acquisitions stats counted per op;
# mmap_contended_per_op: contended mmap_lock acquisitions (reads and
# writes) and lru_contended_per_op, contended lru_lock acquisitions,
# stats counted per op; ctxt_per_op: context switches in the
# whole guest per op (/proc/stat ctxt, also with stats off): a probe
# that lengthened the time under mmap_lock would make the threads of
# churn-t2 queue and sleep more often.
# With perf in the guest, also one `perf lock contention` run for
# comparison (PERF lines).

. /tests/lib-bench.sh

ST=/sys/kernel/mmfix/stats

case ${1:-ci} in
full)	reps=7; ops=20000; mops=10000 ;;
*)	reps=3; ops=3000; mops=1500 ;;
esac


# hold_wait_unhooked: wait until no _raw_spin_unlock* callback is left
hold_wait_unhooked() {
	local i=0
	while grep -qE '^_raw_spin_unlock(_irq|_irqrestore)? ' /sys/kernel/tracing/enabled_functions 2>/dev/null; do
		[ $i -lt 100 ] || return 1
		sleep 0.1
		i=$((i + 1))
	done
}

ctxt() { sed -n 's/^ctxt //p' /proc/stat; }
rate() { awk -v n="$1" -v ns="$2" 'BEGIN { printf "%.0f", n * 1e9 / ns }'; }
per_op() { awk -v c="$1" -v n="$2" 'BEGIN { printf "%.3f", c / n }'; }

# one CONFIG STATE REP: one timed run with stats STATE: off, on (default
# tier) or hold (hold tier, reported as CONFIG+hold on).
one() {
	local cfg=$1 st=$2 rep=$3 out ns n r c c0 c1
	echo "$([ "$st" = hold ] && echo 1 || echo 0)" >$ST/hold_time
	echo "$([ "$st" = off ] && echo 0 || echo 1)" >$ST/enabled
	# off: the probes go a second after switching off
	[ "$st" != off ] || stats_wait_unhooked
	# on: the unlock callbacks of an earlier hold run go a second later
	[ "$st" != on ] || hold_wait_unhooked
	# switching patches kernel text, which TCG then translates again:
	# warm up so that the timed run measures the steady state
	populate churn -n 300 >/dev/null
	mmapcontend -w 1 -r 0 -p 64 -n 300 >/dev/null
	echo 1 >$ST/reset
	c0=$(ctxt)
	case $cfg in
	churn-t1) n=$ops; out=$(populate churn -n "$ops") ;;
	churn-t2) n=$((2 * ops)); out=$(populate churn -n "$ops" -t 2) ;;
	mmap-t1) n=$mops; out=$(mmapcontend -w 1 -r 0 -p 64 -n "$mops") ;;
	esac || { echo "$cfg failed: $out" >&2; return 1; }
	c1=$(ctxt)
	ns=$(echo "$out" | sed -n 's/.*ns=\([0-9]*\).*/\1/p')
	r=$(rate "$n" "$ns")
	c=$(per_op $((c1 - c0)) "$n")
	case $st in
	off)	bench_row ops_per_s "$cfg" off "$rep" "$r"
		bench_row ops_per_s "$cfg+hold" off "$rep" "$r"
		bench_row ctxt_per_op "$cfg" off "$rep" "$c"
		bench_row ctxt_per_op "$cfg+hold" off "$rep" "$c" ;;
	on)	bench_row ops_per_s "$cfg" on "$rep" "$r"
		bench_row ctxt_per_op "$cfg" on "$rep" "$c" ;;
	hold)	bench_row ops_per_s "$cfg+hold" on "$rep" "$r"
		bench_row ctxt_per_op "$cfg+hold" on "$rep" "$c"
		bench_row holds_per_acq "$cfg+hold" on "$rep" "$(per_op \
			"$(cat $ST/lru_lock/holds)" "$(cat $ST/lru_lock/acquisitions)")" ;;
	esac
	if [ "$st" = on ]; then
		bench_row lru_per_op "$cfg" "$st" "$rep" \
			"$(per_op "$(cat $ST/lru_lock/acquisitions)" "$n")"
		bench_row mmap_write_per_op "$cfg" "$st" "$rep" \
			"$(per_op "$(cat $ST/mmap_lock/write/acquisitions)" "$n")"
		bench_row mmap_read_per_op "$cfg" "$st" "$rep" \
			"$(per_op "$(cat $ST/mmap_lock/read/acquisitions)" "$n")"
		bench_row mmap_contended_per_op "$cfg" "$st" "$rep" \
			"$(per_op $(($(cat $ST/mmap_lock/read/contended) + \
				$(cat $ST/mmap_lock/write/contended))) "$n")"
		bench_row lru_contended_per_op "$cfg" "$st" "$rep" \
			"$(per_op "$(cat $ST/lru_lock/contended)" "$n")"
	fi
}

rows=/tmp/bench-lock-stats.tsv
: >$rows
rep=1
while [ $rep -le $reps ]; do
	# alternate which state goes first, so drift hits both alike
	if [ $((rep % 2)) = 1 ]; then order="off on hold"; else order="hold on off"; fi
	for cfg in churn-t1 churn-t2 mmap-t1; do
		for st in $order; do one "$cfg" "$st" "$rep" | tee -a $rows; done
	done
	rep=$((rep + 1))
done
echo 0 >$ST/enabled
echo 0 >$ST/hold_time

bench_summary $rows
bench_pairs $rows

# perf lock contention, when the guest has perf, over a contended run,
# next to what mmfix counted over the same run.
if command -v perf >/dev/null; then
	echo 1 >$ST/enabled
	echo 1 >$ST/reset
	perf lock record -a -o /tmp/perf.data -- \
		mmapcontend -w 2 -r 2 -p 256 -n 500 >/tmp/perf-rec.out 2>&1
	rc=$?
	echo 0 >$ST/enabled
	echo "PERF record rc=$rc; mmfix over the same run: mmap_lock contended read $(cat $ST/mmap_lock/read/contended) write $(cat $ST/mmap_lock/write/contended), lru_lock contended $(cat $ST/lru_lock/contended)"
	sed 's/^/PERF record: /' /tmp/perf-rec.out | tail -n 5
	perf lock contention -i /tmp/perf.data -E 8 >/tmp/perf-lock.out 2>&1
	echo "PERF contention rc=$?"
	sed 's/^/PERF /' /tmp/perf-lock.out | head -n 20
	rm -f /tmp/perf.data
fi
