# SPDX-License-Identifier: GPL-2.0
# mmfixctl upgrade: the loaded mmfix (build A, module mmfix) replaced by a
# newer build of the same tree (B: module mmfix_alt, version +next,
# scripts/build-module --name mmfix_alt --cflags -DMMFIX_TEST_NEXT_VERSION)
# through livepatch atomic replace, while MAP_POPULATE churn runs.
#   never off: a kprobe on populate_vma_page_range counts every populate,
#     whichever code runs it; mmfix counts, in A and then in B (which
#     carries A's counters over), each populate whose drain it skipped.
#     They must be equal: one populate run by the kernel's own function,
#     or by mmfix with the fix off, during the switch makes them differ.
#   carried over: switches, counters, lock statistics switch, and
#     /sys/kernel/mmfix (module file says which module made it); A is
#     removed; khugepaged runs B's code (B restarted it).
#   back again to A's build, then refusals: a second mmfix loaded without
#     upgrade=1, the loaded name as target, upgrade=1 with nothing loaded
#     (or not a bool); and a stalled upgrade: A's
#     switches refuse writes meanwhile; it times out and is reversed, A
#     unchanged and its switches writable again.
# fixes: populate_drain khugepaged_scan

. /tests/lib-stall.sh

KO_NEXT=/lib/mmfix/mmfix_alt.ko
F=/sys/kernel/mmfix/fixes
TR=/sys/kernel/tracing

t_begin upgrade
if ! command -v mmfixctl >/dev/null; then
	t_skip upgrade "no mmfixctl in this initramfs"
	return 0
fi
if [ ! -f "$KO_NEXT" ]; then
	t_skip upgrade "no $KO_NEXT in this initrd (scripts/build-module --name mmfix_alt)"
	return 0
fi
mmfix_require_ko upgrade || return 0
mark=$(kmsg_mark upgrade)

# hits: populate_vma_page_range calls since the probe was placed.
hits() { awk '$1 == "mmfix_upg_populate" { print $2 }' "$TR/kprobe_profile"; }

probe_stop() {
	[ -d "$TR/events/mmfix_upg" ] || return 0
	echo 0 >"$TR/events/mmfix_upg/enable"
	echo "-:mmfix_upg/mmfix_upg_populate" >>"$TR/kprobe_events"
}

if ! mmfix_load enable=populate_drain,khugepaged_scan; then
	t_fail upgrade-load-a "$MMFIX_ERR"
	return 0
fi
echo 1 >/sys/kernel/mmfix/stats/lru_lock/enabled

probe_stop
tr_on=$(cat "$TR/tracing_on")
echo 0 >"$TR/tracing_on"
if ! echo "p:mmfix_upg/mmfix_upg_populate populate_vma_page_range" >>"$TR/kprobe_events" ||
   ! echo 1 >"$TR/events/mmfix_upg/enable"; then
	t_fail upgrade-kprobe "cannot place a kprobe on populate_vma_page_range"
	echo "$tr_on" >"$TR/tracing_on"
	mmfix_unload
	return 0
fi

### A -> B under churn ##########################################################

populate churn -n 200 >/dev/null 2>&1	# so A has counted some
s0=$(cat $F/populate_drain/skipped) d0=$(cat $F/populate_drain/drained) h0=$(hits)
r0=$(cat $F/khugepaged_scan/restarts)
t_comment "A: skipped=$s0 drained=$d0 kprobe=$h0 restarts=$r0"
rm -f /tmp/churn-stop
( while [ ! -e /tmp/churn-stop ]; do populate churn -n 500 -t 2 >/dev/null || exit 1; done ) &
churn=$!
sleep 1
ctl up-b upgrade "$KO_NEXT"
up_rc=$CTL_RC
sleep 1
touch /tmp/churn-stop
wait $churn
churn_rc=$?
s1=$(cat $F/populate_drain/skipped) d1=$(cat $F/populate_drain/drained) h1=$(hits)
t_comment "B: skipped=$s1 drained=$d1 kprobe=$h1; populates during the test: $((h1 - h0))"

t_check upgrade-exits-0 test "$up_rc" = 0
t_check upgrade-says-versions grep -q "^upgraded mmfix .* to mmfix_alt .*+next in .* ms; fixes on: .*populate_drain" /tmp/ctl-up-b
t_check upgrade-churn-ran-throughout test "$churn_rc" = 0 -a "$((h1 - h0))" -gt 100
t_check upgrade-tree-made-by-b sh -c 'test "$(cat /sys/kernel/mmfix/module)" = mmfix_alt &&
	grep -q "+next$" /sys/kernel/mmfix/version'
t_check upgrade-a-removed sh -c '! test -d /sys/module/mmfix && ! test -d /sys/kernel/livepatch/mmfix'
t_check upgrade-b-livepatch-enabled file_is /sys/kernel/livepatch/mmfix_alt/enabled 1
t_check upgrade-switches-carried sh -c "test \$(cat $F/populate_drain/enabled) = 1 &&
	test \$(cat $F/khugepaged_scan/enabled) = 1 && test \$(cat $F/anon_fault/enabled) = 0"
