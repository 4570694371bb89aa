# SPDX-License-Identifier: GPL-2.0
# mmfixctl as an operator uses it, on the real module (what t-65 leaves
# to the unit tests' fake trees):
#   - stats on|off lru_lock|mmap_lock move the per-lock switch files, and
#     status shows them on its "lock stats:" line (text and JSON);
#   - watch (text) and -j watch turn a stats reset, stats off, stats on
#     and a reload between two reads (new instance) into one notice each,
#     never a spike; -j prints every notice as a JSON object of its own;
#   - status exit codes 6 (installed in /lib/modules but not loaded),
#     5 (load refused: enable=bogus, the module's own KERN_ERR line) and
#     3 (a livepatch transition held up by a task asleep in the patched
#     populate_vma_page_range(), lib-stall.sh);
#   - SIGINT during that stalled "mmfixctl unload" (started by sigdfl,
#     so SIGINT is at its default action as for a Ctrl-C) reverses the
#     transition (exit 1, fully enabled again, says so); SIGTERM once the
#     transition has finished lets the unload finish (exit 0, says so).
# About 40 s of guest time under TCG (57 s on a busy host).
# fixes: populate_drain

. /tests/lib-stall.sh

ST=/sys/kernel/mmfix/stats
KLP=$MMFIX_KLP

t_begin mmfixctl-operator
if ! command -v mmfixctl >/dev/null || ! command -v populate >/dev/null ||
   ! command -v uffdstall >/dev/null || ! command -v sigdfl >/dev/null; then
	t_skip mmfixctl-operator "no mmfixctl, populate, uffdstall or sigdfl in this initramfs"
	return 0
fi
mmfix_require_ko mmfixctl-operator || return 0
if ! mmfix_load; then
	t_fail mmfixctl-operator-load "$MMFIX_ERR"
	return 0
fi

# switches LRU MMAP ENABLED: the three stats switch files read so
switches() {
	file_is $ST/lru_lock/enabled "$1" && file_is $ST/mmap_lock/enabled "$2" &&
		file_is $ST/enabled "$3" && return 0
	echo "lru_lock $(cat $ST/lru_lock/enabled) mmap_lock $(cat $ST/mmap_lock/enabled) enabled $(cat $ST/enabled)"
	return 1
}
# status_line TEXT: mmfixctl status has exactly this "lock stats:" line
status_line() {
	mmfixctl status >/tmp/op-st.out 2>&1
	grep -qxF "$1" /tmp/op-st.out && return 0
	grep '^lock stats:' /tmp/op-st.out
	return 1
}

### per-lock switches and the status line ######################################

mmfixctl stats on >/dev/null
t_check stats-on-switches-both-locks switches 1 1 1
t_check stats-off-mmap-lock-only sh -c \
	'mmfixctl stats off mmap_lock | grep -qx "mmap_lock (mmap_lock statistics) off"'
t_check stats-off-mmap-lock-moves-its-file-only switches 1 0 1
t_check status-lock-stats-line-mmap-off \
	status_line 'lock stats:     on (lru_lock on, mmap_lock off, hold times off)'
t_check status-json-lock-stats sh -c \
	'mmfixctl -j status | grep -qF "\"stats\":{\"enabled\":true,\"lru_lock\":true,\"mmap_lock\":false,\"hold_time\":false}"'
t_check stats-off-lru-lock sh -c 'mmfixctl stats off lru_lock >/dev/null'
t_check stats-off-lru-lock-moves-its-file switches 0 0 0
t_check status-lock-stats-line-all-off \
	status_line 'lock stats:     off (lru_lock off, mmap_lock off, hold times off)'
t_check stats-on-mmap-lock sh -c 'mmfixctl stats on mmap_lock >/dev/null'
t_check stats-on-mmap-lock-moves-its-file-only switches 0 1 1
t_check stats-on-lru-lock sh -c 'mmfixctl stats on lru_lock >/dev/null'
t_check status-lock-stats-line-both-on \
	status_line 'lock stats:     on (lru_lock on, mmap_lock on, hold times off)'

### watch: reset, stats off, stats on, reload ##################################

