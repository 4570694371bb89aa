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
#   FIXFUNCS <fix> <function>...   (what loading only <fix> redirects)
#   FIXCOST <fix>\t<added/op>\t<its calls/op>\t<added/call>\t<functions>
#   REDIRECT <added ns/call>\t<min>\t<max>\t<n>  (one redirect, see below)
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
# FIXCOST: churn-t1 again, with mmfix loaded with fixes=FIX for each fix
# it patches (config churn-t1:FIX, BENCH and PAIRS rows): what each
# fix's redirects add per op and per call (ci: one pair per fix).
# mmfixtest.fixes=LIST on the kernel command line loads mmfix with
# fixes=LIST (only those fixes patched) instead of every applicable fix.

. /tests/lib-bench.sh

THP=/sys/kernel/mm/transparent_hugepage

case ${1:-ci} in
full)	reps=5; ops=2000; anon_pages=512; anon_rounds=10; khd_ms=2000; fix_reps=5; redirect_calls=100000 ;;
*)	reps=3; ops=1000; anon_pages=256; anon_rounds=8; khd_ms=1000; fix_reps=1; redirect_calls=20000 ;;
esac
configs="churn-t1 churn-t2 unmap-p64 anon-t1 mmap-t1 khugepaged"

load_args=
fixes=$(cmdline_get fixes) && load_args=fixes=$fixes

field() { echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
rate() { awk -v n="$1" -v ns="$2" 'BEGIN { printf "%.0f", n * 1e9 / ns }'; }
# load [ARGS]: mmfix loaded with ARGS; unload: gone again (or fail, saying why)
load() { mmfix_load "$@" || { echo "bench-overhead: load $*: $MMFIX_ERR" >&2; return 1; }; }
unload() { mmfix_unload || { echo "bench-overhead: unload: $MMFIX_ERR" >&2; return 1; }; }
# order REP: the two states in repetition REP's order, alternating so
# that drift hits both alike
order() { if [ $(($1 % 2)) = 1 ]; then echo "off on"; else echo "on off"; fi; }

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
		load $load_args || return 1
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
		unload || return 1
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
	for st in $(order $rep); do block "$st" "$rep" | tee -a $rows; done
	rep=$((rep + 1))
done

summary=$(bench_summary $rows)
echo "$summary"
bench_pairs $rows

# calls_pass: CALLS rows, then COST rows from them and the medians.
calls_pass() {
	local tfs=/sys/kernel/tracing g=mmfix_ovh funcs='' placed='' f cfg r n before after ton
	load $load_args || return 1
	# one directory FUNCTION,SYMPOS per redirected function
	for f in "$MMFIX_KLP"/vmlinux/*,*/; do
		f=${f%/}; f=${f##*/}; funcs="$funcs ${f%,*}"
	done
	unload || return 1
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

# fix_pass: where the loaded patch's instructions go, fix by fix.  For
# each fix the patch carries, churn-t1 with no module and with mmfix
# loaded with fixes=FIX only (its functions the only ones redirected),
# interleaved as above, as config churn-t1:FIX (BENCH rows, then
# PAIRS).  FIXFUNCS FIX FUNCTION... names what each redirects.  Only
# for a load of every fix (not with mmfixtest.fixes=).
fix_pass() {
	local fixes='' fix f funcs rep st r
	[ -z "$load_args" ] || return 0
	load || return 1
	for f in /sys/kernel/mmfix/fixes/*/patched; do
		[ "$(cat "$f")" = 1 ] || continue
		f=${f%/patched}; fixes="$fixes ${f##*/}"
	done
	unload || return 1
	for fix in $fixes; do
		load fixes="$fix" || return 1
		funcs=
		for f in "$MMFIX_KLP"/vmlinux/*,*/; do
			f=${f%/}; f=${f##*/}; funcs="$funcs ${f%,*}"
		done
		unload || return 1
		echo "FIXFUNCS $fix$funcs"
	done
	rep=1
	while [ $rep -le $fix_reps ]; do
		for fix in $fixes; do
			for st in $(order $rep); do
				if [ "$st" = on ]; then
					load fixes="$fix" || return 1
				fi
				workload churn-t1 small >/dev/null || return 1
				r=$(workload churn-t1) || return 1
				bench_row ops_per_s "churn-t1:$fix" "$st" "$rep" "$(rate $r)"
				if [ "$st" = on ]; then
					unload || return 1
				fi
			done
		done
		rep=$((rep + 1))
	done
}
# redirect_pass: the price of one redirect, apart from any workload:
# `redirect` makes calls of populate_vma_page_range() that return at
# once, the kernel's and mmfix's alike, with no module and with only
# populate_drain patched (BENCH ns_per_call rows, config redirect), then
# REDIRECT <added ns per call>: the median of the per-repetition
# differences.
redirect_pass() {
	local rep st out
	[ -z "$load_args" ] || return 0
	[ ! -d /sys/kernel/mmfix ] || { echo "bench-overhead: mmfix is loaded" >&2; return 1; }
	rep=1
	while [ $rep -le $fix_reps ]; do
		for st in $(order $rep); do
			if [ "$st" = on ]; then
				load fixes=populate_drain || return 1
			fi
			redirect -n 1000 >/dev/null &&
				out=$(redirect -n "$redirect_calls") ||
				{ echo "bench-overhead: redirect failed" >&2; return 1; }
			bench_row ns_per_call redirect "$st" "$rep" \
				"$(awk -v n="$(field calls "$out")" -v ns="$(field ns "$out")" 'BEGIN { printf "%.1f", ns / n }')"
			if [ "$st" = on ]; then
				unload || return 1
			fi
		done
		rep=$((rep + 1))
	done
}
fixrows=/tmp/bench-overhead-fixes.tsv
{ fix_pass; redirect_pass; } | tee $fixrows
bench_pairs $fixrows
sed -n 's/^BENCH ns_per_call\tredirect\t//p' $fixrows | awk -F'\t' '
	{ v[$1, $2] = $3; reps[$2] = 1 }
	END {
		for (r in reps)
			if (v["off", r] != "" && v["on", r] != "")
				d[++k] = v["on", r] - v["off", r]
		if (!k)
			exit
		for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++)
			if (d[j] < d[i]) { t = d[i]; d[i] = d[j]; d[j] = t }
		printf "REDIRECT %.1f\t%.1f\t%.1f\t%d\n", \
			k % 2 ? d[(k + 1) / 2] : (d[k / 2] + d[k / 2 + 1]) / 2, d[1], d[k], k
	}'
# FIXCOST FIX: guest ns (instructions) per churn-t1 op that loading
# only FIX adds (median of the per-repetition differences), its
# functions' redirected calls per op (CALLS rows) and the added ns per
# call (- below half a call per op).
{ cat $calls; sed -n 's/^FIXFUNCS //p;s/^BENCH //p' $fixrows; } | awk -F'\t' '
	/^CALLS churn-t1\t/ { calls[$2] = $3; next }
	NF == 1 { n = split($1, w, " "); fixes[w[1]] = 1
		for (i = 2; i <= n; i++) fn[w[1]] = fn[w[1]] " " w[i]; next }
	$1 == "ops_per_s" { split($2, c, ":"); v[c[2], $3, $4] = $5; reps[$4] = 1 }
	END {
		for (f in fixes) {
			k = 0
			for (r in reps)
				if (v[f, "off", r] + 0 && v[f, "on", r] + 0)
					d[++k] = 1e9 / v[f, "on", r] - 1e9 / v[f, "off", r]
			if (!k)
				continue
			for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++)
				if (d[j] < d[i]) { t = d[i]; d[i] = d[j]; d[j] = t }
			med = k % 2 ? d[(k + 1) / 2] : (d[k / 2] + d[k / 2 + 1]) / 2
			n = split(fn[f], w, " "); cs = 0
			for (i = 1; i <= n; i++) cs += calls[w[i]]
			pc = cs >= 0.5 ? sprintf("%.0f", med / cs) : "-"
			printf "FIXCOST %s\t%.0f\t%.3f\t%s\t%s\n", f, med, cs, pc, substr(fn[f], 2)
		}
	}' | sort

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
