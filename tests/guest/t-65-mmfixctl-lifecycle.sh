# SPDX-License-Identifier: GPL-2.0
# mmfixctl on the real module: the status lifecycle states and their exit
# codes (not built, active, livepatch disabled), stats on/off, and watch
# turning an unload and a reload into notices, never into a spike.
# fixes: populate_drain

t_begin mmfixctl-lifecycle
if ! command -v mmfixctl >/dev/null; then
	t_skip mmfixctl-lifecycle "no mmfixctl in this initramfs"
	return 0
fi
mmfix_require_ko mmfixctl-lifecycle || return 0

# The initramfs keeps the module in /lib/mmfix, not /lib/modules/$(uname -r).
mmfixctl status >/tmp/st.out 2>&1
rc=$?
t_check status-not-built-exits-7 test "$rc" = 7 || cat /tmp/st.out
t_check status-not-built-says-so grep -q '^state:          not-built (' /tmp/st.out

if ! mmfix_load; then
	t_fail mmfixctl-lifecycle-load "$MMFIX_ERR"
	return 0
fi
mmfixctl status >/tmp/st.out 2>&1
rc=$?
cat /tmp/st.out
t_check status-active-exits-0 test "$rc" = 0
t_check status-active-state-first-line \
	grep -q '^state:          active (livepatch enabled, 0 of ' /tmp/st.out
t_check status-json-state-active sh -c 'mmfixctl -j status | grep -q "^{\"schema\":2,\"state\":\"active\","'

t_check stats-on-switches-stats sh -c 'mmfixctl stats on >/dev/null && test "$(cat /sys/kernel/mmfix/stats/enabled)" = 1'

# watch across an unload and a reload of the module
mmfixctl -j watch 0.5 >/tmp/watch.out 2>/tmp/watch.err &
w=$!
sleep 2
mmfix_unload || t_fail mmfixctl-lifecycle-unload "$MMFIX_ERR"
sleep 1.5
mmfix_load || t_fail mmfixctl-lifecycle-reload "$MMFIX_ERR"
mmfixctl stats on >/dev/null
populate churn -n 200 >/dev/null 2>&1
sleep 2
kill -INT $w
wait $w
t_check watch-exits-0-on-sigint test $? = 0
cat /tmp/watch.out | cut -c1-200
t_check watch-notes-unload grep -q '"type":"notice",.*"event":"unloaded"' /tmp/watch.out
t_check watch-notes-load grep -q '"type":"notice",.*"event":"loaded"' /tmp/watch.out
# no interval computed across the reload: the intervals after the
# "loaded" notice are deltas of the reloaded module's counter, so each
# is a whole number and together they are at most what that counter has
# counted since the load, read now (an interval against the old
# module's counter would wrap or exceed it); and there are some.
total=$(cat /sys/kernel/mmfix/stats/lru_lock/acquisitions)
ivs=$(awk '/"type":"notice".*"event":"loaded"/ { on = 1; next } on && /"type":"interval"/' \
	/tmp/watch.out | sed -n 's/.*"lru_lock":{"acquisitions":\([^,}]*\).*/\1/p')
t_check watch-intervals-after-reload test "$(printf '%s\n' "$ivs" | grep -c .)" -ge 2
t_check watch-no-spike-across-reload awk -v ivs="$ivs" -v total="$total" 'BEGIN {
	n = split(ivs, v, "\n")
	for (i = 1; i <= n; i++) {
		if (v[i] !~ /^[0-9]+$/ || v[i] + 0 > total + 0) exit 1
		sum += v[i]
	}
	exit !(n > 0 && sum <= total + 0) }' ||
	echo "intervals after the reload: $(echo $ivs); counted since the load: $total"

# the livepatch disabled while the module stays: state, exit code,
# and enable refusing with "livepatch disabled:"
echo 0 >/sys/kernel/livepatch/mmfix/enabled
loop_until 30 sh -c '! test -d /sys/kernel/livepatch/mmfix'
mmfixctl status >/tmp/st.out 2>&1
rc=$?
cat /tmp/st.out
t_check status-livepatch-disabled-exits-4 test "$rc" = 4
t_check status-livepatch-disabled-line grep -q '^livepatch:      DISABLED' /tmp/st.out
mmfixctl enable populate_drain >/tmp/en.out 2>&1
rc=$?
cat /tmp/en.out
t_check enable-after-livepatch-disabled-fails test "$rc" = 1
t_check enable-after-livepatch-disabled-says-so grep -q '^mmfixctl: livepatch disabled: ' /tmp/en.out
mmfix_unload || t_fail mmfixctl-lifecycle-final-unload "$MMFIX_ERR"
