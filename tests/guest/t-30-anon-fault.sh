# SPDX-License-Identifier: GPL-2.0
# anon_fault: on 7.3 the patched folio_add_new_anon_rmap() takes the index
# of pure anonymous folios from vm_pgoff (fast_index) and keeps the split
# anon pgoff for /dev/zero and private file mappings (split_index); pages
# stay correct and reachable through rmap (soft-offline migrates them).
# Elsewhere the fix is not registered and cannot be switched on.
# Sourced by /init after lib.sh.
# fixes: anon_fault

AF=/sys/kernel/mmfix/fixes/anon_fault
AF_KLP=/sys/kernel/livepatch/mmfix/vmlinux
AF_PAGES=64

# field KEY LINE -> value of KEY=value in LINE
af_field() { echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"; }

# af_run NAME SCENARIO [ARGS...]: run anonfault, leave its result line in
# $AF_OUT; FAIL NAME (and return 1) if it reported a failed check.
af_run() {
	local name=$1
	shift
	if AF_OUT=$(anonfault "$@" -n $AF_PAGES 2>&1); then
		echo "anonfault $*: $AF_OUT"
		return 0
	fi
	t_fail "$name" "anonfault $* failed: $(echo "$AF_OUT" | tr '\n' ' ')"
	return 1
}

# af_expect NAME EXPR: PASS NAME when the shell test EXPR (over the
# variables of the last af_run line) holds, else FAIL with the line.
af_expect() {
	local name=$1 expr=$2 k line
	line=$(echo "$AF_OUT" | tail -n 1)
	for k in fast split faults checked present excl distinct anon_kb \
		 offlined moved offline_err bad thp; do
		eval "$k=\$(af_field $k \"\$line\")"
	done
	if eval "$expr"; then
		t_pass "$name"
	else
		t_fail "$name" "expected $expr; got: $(echo "$AF_OUT" | tail -n 1)"
	fi
}

# The pages of a scenario are intact and sane: data, pagemap, smaps.
AF_SANE='[ "$bad" = 0 ] && [ "$present" = "$checked" ] && [ "$excl" = "$checked" ] &&
	 [ "$distinct" = "$checked" ] && [ "$anon_kb" = $((checked * 4)) ]'
# Three of them soft-offlined: migrated (rmap walk by index) with data.
AF_OFFLINED='[ "$offline_err" = 0 ] && [ "$offlined" = 3 ] && [ "$moved" = 3 ]'

af_not_applicable() {
	t_check anon-fault-not-applicable-on-$SERIES test "$(cat $AF/applicable)" = 0
	t_check anon-fault-reason-says-no-pgoff-hi-read \
		test "$(cat $AF/reason)" = "kernel does not read __vm_anon_pgoff_hi on the fault path"
	out=$( (echo 1 >$AF/enabled) 2>&1 )
	if echo "$out" | grep -q 'Operation not supported' &&
	   [ "$(cat $AF/enabled)" = 0 ]; then
		t_pass anon-fault-enable-fails-with-eopnotsupp
	else
		t_fail anon-fault-enable-fails-with-eopnotsupp \
			"write said '$out', enabled=$(cat $AF/enabled)"
	fi
	t_check anon-fault-nothing-patched-no-counters \
		sh -c "! ls -d $AF_KLP/folio_add_new_anon_rmap,* $AF_KLP/__vmf_anon_prepare,* 2>/dev/null &&
		       test ! -e $AF/fast_index -a ! -e $AF/split_index"
}

af_applicable_73() {
	t_check anon-fault-applicable-on-7.3 test "$(cat $AF/applicable)" = 1 -a \
		"$(cat $AF/enabled)" = 0
	t_check anon-fault-reason-names-folio-add-new-anon-rmap \
		grep -q 'folio_add_new_anon_rmap()' $AF/reason
	t_check anon-fault-patches-folio-add-new-anon-rmap-only \
		sh -c "ls -d $AF_KLP/folio_add_new_anon_rmap,* >/dev/null &&
		       ! ls -d $AF_KLP/__vmf_anon_prepare,* 2>/dev/null"
	t_check anon-fault-counters-are-fast-and-split-index \
		test -r $AF/fast_index -a -r $AF/split_index -a ! -e $AF/assert_kept

	# Switch off: the kernel's own index computation for every folio.
	echo 0 >$AF/enabled
	af_run anon-fault-off-anon anon &&
		af_expect anon-fault-off-anon-keeps-split-index \
			'[ "$fast" = 0 ] && [ "$split" = "$faults" ] && '"$AF_SANE"

	echo 1 >$AF/enabled
	af_run anon-fault-on-anon anon &&
		af_expect anon-fault-on-anon-takes-fast-index \
			'[ "$fast" = "$faults" ] && [ "$split" = 0 ]' &&
		af_expect anon-fault-on-anon-pages-sane "$AF_SANE" &&
		af_expect anon-fault-on-anon-soft-offline-migrates "$AF_OFFLINED"

	af_run anon-fault-on-mremap mremap &&
		af_expect anon-fault-on-mremap-takes-fast-index \
			'[ "$fast" = "$faults" ] && [ "$split" = 0 ]' &&
		af_expect anon-fault-on-mremap-pages-sane "$AF_SANE" &&
		af_expect anon-fault-on-mremap-soft-offline-migrates "$AF_OFFLINED"

	# Other faults of both processes (stack, .data CoW) add to the
	# counters here; the mapping's own copies are fast.
	af_run anon-fault-on-fork fork &&
		af_expect anon-fault-on-fork-cow-copies-take-fast-index \
			'[ "$fast" -ge "$faults" ]' &&
		af_expect anon-fault-on-fork-parent-pages-sane "$AF_SANE" &&
		af_expect anon-fault-on-fork-parent-soft-offline-migrates \
			'[ "$offline_err" = 0 ] && [ "$offlined" = 1 ] && [ "$moved" = 1 ]'

	af_run anon-fault-on-devzero devzero &&
		af_expect anon-fault-on-devzero-keeps-split-index \
			'[ "$fast" = 0 ] && [ "$split" = "$faults" ]' &&
		af_expect anon-fault-on-devzero-pages-sane "$AF_SANE" &&
		af_expect anon-fault-on-devzero-soft-offline-migrates "$AF_OFFLINED"

	af_run anon-fault-on-filepriv filepriv -f /tmp/anon-fault-file &&
		af_expect anon-fault-on-filepriv-cow-keeps-split-index \
			'[ "$fast" = 0 ] && [ "$split" = "$faults" ]' &&
		af_expect anon-fault-on-filepriv-pages-sane "$AF_SANE" &&
		af_expect anon-fault-on-filepriv-soft-offline-migrates "$AF_OFFLINED"

	af_run anon-fault-on-dontneed dontneed &&
		af_expect anon-fault-on-dontneed-refault-takes-fast-index \
			'[ "$fast" = "$faults" ] && [ "$split" = 0 ]' &&
		af_expect anon-fault-on-dontneed-pages-sane "$AF_SANE" &&
		af_expect anon-fault-on-dontneed-soft-offline-migrates "$AF_OFFLINED"

	if af_run anon-fault-on-thp thp; then
		if [ "$(af_field thp "$AF_OUT")" = 1 ]; then
			af_expect anon-fault-on-thp-one-folio-fast-index \
				'[ "$fast" = 1 ] && [ "$split" = 0 ]'
			af_expect anon-fault-on-thp-pages-sane "$AF_SANE"
			af_expect anon-fault-on-thp-split-and-soft-offline \
				'[ "$offline_err" = 0 ] && [ "$offlined" = 1 ] && [ "$moved" = 1 ]'
		else
			t_skip anon-fault-on-thp-one-folio-fast-index "no THP given"
		fi
	fi
	echo 0 >$AF/enabled
}

t_begin anon-fault
mmfix_require_ko anon-fault || return 0
# an earlier test that failed may have left mmfix loaded
mmfix_loaded && ! mmfix_unload && t_comment "anon-fault: could not unload a leftover mmfix: $MMFIX_ERR"
mark=$(kmsg_mark)
if ! mmfix_load; then
	t_fail anon-fault-load "$MMFIX_ERR"
	return 0
fi
case $SERIES in
7.3)	af_applicable_73 ;;
*)	af_not_applicable ;;
esac
t_check anon-fault-kernel-log-clean dmesg_clean_since "$mark"
if mmfix_unload; then
	t_pass anon-fault-unload
else
	t_fail anon-fault-unload "$MMFIX_ERR"
fi
