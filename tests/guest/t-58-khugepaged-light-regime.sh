# SPDX-License-Identifier: GPL-2.0
# khugepaged_scan is never much slower than the kernel's walk (issue #34
# part 1): the light regime, where two busy writers mmap and munmap in
# the same mm as a 4 MiB MADV_HUGEPAGE region behind 100k one-page VMAs
# (khugepaged scan_sleep and alloc_sleep 10 ms), and the kernel's own
# walk wins a trylock often enough to cross every VMA in one hold.  The
# fix, which drops its hold for a waiting writer after a batch and only
# retries with a trylock, needs at most 1.2x the kernel's full scans
# until the region is all THPs (medians of 3 runs each way, switched in
# one load, plus one full scan of slack for an off median near 0).
# Before the batch grew after lost retakes and 6.1 passed VMAs without
# the lock after one, 6.1 needed one winning trylock per 1024 VMAs and
# failed this.  The batch that grows for this still bounds what a writer waits
# through: a run with the fix on first in that load (max counters at 0),
# with pages_to_scan 512 (a batch of 128, so that the 5 doublings allowed
# cannot cross 100k VMAs), walks at most 32 batches while a writer waits
# (wait_max_vmas), and says how many retakes it lost (retake_failed: each
# doubled the batch).
# Counts, not time; tests/guest/bench-khugepaged.sh light-ci
# (bench/khugepaged/run SERIES full: 200k VMAs, 5 runs each way).
# fixes: khugepaged_scan
. /tests/lib-khugepaged.sh	# KS, THP, KD

t_begin khugepaged-light-regime
mmfix_require_ko khugepaged-light-regime || return 0
mode=$(cmdline_get bench || echo ci)
[ "$mode" = full ] || mode=ci
saved="$(sed 's/.*\[\(.*\)\].*/\1/' $THP/enabled) $(cat $KD/scan_sleep_millisecs)"
echo 1000000 >/proc/sys/vm/max_map_count
mark=$(kmsg_mark)

out=$(sh -c '. /tests/lib.sh; . /tests/bench-khugepaged.sh "$0"' "light-$mode")
echo "$out"
# sum METRIC CONFIG -> "off on" medians
sum() {
	echo "$out" | awk -F'\t' -v m="$1" -v c="$2" \
		'$1 == "SUMMARY " m && $2 == c { print $3 " " $4 }'
}

light=$(echo "$out" | sed -n 's/^SUMMARY full_scans\tlight-\([0-9]*\)\t.*/\1/p')
t_check khugepaged-light-bench-ran test -n "$light"
for n in $light; do
	set -- $(sum collapsed "light-$n")
	t_check "light-regime-behind-$n-vmas-collapses-fix-on" \
		test "${2:-0}" = 1 || echo "collapsed off/on (medians): $*"
	set -- $(sum full_scans "light-$n")
	t_comment "light regime behind $n VMAs: full scans off/on (medians) ${1:-?}/${2:-?}"
	# on <= 1.2 x off + 1, in integers
	t_check "light-regime-$n-full-scans-fix-on-at-most-1.2x-off" \
		test -n "$2" -a "$((5 * ${2:-0}))" -le "$((6 * ${1:-0} + 5))" ||
		echo "full scans off/on (medians): $*"
done

# The grown batch's bound: the fix-on run first in the load, with a
# batch of 128 (pages_to_scan 512).
for n in $light; do
	batch=$(sum batch "bound-$n" | cut -d' ' -f2)
	cap=$((${batch:-0} * 32))	# KS_LEVEL_MAX 5 doublings (module/khugepaged_scan.c)
	wait=$(sum wait_max_vmas "bound-$n" | cut -d' ' -f2)
	t_comment "light regime behind $n VMAs, fix on first in the load: retake_failed $(sum retake_failed "bound-$n" | cut -d' ' -f2), wait_max_vmas $wait, hold_max_vmas $(sum hold_max_vmas "bound-$n" | cut -d' ' -f2) (batch $batch, cap $cap)"
	t_check "light-regime-$n-writer-waits-at-most-32-batches" \
		test -n "$wait" -a "${wait:-0}" -le "$cap"
done

t_check khugepaged-light-kernel-log-clean dmesg_clean_since "$mark"

set -- $saved
echo "$1" >$THP/enabled
echo "$2" >$KD/scan_sleep_millisecs
