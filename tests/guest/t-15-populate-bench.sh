# SPDX-License-Identifier: GPL-2.0
# The populate churn A/B benchmark (CI size unless mmfixtest.bench=full):
# runs end to end, and its counted metric is exact (1 drain per op with the
# fix off, 0 with it on).  Timings are reported, never asserted.
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
t_check populate-bench-reports-ops-ratio sh -c "echo '$out' | grep -q '^SUMMARY ops_per_s'"
echo "=== mmfixctl status (after the benchmark)"
mmfixctl status
echo "=== end"
mmfix_unload || t_fail populate-bench-unload "$MMFIX_ERR"
