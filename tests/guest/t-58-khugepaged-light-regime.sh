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
# Before the batch grew after lost retakes, 6.1, which cannot pass VMAs
# without the lock, needed one winning trylock per 1024 VMAs and failed
# this.  The batch that grows for this still bounds what a writer waits
# through: one more run with the fix on in a fresh load (max counters at
# 0) walks at most 32 batches while a writer waits (wait_max_vmas), and
# says how many retakes it lost (retake_failed: each doubled the batch).
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

# The grown batch's bound, in a load of its own.
batch=$(( $(cat $KD/pages_to_scan) / 4 ))
[ "$batch" -ge 1 ] || batch=1
cap=$((batch * 32))	# KS_LEVEL_MAX 5 doublings (module/khugepaged_scan.c)
alloc=$(cat $KD/alloc_sleep_millisecs)
echo 10 >$KD/alloc_sleep_millisecs
echo 10 >$KD/scan_sleep_millisecs
if mmfix_load enable=khugepaged_scan; then
	res=$(thpscan -n 100000 -r 4 -w 2 -t 25)
	echo "light-100000 on, fresh load: $res"
	t_comment "light regime, fresh load, fix on: retake_failed $(ks retake_failed), wait_max_vmas $(ks wait_max_vmas), hold_max_vmas $(ks hold_max_vmas) (batch $batch, cap $cap)"
	t_check light-regime-writer-waits-at-most-32-batches \
		test "$(ks wait_max_vmas)" -le "$cap"
	mmfix_unload
else
	t_fail light-regime-bound-load "$MMFIX_ERR"
fi
echo "$alloc" >$KD/alloc_sleep_millisecs

t_check khugepaged-light-kernel-log-clean dmesg_clean_since "$mark"

set -- $saved
echo "$1" >$THP/enabled
echo "$2" >$KD/scan_sleep_millisecs
