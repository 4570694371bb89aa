# SPDX-License-Identifier: GPL-2.0
# A livepatch loaded after mmfix over a function a fix patches (issue #30
# point 3): mmfix is loaded with populate_drain on, then lp_populate
# (tests/guest/kmod/lp_populate.c, the kernel's own
# populate_vma_page_range() that counts its calls):
#   populate_drain says it is overridden: overridden_by reads
#     lp_populate, mmfixctl status exits 9 ("overridden") and -j has
#     "overridden_by":"lp_populate" for it, "" for the others;
#   200 MAP_POPULATEs run lp_populate's code (its counter moves by 200 or
#     more) and not mmfix's (populate_drain's skipped stays);
#   once lp_populate is disabled and removed, overridden_by is empty,
#     status exits 0 and populates skip their drain in mmfix again.
# Before, populate_drain's overridden_by is empty (the check can fail).
# Then (issue #43.4) while lp_unrelated's pre_patch callback holds
# klp_mutex for 3 s (pre_patch_ms=3000), 5 reads of overridden_by take
# less than 0.6 s together: a reader gives the mutex up after a deadline
# of 20 ms (HZ=250: about 24 ms), where 20 tries with msleep(5) took
# 20 x 12 ms, 1.2 s for the 5.
# fixes: populate_drain

KO_LP=/lib/mmfix/lp_populate.ko
F=/sys/kernel/mmfix/fixes
CALLS=/sys/module/lp_populate/parameters/calls
N=200

# jfix FIX FILE: FIX's object in the one-line mmfixctl -j output FILE
jfix() { tr -d '\n' <"$2" | sed "s/.*{\"name\":\"$1\"//; s/{\"name\":.*//"; }

t_begin overridden
mmfix_require_ko overridden || return 0
if [ ! -f "$KO_LP" ]; then
	t_skip overridden "no $KO_LP (tests/guest/kmod/build)"
	return 0
fi
mark=$(kmsg_mark overridden)

if ! mmfix_load enable=populate_drain; then
	t_fail overridden-mmfix-load "$MMFIX_ERR"
	return 0
fi
s0=$(cat $F/populate_drain/skipped)
populate churn -n $N >/dev/null
t_check overridden-mmfix-runs-before test "$(cat $F/populate_drain/skipped)" -ge $((s0 + N))
t_check overridden-by-empty-before file_is $F/populate_drain/overridden_by ""

if ! out=$(insmod "$KO_LP" 2>&1) ||
   ! loop_until 30 file_is /sys/kernel/livepatch/lp_populate/transition 0; then
	t_fail overridden-lp-populate-loads "${out:-transition not done in 30 s}"
else
	t_pass overridden-lp-populate-loads
	t_check overridden-by-reads-lp-populate file_is $F/populate_drain/overridden_by lp_populate ||
		echo "overridden_by: '$(cat $F/populate_drain/overridden_by)'"
	t_check overridden-switch-still-reads-1 file_is $F/populate_drain/enabled 1
	if command -v mmfixctl >/dev/null; then
		ctl st-82 status
		t_check overridden-status-exits-9 sh -c \
			"test $CTL_RC = 9 && grep -q '^state: *overridden' /tmp/ctl-st-82" ||
			echo "exit $CTL_RC"
		ctl st-82-json -j status
		jfix populate_drain /tmp/ctl-st-82-json >/tmp/st-82-pd
		jfix khugepaged_scan /tmp/ctl-st-82-json >/tmp/st-82-ks
		t_check overridden-status-json sh -c \
			"grep -q '\"state\":\"overridden\"' /tmp/ctl-st-82-json &&
			 grep -q '\"overridden_by\":\"lp_populate\"' /tmp/st-82-pd &&
			 grep -q '\"overridden_by\":\"\"' /tmp/st-82-ks"
	fi
	c0=$(cat $CALLS)
	s0=$(cat $F/populate_drain/skipped)
	populate churn -n $N >/dev/null
	c1=$(cat $CALLS)
	s1=$(cat $F/populate_drain/skipped)
	t_comment "lp_populate calls +$((c1 - c0)), mmfix skipped +$((s1 - s0)) for $N populates"
	t_check overridden-populates-run-lp-populate test $((c1 - c0)) -ge $N
	t_check overridden-populates-not-run-by-mmfix test $((s1 - s0)) = 0
fi

lp_remove lp_populate || t_fail overridden-lp-populate-removed "lp_populate still loaded"
t_check overridden-by-empty-after-removal file_is $F/populate_drain/overridden_by "" ||
	echo "overridden_by: '$(cat $F/populate_drain/overridden_by)'"
if command -v mmfixctl >/dev/null; then
	ctl st-82-after status
	t_check overridden-status-exits-0-after-removal test "$CTL_RC" = 0
fi
s0=$(cat $F/populate_drain/skipped)
populate churn -n $N >/dev/null
t_check overridden-mmfix-runs-again test "$(cat $F/populate_drain/skipped)" -ge $((s0 + N))

# reads5: 5 reads of populate_drain's overridden_by (no fork), in cs
reads5() {
	local t0 i x
	t0=$(now_cs)
	for i in 1 2 3 4 5; do
		read -r x <$F/populate_drain/overridden_by
	done
	echo $(( $(now_cs) - t0 ))
}
KO_LU=/lib/mmfix/lp_unrelated.ko
if [ -f "$KO_LU" ]; then
	insmod "$KO_LU" pre_patch_ms=3000 &
	lu=$!
	# its klp sysfs directory is made under klp_mutex, before pre_patch
	if loop_until 10 test -d /sys/kernel/livepatch/lp_unrelated; then
		cs=$(reads5)
		t_comment "5 overridden_by reads while klp_mutex is held: $cs cs"
		t_check overridden-by-reads-bounded-while-klp-mutex-held test "$cs" -lt 60
	else
		t_fail overridden-by-reads-bounded-while-klp-mutex-held "lp_unrelated did not register"
	fi
	wait $lu
	lp_remove lp_unrelated || t_fail overridden-lp-unrelated-removed "lp_unrelated still loaded"
fi
mmfix_unload || t_fail overridden-unload "$MMFIX_ERR"
t_check overridden-dmesg-clean dmesg_clean_since "$mark"
