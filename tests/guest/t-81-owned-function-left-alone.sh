# SPDX-License-Identifier: GPL-2.0
# A function another livepatch already patches is left alone (issue #30
# point 2): lp_populate (tests/guest/kmod/lp_populate.c, the kernel's
# own populate_vma_page_range() that counts its calls) is loaded first,
# then mmfix:
#   populate_drain is not patched: patched 0, owned_by lp_populate, the
#     reason names the function and the livepatch, switching it on is
#     refused (EOPNOTSUPP), mmfix's livepatch has no
#     populate_vma_page_range; every other fix that applies is patched;
#   200 MAP_POPULATEs run lp_populate's code (its own counter moves by
#     200 or more) and not mmfix's (populate_drain's counters stay);
#   mmfixctl status names lp_populate, -j has "owned_by":"lp_populate"
#     for populate_drain and "owned_by":"" for the others;
#   a load with fixes=populate_drain (nothing left to patch) is refused
#     with one kernel log line naming lp_populate, nothing registered.
# fixes: populate_drain

KO_LP=/lib/mmfix/lp_populate.ko
F=/sys/kernel/mmfix/fixes
CALLS=/sys/module/lp_populate/parameters/calls
N=200

# jfix FIX FILE: FIX's object in the one-line mmfixctl -j output FILE
jfix() { tr -d '\n' <"$2" | sed "s/.*{\"name\":\"$1\"//; s/{\"name\":.*//"; }

t_begin owned-function
mmfix_require_ko owned-function || return 0
if [ ! -f "$KO_LP" ]; then
	t_skip owned-function "no $KO_LP (tests/guest/kmod/build)"
	return 0
fi
mark=$(kmsg_mark owned-function)

if ! out=$(insmod "$KO_LP" 2>&1) ||
   ! loop_until 30 file_is /sys/kernel/livepatch/lp_populate/transition 0; then
	t_fail owned-lp-populate-loads "${out:-transition not done in 30 s}"
	lp_remove lp_populate
	return 0
fi
c0=$(cat $CALLS)
populate churn -n $N >/dev/null
t_check owned-lp-populate-counts-populates test "$(cat $CALLS)" -ge $((c0 + N))

if ! mmfix_load; then
	t_fail owned-mmfix-loads-beside-it "$MMFIX_ERR"
else
	t_pass owned-mmfix-loads-beside-it
	t_check owned-fix-not-patched file_is $F/populate_drain/patched 0
	t_check owned-by-reads-lp-populate file_is $F/populate_drain/owned_by lp_populate ||
		echo "owned_by: '$(cat $F/populate_drain/owned_by)'"
	t_check owned-reason-names-livepatch file_is $F/populate_drain/reason \
		"populate_vma_page_range is patched by livepatch lp_populate; left alone" ||
		echo "reason: $(cat $F/populate_drain/reason)"
	err=$(sh -c "echo 1 >$F/populate_drain/enabled" 2>&1)
	t_check owned-fix-on-refused sh -c \
		"echo '$err' | grep -qi 'not supported' && test \$(cat $F/populate_drain/enabled) = 0" ||
		echo "write of 1: '$err'"
	t_check owned-not-in-mmfix-livepatch sh -c \
		"! ls $MMFIX_KLP/vmlinux | grep -q '^populate_vma_page_range,'"
	bad=
	for d in $F/*; do
		[ "${d##*/}" = populate_drain ] && continue
		file_is "$d/patched" "$(cat "$d/applicable")" || bad="$bad ${d##*/}(patched)"
		file_is "$d/owned_by" "" || bad="$bad ${d##*/}(owned_by $(cat "$d/owned_by"))"
	done
	t_check owned-other-fixes-patched test -z "$bad" || echo "wrong:$bad"

	c0=$(cat $CALLS)
	s0=$(cat $F/populate_drain/skipped) d0=$(cat $F/populate_drain/drained)
	populate churn -n $N >/dev/null
	c1=$(cat $CALLS)
	s1=$(cat $F/populate_drain/skipped) d1=$(cat $F/populate_drain/drained)
	t_comment "lp_populate calls +$((c1 - c0)), mmfix skipped +$((s1 - s0)) drained +$((d1 - d0)) for $N populates"
	t_check owned-populates-run-lp-populate test $((c1 - c0)) -ge $N
	t_check owned-populates-not-run-by-mmfix test $((s1 - s0)) = 0 -a $((d1 - d0)) = 0

	if command -v mmfixctl >/dev/null; then
		ctl st-81 status
		t_check owned-status-names-lp-populate sh -c \
			"test $CTL_RC = 0 && grep -q lp_populate /tmp/ctl-st-81" || echo "exit $CTL_RC"
		ctl st-81-json -j status
		jfix populate_drain /tmp/ctl-st-81-json >/tmp/st-81-pd
		jfix khugepaged_scan /tmp/ctl-st-81-json >/tmp/st-81-ks
		t_check owned-status-json sh -c \
			"grep -q '\"owned_by\":\"lp_populate\"' /tmp/st-81-pd &&
			 grep -q '\"patched\":false' /tmp/st-81-pd &&
			 grep -q '\"owned_by\":\"\"' /tmp/st-81-ks"
	fi
	mmfix_unload || t_fail owned-unload "$MMFIX_ERR"
fi

# one load attempt (busybox insmod retries a refused finit_module()
# with init_module(): two refusals), then the kernel log since it
mark2=$(kmsg_mark owned-only)
t_check owned-only-fix-load-refused sh -c \
	"! finit $MMFIX_KO fixes=populate_drain && ! test -d /sys/module/mmfix &&
	 ! test -d /sys/kernel/mmfix && ! test -d $MMFIX_KLP"
mmfix_unload >/dev/null 2>&1
dmesg_since "$mark2" | grep lp_populate >/tmp/owned-only.msgs
t_check owned-only-fix-refusal-one-line-names-it \
	test "$(wc -l </tmp/owned-only.msgs)" = 1 || cat /tmp/owned-only.msgs
t_check owned-lp-populate-still-runs sh -c \
	"test \$(cat /sys/kernel/livepatch/lp_populate/enabled) = 1 &&
	 c=\$(cat $CALLS) && populate churn -n 10 >/dev/null && test \$(cat $CALLS) -ge \$((c + 10))"
lp_remove lp_populate || t_fail owned-lp-populate-removed "lp_populate still loaded"
t_check owned-dmesg-clean dmesg_clean_since "$mark"
