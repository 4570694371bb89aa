# SPDX-License-Identifier: GPL-2.0
# A module an upgrade replaced no longer acts on other livepatches' loads
# (issue #43.3): mmfix is loaded (khugepaged_scan patched), then
# mmfix_alt.ko upgrade=1 replaces it and the old module stays loaded, as
# it may until mmfixctl removes it; lp_unrelated (tests/guest/kmod)
# loads.  Counted with kprobes on each module's ks_watch_fn() (the
# khugepaged watch mmfix's module notifier starts for a livepatch load):
# the new module's runs (the control: the probe sees it), the old one's
# never.  Before #43 the old module stayed armed and started its own
# watch, and could free the new module's cursors after a reversed
# foreign replace.
# fixes: khugepaged_scan

T=upgraded-disarmed
KO_NEXT=/lib/mmfix/mmfix_alt.ko
KO_LU=/lib/mmfix/lp_unrelated.ko
TR=/sys/kernel/tracing
G=mmfix_t88

hits() { awk -v e="$1" '$1 == e { print $2 }' $TR/kprobe_profile; }

t_begin $T
mmfix_require_ko $T || return 0
for ko in "$KO_NEXT" "$KO_LU"; do
	if [ ! -f "$ko" ]; then
		t_skip $T "no $ko in this initrd"
		return 0
	fi
done
mark=$(kmsg_mark)
if ! mmfix_load; then
	t_fail $T-load "$MMFIX_ERR"
	return 0
fi
if ! out=$(insmod "$KO_NEXT" upgrade=1 2>&1) ||
   ! loop_until 60 file_is /sys/kernel/livepatch/mmfix_alt/transition 0 ||
   ! loop_until 10 file_is /sys/kernel/mmfix/module mmfix_alt; then
	t_fail $T-upgraded "${out:-upgrade not done in 60 s}"
else
	t_pass $T-upgraded
	if echo "p:$G/old mmfix:ks_watch_fn" >>$TR/kprobe_events &&
	   echo "p:$G/new mmfix_alt:ks_watch_fn" >>$TR/kprobe_events &&
	   echo 1 >$TR/events/$G/enable; then
		if out=$(insmod "$KO_LU" 2>&1) &&
		   loop_until 30 file_is /sys/kernel/livepatch/lp_unrelated/transition 0; then
			sleep 1
			t_comment "ks_watch_fn runs: old module $(hits old), new $(hits new)"
			t_check $T-new-module-watches test "$(hits new)" -ge 1
			t_check $T-old-module-does-not test "$(hits old)" = 0
		else
			t_fail $T-new-module-watches "lp_unrelated: ${out:-transition not done in 30 s}"
		fi
		echo 0 >$TR/events/$G/enable
		echo "-:$G/old" >>$TR/kprobe_events
		echo "-:$G/new" >>$TR/kprobe_events
	else
		t_fail $T-new-module-watches "cannot place kprobes on ks_watch_fn: $(tail -n 2 $TR/error_log 2>/dev/null)"
	fi
	lp_remove lp_unrelated || t_fail $T-lp-unrelated-removed "lp_unrelated still loaded"
fi
MMFIX_MOD=mmfix_alt MMFIX_KLP=/sys/kernel/livepatch/mmfix_alt mmfix_unload ||
	t_fail $T-unload-new "$MMFIX_ERR"
loop_until 10 sh -c "rmmod mmfix 2>/dev/null || ! test -d /sys/module/mmfix" ||
	t_fail $T-unload-old "rmmod mmfix failed"
t_check $T-kernel-log-clean dmesg_clean_since "$mark"
