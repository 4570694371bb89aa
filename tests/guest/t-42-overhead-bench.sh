# SPDX-License-Identifier: GPL-2.0
# What mmfix costs loaded with every switch off (CI size unless
# mmfixtest.bench=full): every workload runs with no module and with
# mmfix loaded, in both orders, the patch is really applied during the
# "on" runs with every switch off, and it unloads cleanly after each.
# The on/off ratios are reported, never asserted; the count of redirected
# calls per op is checked on the one call known exactly (one populate per
# churn op).
mmfix_require_ko overhead-bench || return 0
mode=$(cmdline_get bench || echo ci)
mmfix_unload
out=$(sh -c '. /tests/lib.sh; . /tests/bench-overhead.sh "$0"' "$mode" 2>/tmp/overhead.err)
rc=$?
echo "$out"
cat /tmp/overhead.err
t_check overhead-bench-runs-every-workload-in-both-states \
	sh -c "[ $rc = 0 ] && [ \$(echo '$out' | grep -c '^BENCH ops_per_s') -ge 24 ]"
t_check overhead-bench-patched-with-every-switch-off-while-loaded \
	sh -c "! grep -qE '^# not (off|patched)' /tmp/overhead.err"
t_check overhead-bench-leaves-no-module-loaded \
	sh -c "! grep -q '^mmfix ' /proc/modules"
# one MAP_POPULATE per churn op: the call count is each call once
# (unless mmfixtest.fixes= leaves populate_drain out)
if fixes=$(cmdline_get fixes) && ! echo ",$fixes," | grep -q ',populate_drain,'; then
	t_check overhead-bench-counts-no-populate-left-out \
		sh -c "! echo '$out' | grep -q '^CALLS churn-t1	populate_vma_page_range	'"
else
	t_check overhead-bench-counts-one-populate-per-churn-op \
		sh -c "echo '$out' | grep -q '^CALLS churn-t1	populate_vma_page_range	1.000\$'"
fi
# the pass fix by fix: a FIXCOST row for every fix the full load
# patches, and the price of one redirect (unless mmfixtest.fixes=)
if ! cmdline_get fixes >/dev/null; then
	t_check overhead-bench-costs-each-fix-alone \
		sh -c "n=\$(echo '$out' | grep -c '^FIXFUNCS '); [ \$n -ge 1 ] &&
			[ \$(echo '$out' | grep -c '^FIXCOST ') = \$n ] &&
			echo '$out' | grep -q '^REDIRECT [0-9-]'"
fi
t_comment "overhead $mode size, $([ "$(cmdline_get icount)" = 1 ] && echo icount || echo 'wall clock')"
echo "$out" | sed -n 's/^PAIRS ops_per_s\t//p' | while IFS="$(printf '\t')" read -r cfg n med lo hi; do
	t_comment "loaded/not loaded ops_per_s $cfg: median $med of $n (min $lo, max $hi)"
done
echo "$out" | sed -n 's/^FIXCOST //p' | while IFS="$(printf '\t')" read -r fix add calls per funcs; do
	t_comment "$fix alone: +$add ns per churn-t1 op, $calls calls/op, +$per per call ($funcs)"
done
echo "$out" | sed -n 's/^REDIRECT //p' | while IFS="$(printf '\t')" read -r per lo hi n; do
	t_comment "one redirect: +$per ns per call (min $lo, max $hi, n $n)"
done
echo "$out" | sed -n 's/^COST //p' | while IFS="$(printf '\t')" read -r cfg base add calls per; do
	t_comment "$cfg: $base ns/op, +$add with mmfix, $calls redirected calls/op, +$per per call"
done