lru_acq() {
	mmfixctl -j stats | sed -n 's/.*"lru_lock":{"acquisitions":\([0-9]*\),.*/\1/p'
}
mmfixctl watch 1 >/tmp/op-w.txt 2>&1 &
wt=$!
mmfixctl -j watch 1 >/tmp/op-w.json 2>/tmp/op-w.err &
wj=$!
sleep 1.5
populate churn -n 300 >/dev/null
sleep 2.5
before_reset=$(lru_acq)
mmfixctl stats --reset >/dev/null
sleep 2.5
mmfixctl stats off >/dev/null
sleep 2.5
mmfixctl stats on >/dev/null
populate churn -n 100 >/dev/null
sleep 2.5
# a reload between two reads of watch: stop both, reload, continue
kill -STOP $wt $wj
mmfix_unload || t_fail mmfixctl-operator-unload-for-reload "$MMFIX_ERR"
mmfix_load || t_fail mmfixctl-operator-reload "$MMFIX_ERR"
mmfixctl stats on >/dev/null
kill -CONT $wt $wj
sleep 1.5
populate churn -n 100 >/dev/null
sleep 2.5
kill -INT $wt $wj
wait $wt
rc_t=$?
wait $wj
rc_j=$?
cut -c1-160 /tmp/op-w.txt
cut -c1-200 /tmp/op-w.json
t_check watch-text-exits-0-on-sigint test "$rc_t" = 0
t_check watch-json-exits-0-on-sigint test "$rc_j" = 0
# one_notice FILE PATTERN: exactly one line of FILE matches PATTERN
one_notice() {
	local n
	n=$(grep -c "$2" "$1")
	[ "$n" = 1 ] || { echo "$n lines match '$2'"; return 1; }
}
t_check watch-text-reset-one-notice \
	one_notice /tmp/op-w.txt '^[0-9:]*  notice: the statistics were reset: deltas start again$'
t_check watch-text-stats-off-one-notice \
	one_notice /tmp/op-w.txt '^[0-9:]*  notice: lock statistics were switched off: '
t_check watch-text-stats-on-one-notice \
	one_notice /tmp/op-w.txt '^[0-9:]*  notice: lock statistics were switched on: deltas start again$'
t_check watch-text-reload-one-notice \
	one_notice /tmp/op-w.txt '^[0-9:]*  notice: mmfix was reloaded (version [^)]*): deltas start again$'
t_check watch-text-no-other-notice test "$(grep -c 'notice:' /tmp/op-w.txt)" = 4
for ev in reset stats_off stats_on reloaded; do
	t_check "watch-json-$ev-one-notice-object" one_notice /tmp/op-w.json \
		"^{\"schema\":2,\"type\":\"notice\",\"time\":\"[-0-9T:.]*Z\",\"event\":\"$ev\",\"message\":\"[^\"]*\"}\$"
done
t_check watch-json-no-other-notice test "$(grep -c '"type":"notice"' /tmp/op-w.json)" = 4
t_check watch-json-one-object-per-line sh -c \
	'test -s /tmp/op-w.json && ! grep -v "^{\"schema\":2,\"type\":\"[a-z]*\",.*}\$" /tmp/op-w.json'
t_check watch-json-intervals-after-reload sh -c \
	'sed -n "/\"event\":\"reloaded\"/,\$p" /tmp/op-w.json | grep -q "\"type\":\"interval\""'
# No interval shows more lru_lock acquisitions than the statistics had
# counted in all before the reset (the 300-op churn, the largest run).
big=$(grep '"type":"interval"' /tmp/op-w.json |
	sed -n 's/.*"lru_lock":{"acquisitions":\([0-9]*\).*/\1/p' | sort -n | tail -n 1)
t_check watch-no-spike test "${big:-0}" -le "${before_reset:-0}" -a "${before_reset:-0}" -gt 0 ||
	echo "largest interval: $big, counted before the reset: $before_reset"

### status when not loaded: 6, then 5 after a refused load ######################

# status_is NAME CODE [STATE]: mmfixctl status (its text in /tmp/op-st.out)
# exits CODE; with STATE, the JSON document starts with that state.
status_is() {
	mmfixctl status >/tmp/op-st.out 2>&1
	rc=$?
	cat /tmp/op-st.out
	t_check "status-$1-exits-$2" test "$rc" = "$2"
	[ -z "${3:-}" ] || t_check "status-json-$1" sh -c \
		"mmfixctl -j status | grep -q '^{\"schema\":2,\"state\":\"$3\",'"
}

