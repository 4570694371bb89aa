# SPDX-License-Identifier: GPL-2.0
# bench-overhead.sh MODE: what the loaded patch costs with every switch
# off.  The same workloads with no module ("off") and with mmfix loaded,
# every fix and the lock statistics off ("on"), in one boot: mmfix is
# loaded before and unloaded after each "on" block, and the order of the
# two states alternates between repetitions (ci: small; full: the
# figures in docs/overhead.md).  Needs /lib/mmfix/mmfix.ko and no mmfix
# loaded.  Prints TSV rows on stdout:
#   BENCH <metric>\t<config>\t<off|on>\t<rep>\t<value>
#   SUMMARY <metric>\t<config>\t<off median>\t<on median>\t<on/off>
#   PAIRS <metric>\t<config>\t<n>\t<median>\t<min>\t<max>  (on/off per rep)
#   CALLS <config>\t<function>\t<calls per op>
#   COST <config>\t<instr/op off>\t<added/op>\t<redirected calls/op>\t<added/call>
# CALLS: after the timed runs, one more run of each config with no module
# and a kprobe on every function the patch redirects (read from
# /sys/kernel/livepatch/mmfix/vmlinux while loaded): how often each is
# called per op.  COST puts that next to the medians: guest nanoseconds
# per op with no module (instructions under --icount), how many more
# with mmfix loaded, and those per redirected call (- below half a call
# per op).
# Under --icount the guest time of the khugepaged config includes what
# khugepaged runs meanwhile, which is not a call of the writer's.
# Configs and what they go through:
#   churn-t1, churn-t2  1-page MAP_POPULATE + munmap, 1 and 2 threads:
#                       populate_vma_page_range(), folio_batch_move_lru(),
#                       free_pages_and_swap_cache() (patched on 6.x)
#   unmap-p64           64-page MAP_POPULATE + munmap: the same with
#                       64 folios per mmu_gather batch
#   anon-t1             anonbench, one thread: folio_add_new_anon_rmap()
#                       on every fault (patched on 7.3)
#   mmap-t1             mmap, write one page, munmap, mincore (1 thread)
#   khugepaged          thpscan: 20,000 small VMAs, a late 4 MiB
#                       MADV_HUGEPAGE region and one mmap/munmap writer
#                       while khugepaged scans every 10 ms (khugepaged()
#                       is patched everywhere); writer ops per second
# Metrics are ops per second of guest time: with tests/vm/boot --icount,
# instructions; otherwise wall clock (noisy under TCG).
# mmfixtest.fixes=LIST on the kernel command line loads mmfix with
# fixes=LIST (only those fixes patched) instead of every applicable fix.

. /tests/lib-bench.sh

THP=/sys/kernel/mm/transparent_hugepage

case ${1:-ci} in
full)	reps=5; ops=2000; anon_pages=512; anon_rounds=10; khd_ms=2000 ;;
*)	reps=3; ops=1000; anon_pages=256; anon_rounds=8; khd_ms=1000 ;;
esac
configs="churn-t1 churn-t2 unmap-p64 anon-t1 mmap-t1 khugepaged"

load_args=
fixes=$(cmdline_get fixes) && load_args=fixes=$fixes

field() { echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
rate() { awk -v n="$1" -v ns="$2" 'BEGIN { printf "%.0f", n * 1e9 / ns }'; }

# workload CONFIG [small]: run it once; prints "N NS" (operations and
# nanoseconds of guest time), or fails.
workload() {
	local cfg=$1 n=$ops out
	[ -z "${2:-}" ] || n=100
	case $cfg in
	churn-t1) out=$(populate churn -n "$n") && field ns "$out" | sed "s/^/$n /" ;;
	churn-t2) out=$(populate churn -n "$n" -t 2) &&
		field ns "$out" | sed "s/^/$((2 * n)) /" ;;
	unmap-p64) n=$((n / 8)); out=$(populate churn -n "$n" -p 64) &&
		field ns "$out" | sed "s/^/$n /" ;;
	anon-t1) out=$(anonbench -t 1 -p "$anon_pages" -r "$anon_rounds") &&
		echo "$(field faults "$out") $(field ns "$out")" ;;
	mmap-t1) out=$(mmapcontend -w 1 -r 0 -p 64 -n "$n") &&
		field ns "$out" | sed "s/^/$n /" ;;
	khugepaged)
		[ -z "${2:-}" ] || return 0
		out=$(thpscan -n 20000 -r 4 -w 1 -d "$khd_ms")
		[ $? -le 1 ] || return 1
		echo "$(field writer_ops "$out") $(($(field ms "$out") * 1000000))" ;;
	esac || { echo "bench-overhead: $cfg failed: $out" >&2; return 1; }
}

