# SPDX-License-Identifier: GPL-2.0
# bench-anon-fault.sh MODE: pft-like anonymous faults (anonbench: threads
# faulting their own slice of one shared anonymous VMA, zapped with
# MADV_DONTNEED) with anon_fault off vs on, interleaved repetitions in one
# boot (ci: small; full: the figures in docs/fixes/anon-fault.md).  Needs
# mmfix loaded on a kernel where anon_fault applies.  TSV rows on stdout:
#   BENCH <metric>\t<config>\t<off|on>\t<rep>\t<value>
#   SUMMARY <metric>\t<config>\t<off median>\t<on median>\t<on/off>
# Metrics: faults_per_s (timing, noisy under TCG) and fast_per_fault
# (count: fast_index increase per benchmark fault over the timed part,
# read by anonbench itself: 1 with the fix on, 0 with it off).

. /tests/lib-bench.sh

AF=/sys/kernel/mmfix/fixes/anon_fault

case ${1:-ci} in
full)	reps=7; pages=1024; rounds=100; threads="1 2" ;;
*)	reps=3; pages=256; rounds=10; threads="1 2" ;;
esac


# one_run THREADS STATE REP: one anonbench run, two metrics.
one_run() {
	local t=$1 st=$2 rep=$3 out
	echo "$([ "$st" = on ] && echo 1 || echo 0)" >$AF/enabled
	out=$(anonbench -t "$t" -p "$pages" -r "$rounds") ||
		{ echo "anonbench failed: $out" >&2; return 1; }
	bench_row faults_per_s "anon-t$t" "$st" "$rep" \
		"$(echo "$out" | sed -n 's/.*faults_per_s=\([0-9]*\).*/\1/p')"
	bench_row fast_per_fault "anon-t$t" "$st" "$rep" \
		"$(echo "$out" | awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] } }
			END { printf "%.3f", v["fast"] / v["faults"] }')"
}

rows=/tmp/bench-anon-fault.tsv
: >$rows
rep=1
while [ $rep -le $reps ]; do
	# alternate which state goes first, so drift hits both alike
	if [ $((rep % 2)) = 1 ]; then order="off on"; else order="on off"; fi
	for t in $threads; do
		# no pipeline: nothing else may start while anonbench counts
		for st in $order; do
			row=$(one_run "$t" "$st" "$rep")
			echo "$row" | tee -a $rows
		done
	done
	rep=$((rep + 1))
done
echo 0 >$AF/enabled

bench_summary $rows