mmfix_unload || t_fail mmfixctl-operator-unload "$MMFIX_ERR"
# installed as DKMS would, so status finds it (it looks in /lib/modules)
moddir=/lib/modules/$(uname -r)
made_moddir=no
[ -d "$moddir" ] || made_moddir=yes
mkdir -p "$moddir/updates/dkms" && cp "$MMFIX_KO" "$moddir/updates/dkms/mmfix.ko"
status_is not-loaded 6 not-loaded
t_check status-not-loaded-says-so grep -qxF \
	"state:          not-loaded ($moddir/updates/dkms/mmfix.ko is installed but not loaded)" /tmp/op-st.out

# A load the livepatch core refuses (t-11's missing symbol) prints no
# "mmfix: " line: what status makes of it is reported, not asserted.
if [ -f /lib/mmfix/mmfix-badsym.ko ] && ! insmod /lib/mmfix/mmfix-badsym.ko 2>/dev/null; then
	mmfixctl status >/tmp/op-st.out 2>&1
	t_comment "status after the missing-symbol load failed: exit $?, $(grep '^state:' /tmp/op-st.out)"
fi

mark=$(kmsg_mark refused)
t_check insmod-unknown-fix-refused sh -c "! insmod $MMFIX_KO enable=bogus"
kmsg_since "$mark" | grep mmfix
status_is load-refused 5 load-refused
t_check status-load-refused-says-why grep -q \
	"^state:          load-refused (mmfix: .*bogus" /tmp/op-st.out
rm -f "$moddir/updates/dkms/mmfix.ko"
if [ "$made_moddir" = yes ]; then
	rm -rf "$moddir"
	rmdir /lib/modules 2>/dev/null
fi

### a stalled unload: status 3, SIGINT reverses, SIGTERM lets it finish #########

if ! mmfix_load; then
	t_fail mmfixctl-operator-load-for-stall "$MMFIX_ERR"
	return 0
fi
if ! stall_start op; then
	t_fail stall-in-patched-populate "uffdstall did not stall: $(cat /tmp/stall-op.out)"
	mmfix_unload
	return 0
fi
stack_of
# bg_unload: mmfixctl unload in the background (U), output in
# /tmp/op-unload.out; returns once the unpatch transition is under way.
# The livepatch core starts the transition before it turns enabled to 0
# (__klp_disable_patch()), so until then the direction reads "patching".
# sigdfl: SIGINT at its default action, as for a Ctrl-C in a terminal
# (the shell starts background commands with SIGINT ignored).
unpatching() { file_is "$KLP/transition" 1 && file_is "$KLP/enabled" 0; }
bg_unload() {
	sigdfl mmfixctl unload --timeout 60 >/tmp/op-unload.out 2>&1 &
	U=$!
	loop_until 20 unpatching
}
bg_unload
t_check unload-stalled-by-sleeping-task unpatching
status_is transition 3
t_check status-transition-says-unpatching grep -q \
	"^state:          transition (livepatch transition in progress (unpatching)" /tmp/op-st.out
kill -INT $U
wait $U
rc=$?
cat /tmp/op-unload.out
t_check unload-sigint-exits-1 test "$rc" = 1
t_check unload-sigint-says-reversed grep -q \
	'interrupted (Interrupt) during the livepatch transition: reversed it, the livepatch is fully enabled again and the module stays loaded' \
	/tmp/op-unload.out
t_check unload-sigint-leaves-patch-fully-on sh -c \
	"file_is $KLP/enabled 1 && file_is $KLP/transition 0 && test -d /sys/module/mmfix"
t_check status-active-after-sigint mmfixctl status
# (a killed mmfixctl left the transition half way: reverse it here)
if file_is "$KLP/transition" 1; then
	echo 1 >"$KLP/enabled"
	loop_until 30 file_is "$KLP/transition" 0
fi

# SIGTERM after the transition: stop mmfixctl while the transition is
# held up, let the task go, and signal it once the livepatch is gone.
bg_unload
t_check unload-stalled-again file_is "$KLP/transition" 1
kill -STOP $U
stall_release op
t_check stalled-mlock-completes-after-release grep -q '^released mlock=0 errors=0' /tmp/stall-op.out
loop_until 30 test ! -d "$KLP"
kill -TERM $U
kill -CONT $U
wait $U
rc=$?
cat /tmp/op-unload.out
t_check unload-sigterm-after-transition-exits-0 test "$rc" = 0
t_check unload-sigterm-says-finished grep -q \
	'interrupted (Terminated) after the livepatch was disabled: finished the unload rather than leave it half way' \
	/tmp/op-unload.out
t_check unload-sigterm-removed-module test ! -e /sys/module/mmfix
mmfix_unload || t_fail mmfixctl-operator-final-unload "$MMFIX_ERR"
