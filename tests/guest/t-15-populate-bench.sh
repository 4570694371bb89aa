# SPDX-License-Identifier: GPL-2.0
# The populate churn A/B benchmark (CI size unless mmfixtest.bench=full):
# runs end to end, and its counted metric is exact (1 drain per op with the
# fix off, 0 with it on).  Timings are reported, never asserted.
# fixes: populate_drain
mmfix_require_ko populate-bench || return 0
mode=$(cmdline_get bench || echo ci)
mmfix_load || { t_fail populate-bench-load "$MMFIX_ERR"; return 0; }
echo "=== mmfixctl status (after load)"
mmfixctl status
echo "=== end"
out=$(sh -c '. /tests/lib.sh; . /tests/bench-populate.sh "$0"' "$mode")
echo "$out"
sum() { echo "$out" | awk -F'\t' -v m="$1" -v c="$2" '$1 == "SUMMARY " m && $2 == c { print $3 " " $4 }'; }
t_check populate-bench-off-drains-once-per-op test "$(sum drains_per_op churn-t1)" = "1.000 0.000"
t_check populate-bench-threaded-on-never-drains test "$(sum drains_per_op churn-t2)" = "1.000 0.000"
# a timing row for both configurations, with numbers in it
printf '%s\n' "$out" >/tmp/bench.out
t_check populate-bench-reports-ops-ratio \
	summary_ratios_ok ops_per_s churn-t1 churn-t2 </tmp/bench.out
# 6.1/6.12: each munmap-side switch alone and both (docs/fixes/unmap-drain.md);
# lk CONFIG: its on median, or -1 if its off median is not ~2 per op
if [ "$(cat /sys/kernel/mmfix/fixes/unmap_drain/applicable)" = 1 ]; then
	lk() { sum lru_locks_per_op "churn-t1-$1" | awk '{ print ($1 >= 1.9 && $1 <= 2.2) ? $2 : -1 }'; }
	t_check populate-bench-pd-alone-keeps-2-locks-per-op \
		awk -v v="$(lk pd)" 'BEGIN { exit !(v >= 1.9 && v <= 2.2) }'
	t_check populate-bench-pd-ud-ld-under-0.2-locks-per-op \
		awk -v v="$(lk pd+ud+ld)" 'BEGIN { exit !(v + 0 > 0 && v < 0.2) }'
	t_check populate-bench-ud-alone-more-locks-than-both \
		awk -v a="$(lk pd+ud)" -v b="$(lk pd+ud+ld)" 'BEGIN { exit !(b > 0 && a > b * 1.2) }'
fi
echo "=== mmfixctl status (after the benchmark)"
mmfixctl status
echo "=== end"
mmfix_unload || t_fail populate-bench-unload "$MMFIX_ERR"