# block STATE REP: every config once, mmfix loaded for "on".
block() {
	local st=$1 rep=$2 cfg r
	if [ "$st" = on ]; then
		mmfix_load $load_args || { echo "bench-overhead: load: $MMFIX_ERR" >&2; return 1; }
		[ "$(cat $MMFIX_KLP/enabled)" = 1 ] || echo "# not patched" >&2
		# every switch off, as after a plain load
		grep -l 1 /sys/kernel/mmfix/fixes/*/enabled /sys/kernel/mmfix/stats/enabled \
			2>/dev/null | sed 's/^/# not off: /' >&2
	fi
	for cfg in $configs; do
		# loading patches kernel text, which TCG translates again:
		# time the steady state
		workload "$cfg" small >/dev/null || return 1
		r=$(workload "$cfg") || return 1
		bench_row ops_per_s "$cfg" "$st" "$rep" "$(rate $r)"
	done
	if [ "$st" = on ]; then
		mmfix_unload || { echo "bench-overhead: unload: $MMFIX_ERR" >&2; return 1; }
	fi
}

echo madvise >$THP/enabled
echo 10 >$THP/khugepaged/scan_sleep_millisecs
# One untimed pass of every workload first: the first block after boot
# ran up to 6x slower in guest time (7.3, CI size), whichever state it
# was in.
for cfg in $configs; do workload "$cfg" >/dev/null || exit 1; done
rows=/tmp/bench-overhead.tsv
: >$rows
rep=1
while [ $rep -le $reps ]; do
	# alternate which state goes first, so drift hits both alike
	if [ $((rep % 2)) = 1 ]; then order="off on"; else order="on off"; fi
	for st in $order; do block "$st" "$rep" | tee -a $rows; done
	rep=$((rep + 1))
done

summary=$(bench_summary $rows)
echo "$summary"
bench_pairs $rows

# calls_pass: CALLS rows, then COST rows from them and the medians.
calls_pass() {
	local tfs=/sys/kernel/tracing g=mmfix_ovh funcs='' placed='' f cfg r n before after ton
	mmfix_load $load_args || { echo "bench-overhead: load: $MMFIX_ERR" >&2; return 1; }
	# one directory FUNCTION,SYMPOS per redirected function
	for f in "$MMFIX_KLP"/vmlinux/*,*/; do
		f=${f%/}; f=${f##*/}; funcs="$funcs ${f%,*}"
	done
	mmfix_unload || { echo "bench-overhead: unload: $MMFIX_ERR" >&2; return 1; }
	for f in $funcs; do
		if echo "p:$g/$f $f" >>$tfs/kprobe_events 2>/dev/null; then
			placed="$placed $f"
		else
			echo "# calls: no kprobe on $f" >&2
		fi
	done
	[ -n "$placed" ] || return 0
	ton=$(cat $tfs/tracing_on)
	echo 0 >$tfs/tracing_on
	echo 1 >$tfs/events/$g/enable
	for cfg in $configs; do
		before=$(cat $tfs/kprobe_profile)
		r=$(workload "$cfg") || break
		after=$(cat $tfs/kprobe_profile)
		n=${r%% *}
		[ "$n" -gt 0 ] 2>/dev/null || continue
		for f in $placed; do
			printf '%s\n%s\n' "$before" "$after" | awk -v e="$f" -v n="$n" -v c="$cfg" '
				$1 == e { h[++k] = $2 }
				END { printf "CALLS %s\t%s\t%.3f\n", c, e, (h[2] - h[1]) / n }'
		done
	done
	echo 0 >$tfs/events/$g/enable
	for f in $placed; do echo "-:$g/$f" >>$tfs/kprobe_events; done
	echo "$ton" >$tfs/tracing_on
}
calls=/tmp/bench-overhead-calls.tsv
calls_pass | tee $calls
{ echo "$summary"; cat $calls; } | awk -F'\t' '
	/^SUMMARY ops_per_s/ { c = $2; off[c] = $3; on[c] = $4; cfgs[c] = 1 }
	/^CALLS / { sub(/^CALLS /, ""); calls[$1] += $3; seen[$1] = 1 }
	END {
		for (c in cfgs) {
			if (!(off[c] + 0) || !(on[c] + 0))
				continue
			base = 1e9 / off[c]; add = 1e9 / on[c] - base
			k = seen[c] ? sprintf("%.3f", calls[c]) : "-"
			# too few calls to divide what they add by
			pc = calls[c] >= 0.5 ? sprintf("%.0f", add / calls[c]) : "-"
			printf "COST %s\t%.0f\t%.0f\t%s\t%s\n", c, base, add, k, pc
		}
	}' | sort