t_check upgrade-stats-switch-carried file_is /sys/kernel/mmfix/stats/lru_lock/enabled 1
# the independent count: every populate since h0 skipped its drain, in A or B
t_check upgrade-populate-fix-never-off test "$((h1 - h0))" = "$((s1 - s0))"
t_check upgrade-no-drain-during-switch test "$d1" = "$d0"
# A's count carried into B exactly: the 200-op churn counted in A, then
# every populate since (the kprobe count) on top; B starting from 0
# would read only the populates it ran itself
t_check upgrade-counters-carried \
	test "$s0" -ge 200 -a "$s1" = "$((s0 + h1 - h0))" ||
	echo "A $s0, B $s1, populates since $((h1 - h0))"
t_check upgrade-khugepaged-restarted-into-b test "$(cat $F/khugepaged_scan/restarts)" -gt "$r0"
# status reads mmfix_alt's livepatch and names the module to remove
ctl st-b status
t_check upgrade-status-names-b sh -c "test $CTL_RC = 0 &&
	grep -qx 'module: *loaded (mmfix_alt)' /tmp/ctl-st-b &&
	grep -qx 'livepatch: *enabled' /tmp/ctl-st-b"
ctl st-b-json -j status
t_check upgrade-status-json-reads-b-livepatch grep -q \
	'"livepatch":{"state":"enabled","enabled":true,"transition":false}' /tmp/ctl-st-b-json

### B -> A's build, then refusals ##############################################

ctl up-a upgrade "$MMFIX_KO"
t_check upgrade-back-to-mmfix sh -c "test $CTL_RC = 0 &&
	test \"\$(cat /sys/kernel/mmfix/module)\" = mmfix && ! test -d /sys/module/mmfix_alt &&
	test \$(cat $F/populate_drain/enabled) = 1"
t_check second-mmfix-refused sh -c "! insmod $KO_NEXT 2>/dev/null && ! test -d /sys/module/mmfix_alt &&
	test \"\$(cat /sys/kernel/mmfix/module)\" = mmfix"
ctl same upgrade mmfix
t_check upgrade-to-loaded-name-is-usage-error sh -c "test $CTL_RC = 2 &&
	grep -q 'mmfix is the module loaded; upgrade to the other name, mmfix_alt' /tmp/ctl-same"

### a stalled upgrade is reversed ##############################################

if ! stall_start up; then
	t_fail upgrade-stall "uffdstall did not stall: $(cat /tmp/stall-up.out)"
else
	timeout -s KILL 180 mmfixctl upgrade --timeout 8 "$KO_NEXT" >/tmp/ctl-stalled 2>&1 &
	up=$!
	# loading an mmfix takes ~9 s on 6.1 under TCG, more on a busy host
	loop_until 60 test -d /sys/kernel/livepatch/mmfix_alt
	# meanwhile mmfix's switches are frozen: a write fails, nothing changes
	t_check upgrade-switches-frozen-meanwhile sh -c "! echo 0 2>/dev/null >$F/populate_drain/enabled &&
		test \$(cat $F/populate_drain/enabled) = 1 && test -d /sys/kernel/livepatch/mmfix_alt"
	wait $up
	CTL_RC=$?
	sed "s/^/  [mmfixctl upgrade] /" /tmp/ctl-stalled
	t_check upgrade-stalled-times-out-and-reverses sh -c "test $CTL_RC = 1 &&
		grep -q 'reversed: mmfix runs on as before, mmfix_alt was removed' /tmp/ctl-stalled"
	t_check upgrade-reversed-a-unchanged sh -c "test \"\$(cat /sys/kernel/mmfix/module)\" = mmfix &&
		! test -d /sys/module/mmfix_alt && test \$(cat /sys/kernel/livepatch/mmfix/enabled) = 1 &&
		test \$(cat /sys/kernel/livepatch/mmfix/transition) = 0"
	t_check upgrade-reversed-switches-writable sh -c "echo 0 >$F/populate_drain/enabled &&
		echo 1 >$F/populate_drain/enabled && test \$(cat $F/populate_drain/enabled) = 1"
	stall_release up
	t_check upgrade-stall-released test $? = 0
fi

probe_stop
echo "$tr_on" >"$TR/tracing_on"
echo 0 >/sys/kernel/mmfix/stats/lru_lock/enabled
ctl unload unload
t_check upgrade-then-unload sh -c "test $CTL_RC = 0 && ! test -d /sys/kernel/mmfix"
# upgrade=1 with no mmfix loaded, or not a bool: refused, nothing left
t_check upgrade-param-without-loaded-mmfix-refused sh -c "! insmod $KO_NEXT upgrade=1 2>/dev/null &&
	! insmod $KO_NEXT upgrade=maybe 2>/dev/null &&
	! test -d /sys/module/mmfix_alt && ! test -d /sys/kernel/mmfix &&
	! test -d /sys/kernel/livepatch/mmfix_alt"
# the handover went with the last module: a plain load works again
t_check load-after-upgrades sh -c "mmfix_load && mmfix_unload"
t_check upgrade-dmesg-clean dmesg_clean_since "$mark"
