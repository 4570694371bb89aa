# SPDX-License-Identifier: GPL-2.0
# The anon_fault A/B benchmark (CI size unless mmfixtest.bench=full): runs
# end to end where the fix applies (7.3), and its counted metric is exact
# (every benchmark fault takes the fast index with the fix on, none with
# it off).  Timings are reported, never asserted.
# fixes: anon_fault
mmfix_require_ko anon-fault-bench || return 0
mode=$(cmdline_get bench || echo ci)
# an earlier test that failed may have left mmfix loaded
mmfix_loaded && ! mmfix_unload && t_comment "anon-fault-bench: could not unload a leftover mmfix: $MMFIX_ERR"
mmfix_load || { t_fail anon-fault-bench-load "$MMFIX_ERR"; return 0; }
if [ "$(cat /sys/kernel/mmfix/fixes/anon_fault/applicable)" != 1 ]; then
	t_skip anon-fault-bench "anon_fault does not apply to $SERIES"
else
	out=$(sh -c '. /tests/lib.sh; . /tests/bench-anon-fault.sh "$0"' "$mode")
	echo "$out"
	sum() { echo "$out" | awk -F'\t' -v m="$1" -v c="$2" '$1 == "SUMMARY " m && $2 == c { print $3 " " $4 }'; }
	t_check anon-fault-bench-t1-every-fault-fast-only-when-on \
		test "$(sum fast_per_fault anon-t1)" = "0.000 1.000"
	t_check anon-fault-bench-t2-every-fault-fast-only-when-on \
		test "$(sum fast_per_fault anon-t2)" = "0.000 1.000"
	printf '%s\n' "$out" >/tmp/bench.out
	t_check anon-fault-bench-reports-faults-ratio \
		summary_ratios_ok faults_per_s anon-t1 anon-t2 </tmp/bench.out
fi
mmfix_unload || t_fail anon-fault-bench-unload "$MMFIX_ERR"
