# SPDX-License-Identifier: GPL-2.0
# What lock statistics cost (CI size unless mmfixtest.bench=full): the
# churn and mmap loops with stats off vs on run end to end, and what the
# stats counted per op is exact (two lru_lock acquisitions per populate
# churn op with every fix off; two mmap_lock writes per mmap loop op, mmap
# and munmap, plus what starting the program takes).  The on/off timing
# ratio of each tier (CONFIG: default, CONFIG+hold: hold_time 1) is
# reported, never asserted.
mmfix_require_ko lock-stats-bench || return 0
mode=$(cmdline_get bench || echo ci)
mmfix_load || { t_fail lock-stats-bench-load "$MMFIX_ERR"; return 0; }
out=$(sh -c '. /tests/lib.sh; . /tests/bench-lock-stats.sh "$0"' "$mode")
echo "$out"
# on median of METRIC for CONFIG
on() { echo "$out" | awk -F'\t' -v m="$1" -v c="$2" '$1 == "SUMMARY " m && $2 == c { print $4 }'; }
t_check lock-stats-bench-churn-counts-2-lru-acquisitions-per-op \
	awk -v v="$(on lru_per_op churn-t1)" 'BEGIN { exit !(v >= 1.99 && v <= 2.05) }'
t_check lock-stats-bench-mmap-loop-counts-2-write-acquisitions-per-op \
	awk -v v="$(on mmap_write_per_op mmap-t1)" 'BEGIN { exit !(v >= 2 && v <= 2.2) }'
for c in churn-t1 churn-t2 mmap-t1 churn-t1+hold churn-t2+hold mmap-t1+hold; do
	r=$(echo "$out" | awk -F'\t' -v c=$c '$1 == "SUMMARY ops_per_s" && $2 == c { print $5 }')
	t_comment "stats on/off ops_per_s $c: $r"
done
printf '%s\n' "$out" >/tmp/bench.out
t_check lock-stats-bench-reports-ratios summary_ratios_ok ops_per_s \
	churn-t1 churn-t2 mmap-t1 churn-t1+hold churn-t2+hold mmap-t1+hold </tmp/bench.out
mmfix_unload || t_fail lock-stats-bench-unload "$MMFIX_ERR"
