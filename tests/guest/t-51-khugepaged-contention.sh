# SPDX-License-Identifier: GPL-2.0
# khugepaged_scan under mmap_lock contention, fix off vs on in one boot
# (tests/guest/bench-khugepaged.sh; CI size unless mmfixtest.bench=full).
# With the fix off, the hold that reaches the late region walks every VMA
# in front of it and a waiting writer waits through tens of thousands of
# VMAs; with it on, a writer waits through at most one batch
# (pages_to_scan / 4, doubled after each retake lost to a writer, at most
# 32 times).  Counts are asserted; timings, and the full scans until the
# late region collapses (which depend on when trylocks land between
# writers), are only reported.  (The light regime of issue #34: t-58.)
# fixes: khugepaged_scan
mmfix_require_ko khugepaged-contention || return 0

THP=/sys/kernel/mm/transparent_hugepage
KD=$THP/khugepaged
mode=$(cmdline_get bench || echo ci)
saved="$(sed 's/.*\[\(.*\)\].*/\1/' $THP/enabled) $(cat $KD/scan_sleep_millisecs)"
echo 1000000 >/proc/sys/vm/max_map_count
batch=$(( $(cat $KD/pages_to_scan) / 4 ))
[ "$batch" -ge 1 ] || batch=1
cap=$((batch * 32))	# KS_LEVEL_MAX 5 doublings (module/khugepaged_scan.c)
mark=$(kmsg_mark)

out=$(sh -c '. /tests/lib.sh; . /tests/bench-khugepaged.sh "$0"' "$mode")
echo "$out"
# sum METRIC CONFIG -> "off on" medians
sum() {
	echo "$out" | awk -F'\t' -v m="$1" -v c="$2" \
		'$1 == "SUMMARY " m && $2 == c { print $3 " " $4 }'
}

sizes=$(echo "$out" | sed -n 's/^SUMMARY hold_max_vmas\thold-\([0-9]*\)\t.*/\1/p')
t_check khugepaged-bench-ran test -n "$sizes"
for n in $sizes; do
	set -- $(sum hold_max_vmas "hold-$n")
	t_check "fix-off-one-hold-walks-all-$n-vmas" test "${1:-0}" -ge "$n" ||
		echo "hold_max_vmas off/on: $*"
	set -- $(sum wait_max_vmas "hold-$n")
	t_check "fix-off-writer-waits-through-many-batches-$n" \
		test "${1:-0}" -ge $((10 * batch)) || echo "wait_max_vmas off/on: $*"
	t_check "fix-on-writer-waits-at-most-one-grown-batch-$n" \
		test -n "$2" -a "${2:-0}" -le "$cap" || echo "wait_max_vmas off/on: $*"
	t_comment "wait_max_vmas behind $n VMAs, off/on: ${1:-?}/${2:-?} (batch $batch, cap $cap)"
	set -- $(sum collapsed "collapse-$n")
	t_check "fix-on-late-region-behind-$n-vmas-collapses-under-contention" \
		test "${2:-0}" = 1 || echo "collapsed off/on: $*"
	off_collapsed=${1:-0}
	# Reported, not asserted: when the fix-off run collapses at all
	# depends on when one of its trylocks lands between two writers
	# (58 to over 1000 full scans in CI runs of the same code), and the
	# fix-on run's passes on how often its retake does; the goal (3x
	# fewer) is measured by make bench (docs/fixes/khugepaged-scan.md).
	set -- $(sum full_scans "collapse-$n")
	t_comment "full scans until collapse behind $n VMAs, off/on: ${1:-?}/${2:-?} (off collapsed: $off_collapsed; goal: off >= 3x on)"
done
t_check khugepaged-bench-kernel-log-clean dmesg_clean_since "$mark"

set -- $saved
echo "$1" >$THP/enabled
echo "$2" >$KD/scan_sleep_millisecs
