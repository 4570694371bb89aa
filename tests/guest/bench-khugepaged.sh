# SPDX-License-Identifier: GPL-2.0
# bench-khugepaged.sh MODE: khugepaged_scan off vs on, one boot.  ci: the
# hold and collapse workloads at one size, one repetition; full: the docs
# figures; heavy-full: the hold and collapse workloads at 200k VMAs
# alone, 3 repetitions (the seed's regime at full size, without the
# 100k size and the light regime); light-ci, light-full: the light regime alone (t-58),
# 100k VMAs 3 repetitions, or 200k VMAs 5 repetitions.  Loads mmfix for
# every run of the hold and collapse workloads (a fresh load starts the
# max counters at 0) and unloads it after; the light regime switches the
# fix in one load.
# Prints TSV rows on stdout:
#   BENCH <metric>\t<config>\t<off|on>\t<rep>\t<value>
#   SUMMARY <metric>\t<config>\t<off median>\t<on median>\t<on/off>
# Configs, for each count N of one-page VMAs in front of the late region:
#   hold-N      one writer pinned with khugepaged to CPU 0, sleeping 200 us
#               between mmap/munmap pairs: hold_max_vmas, wait_max_vmas
#               (VMAs walked while that writer waited), hold_max_us;
#   collapse-N  two busy writers, 16 MiB late region: full_scans and ms
#               until it is all THPs, collapsed (0 if not within LIMIT s);
#   light-N     the lighter regime of issue #34: two busy writers, a 4 MiB
#               late region, alloc_sleep_millisecs 10 too, where the
#               kernel's walk wins a trylock often enough to cross N
#               VMAs in one hold: full_scans, ms, collapsed, wins (read-
#               lock holds begun by a winning trylock), fix switched
#               off/on in one load, 3 (light-ci) or 5 repetitions;
#   bound-N     first, in that load (max counters at 0), one light run
#               with the fix on and pages_to_scan 512 (a batch of 128,
#               so that crossing N VMAs would need more than the 5
#               doublings the batch may grow by): batch, wait_max_vmas,
#               hold_max_vmas, retake_failed.
# Counts are exact; ms and us are timings (noisy under TCG).

. /tests/lib-bench.sh

KS=/sys/kernel/mmfix/fixes/khugepaged_scan
THP=/sys/kernel/mm/transparent_hugepage

light=
case ${1:-ci} in
full)		sizes="100000 200000"; reps=3; limit=90 ;;
heavy-full)	sizes="200000"; reps=3; limit=90 ;;
light-full)	sizes=; reps=0; limit=90; light=200000; light_reps=5 ;;
light-ci)	sizes=; reps=0; limit=25; light=100000; light_reps=3 ;;
*)		sizes="100000"; reps=1; limit=25 ;;
esac

field() { echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
kpid() { ps | awk '$NF == "[khugepaged]" { print $1 }'; }

# one_run N STATE REP: load mmfix with the fix STATE, both workloads, unload.
one_run() {
	local n=$1 st=$2 rep=$3 out
	if [ "$st" = on ]; then
		mmfix_load enable=khugepaged_scan
	else
		mmfix_load
	fi || { echo "bench: load failed: $MMFIX_ERR" >&2; return 1; }
	taskset -p 1 "$(kpid)" >/dev/null
	out=$(thpscan -n "$n" -r 4 -w 1 -s 200 -p 0 -t "$limit")
	echo "# hold-$n $st: $out" >&2
	bench_row hold_max_vmas "hold-$n" "$st" "$rep" "$(cat $KS/hold_max_vmas)"
	bench_row wait_max_vmas "hold-$n" "$st" "$rep" "$(cat $KS/wait_max_vmas)"
	bench_row hold_max_us "hold-$n" "$st" "$rep" "$(( $(cat $KS/hold_max_ns) / 1000 ))"
	taskset -p 3 "$(kpid)" >/dev/null
	out=$(thpscan -n "$n" -r 16 -w 2 -t "$limit")
	echo "# collapse-$n $st: $out" >&2
	bench_row full_scans "collapse-$n" "$st" "$rep" "$(field full_scans "$out")"
	bench_row ms "collapse-$n" "$st" "$rep" "$(field ms "$out")"
	bench_row collapsed "collapse-$n" "$st" "$rep" "$(field collapsed "$out")"
	mmfix_unload || { echo "bench: unload failed: $MMFIX_ERR" >&2; return 1; }
}

# wins: read-lock holds begun by a winning trylock so far, off or on: all
# holds less those begun by a retake that won (lock_drops - retake_failed).
wins() {
	echo $(( $(cat $KS/holds) - $(cat $KS/lock_drops) + $(cat $KS/retake_failed) ))
}

# light_runs N REPS: the light regime, one load, the fix switched
# off/on, order alternating.
light_runs() {
	local n=$1 reps=$2 rep=1 st order out alloc pages before
	alloc=$(cat $THP/khugepaged/alloc_sleep_millisecs)
	pages=$(cat $THP/khugepaged/pages_to_scan)
	mmfix_load enable=khugepaged_scan ||
		{ echo "bench: load failed: $MMFIX_ERR" >&2; return 1; }
	echo 10 >$THP/khugepaged/alloc_sleep_millisecs
	echo 512 >$THP/khugepaged/pages_to_scan
	out=$(thpscan -n "$n" -r 4 -w 2 -t "$limit")
	echo "$pages" >$THP/khugepaged/pages_to_scan
	echo "# bound-$n on: $out" >&2
	bench_row batch "bound-$n" on 1 128
	bench_row wait_max_vmas "bound-$n" on 1 "$(cat $KS/wait_max_vmas)"
	bench_row hold_max_vmas "bound-$n" on 1 "$(cat $KS/hold_max_vmas)"
	bench_row retake_failed "bound-$n" on 1 "$(cat $KS/retake_failed)"
	while [ $rep -le "$reps" ]; do
		if [ $((rep % 2)) = 1 ]; then order="off on"; else order="on off"; fi
		for st in $order; do
			if [ "$st" = on ]; then echo 1 >$KS/enabled; else echo 0 >$KS/enabled; fi
			before=$(wins)
			out=$(thpscan -n "$n" -r 4 -w 2 -t "$limit")
			echo "# light-$n $st: $out retake_failed=$(cat $KS/retake_failed)" >&2
			bench_row wins "light-$n" "$st" "$rep" "$(( $(wins) - before ))"
			bench_row full_scans "light-$n" "$st" "$rep" "$(field full_scans "$out")"
			bench_row ms "light-$n" "$st" "$rep" "$(field ms "$out")"
			bench_row collapsed "light-$n" "$st" "$rep" "$(field collapsed "$out")"
		done
		rep=$((rep + 1))
	done
	echo 0 >$KS/enabled
	echo "$alloc" >$THP/khugepaged/alloc_sleep_millisecs
	mmfix_unload || { echo "bench: unload failed: $MMFIX_ERR" >&2; return 1; }
}

rows=/tmp/bench-khugepaged.tsv
: >$rows
echo madvise >$THP/enabled
echo 10 >$THP/khugepaged/scan_sleep_millisecs
rep=1
while [ $rep -le $reps ]; do
	# alternate which state goes first, so drift hits both alike
	if [ $((rep % 2)) = 1 ]; then order="off on"; else order="on off"; fi
	for n in $sizes; do
		for st in $order; do one_run "$n" "$st" "$rep" | tee -a $rows; done
	done
	rep=$((rep + 1))
done
[ -z "$light" ] || light_runs "$light" "$light_reps" | tee -a $rows

bench_summary $rows
bench_pairs $rows
