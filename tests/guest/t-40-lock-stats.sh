# SPDX-License-Identifier: GPL-2.0
# Lock statistics (/sys/kernel/mmfix/stats): off registers nothing; each
# lock's own switch counts that lock only and hooks only its probes; on,
# the lru_lock count agrees with an independent kprobe count and moves
# when populate_drain (and unmap_drain on 6.x) is switched on; forced
# mmap_lock contention is seen and none is seen without it; hold times
# are a second tier (stats/hold_time): with it 0 nothing hooks the
# unlocks and no hold counter moves, while acquisitions, contended
# acquisitions and waits count the same as with it 1; reset zeroes
# everything; switching (stats or hold_time) under load keeps module
# state and leaves no probe behind, nor does unloading with stats on.
# mmap_lock counts are bounded from both sides (a munmap's downgrade is a
# read).  t-40-mmap-lock-open-holds.sh: failed, holds open across a
# switch or reset, the table's overflow.
# Sourced by /init after lib.sh.
# fixes: populate_drain unmap_drain

. /tests/lib-lru.sh

ST=/sys/kernel/mmfix/stats
PD=/sys/kernel/mmfix/fixes/populate_drain
UD=/sys/kernel/mmfix/fixes/unmap_drain
KPLIST=/sys/kernel/debug/kprobes/list
TR=/sys/kernel/tracing
OPS=20000

st() { cat "$ST/$1"; }

# field KEY LINE -> value of KEY=value in LINE
field() { echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"; }

# Our hooks as the kernel lists them: ftrace callbacks on
# folio_lruvec_lock* and _raw_spin_unlock* (tracefs enabled_functions),
# and no kprobe at all (debugfs kprobes/list).
nr_hooks() { grep -cE "^$1 " "$TR/enabled_functions"; }
nr_kprobes() {
	awk '$3 ~ /^(folio_lruvec_lock|_raw_spin_unlock)/' "$KPLIST" 2>/dev/null | wc -l
}
probes_absent() {
	[ "$(nr_hooks 'folio_lruvec_lock(_irq|_irqsave)?')" = 0 ] &&
	[ "$(nr_hooks '_raw_spin_unlock(_irq|_irqrestore)?')" = 0 ] &&
	[ "$(nr_kprobes)" = 0 ]
}
probes_present() {
	[ "$(nr_hooks 'folio_lruvec_lock(_irq|_irqsave)?')" = 3 ] &&
	[ "$(nr_hooks '_raw_spin_unlock(_irq|_irqrestore)?')" = 3 ]
}
# the default tier: the lock functions hooked, no unlock
default_tier_probes() {
	[ "$(nr_hooks 'folio_lruvec_lock(_irq|_irqsave)?')" = 3 ] &&
	[ "$(nr_hooks '_raw_spin_unlock(_irq|_irqrestore)?')" = 0 ]
}
# hold_wait_unhooked: after hold_time 0, wait (10 s at most) until the
# unlock callbacks are gone (they stay a second, as stats' own probes)
hold_wait_unhooked() {
	local i=0
	while [ "$(nr_hooks '_raw_spin_unlock(_irq|_irqrestore)?')" != 0 ]; do
		[ $i -lt 100 ] || return 1
		sleep 0.1
		i=$((i + 1))
	done
}
# holds_still CLASS...: every hold counter of each class (and lru_lock's
# per-node hold_ns and unmatched, mmap_lock's worst hold) reads 0
holds_still() {
	local c f bad=""
	for c in "$@"; do
		for f in holds hold_ns hold_max_ns; do
			[ "$(st $c/$f)" = 0 ] || bad="$bad $c/$f=$(st $c/$f)"
		done
		[ -z "$(cat $ST/$c/hold_hist)" ] || bad="$bad $c/hold_hist"
	done
	for f in $ST/lru_lock/node*/hold_ns $ST/lru_lock/unmatched \
		 $ST/mmap_lock/worst_hold_ns; do
		[ "$(cat $f)" = 0 ] || bad="$bad ${f#$ST/}=$(cat $f)"
	done
	[ -z "$bad" ] || { echo "moved:$bad"; return 1; }
}

# Every stats file that counts something, with its value (hist files as
# their number of non-empty buckets), one "path value" per line.
stats_dump() {
	local f
	for f in $(find "$ST" -type f ! -name enabled ! -name reset ! -name hold_time ! -name 'test_*' | sort); do
		case $f in
		*_hist) echo "${f#$ST/} $(wc -l <"$f")" ;;
		*) echo "${f#$ST/} $(cat "$f")" ;;
		esac
	done
}

# all_zero: every counter reads 0 (comm empty, mode none).
all_zero() {
	stats_dump | awk '
		$1 ~ /_comm$/ { if (NF > 1) { print "not empty: " $0; bad = 1 } next }
		$1 ~ /_mode$/ { if ($2 != "none") { print "not none: " $0; bad = 1 } next }
		$2 != "0" { print "not zero: " $0; bad = 1 }
		END { exit bad }'
}

# within_1pct A B: A and B differ by at most 1% of B (and B > 0).
within_1pct() { [ "$2" -gt 0 ] && [ $(( ($1 - $2) * 100 )) -le "$2" ] &&
	[ $(( ($2 - $1) * 100 )) -le "$2" ]; }

# hist_total FILE: sum of the counts in a *_hist file
hist_total() { awk '{ s += $2 } END { print s + 0 }' "$1"; }

t_begin lock-stats
mmfix_require_ko lock-stats || return 0
if ! mmfix_load; then
	t_fail lock-stats-load "$MMFIX_ERR"
	return 0
fi

### switch ####################################################################

t_check stats-off-after-load test "$(st enabled)" = 0
t_check stats-switch-root-only-0644-reset-0200 \
	test "$(stat -c %a $ST/enabled)" = 644 -a "$(stat -c %a $ST/reset)" = 200
t_check stats-off-registers-no-probe probes_absent
bad=""
for v in 2 on yes -1 01 " 1" "1 " "0x1" "+1"; do
	if printf "$v" >$ST/enabled 2>/dev/null; then bad="$bad [$v]"; fi
	if printf "$v" >$ST/reset 2>/dev/null; then bad="$bad reset[$v]"; fi
done
printf 0 >$ST/reset 2>/dev/null && bad="$bad reset[0]"
t_check stats-switch-and-reset-reject-bad-writes \
	test -z "$bad" -a "$(st enabled)" = 0 || echo "accepted:$bad"
t_check stats-hold-time-0-after-load-0644 \
	test "$(st hold_time 2>/dev/null)" = 0 -a "$(stat -c %a $ST/hold_time 2>/dev/null)" = 644
bad=""
for v in 2 on yes -1 01 " 1" "1 " "0x1" "+1"; do
	if printf "$v" >$ST/hold_time 2>/dev/null; then bad="$bad [$v]"; fi
done
t_check stats-hold-time-rejects-bad-writes-and-stays-0 \
	test -z "$bad" -a "$(st hold_time)" = 0 || echo "accepted:$bad"
echo 1 >$ST/hold_time
for v in 2 yes; do
	if printf "$v" >$ST/hold_time 2>/dev/null; then bad="$bad [$v]"; fi
done
t_check stats-hold-time-bad-write-keeps-1 test -z "$bad" -a "$(st hold_time)" = 1
t_check stats-hold-time-alone-registers-no-probe probes_absent
echo 0 >$ST/hold_time

### per-lock switches ##########################################################

# lock_counts: reset, one small workload of each kind, and what was
# counted: LRU (lru_lock acquisitions) and MW (mmap_lock writes).
lock_counts() {
	echo 1 >$ST/reset
	populate churn -n 200 >/dev/null 2>&1
	mmapcontend -w 1 -r 0 -n 200 >/dev/null 2>&1
	LRU=$(st lru_lock/acquisitions) MW=$(st mmap_lock/write/acquisitions)
}
echo 1 >$ST/lru_lock/enabled
t_check stats-lru-switch-sets-lru-only-and-stats-enabled-reads-1 \
	test "$(st lru_lock/enabled)$(st mmap_lock/enabled)$(st enabled)" = 101
lock_counts
t_check stats-lru-switch-alone-counts-lru-not-mmap test "$LRU" -gt 0 -a "$MW" = 0 ||
	echo "lru $LRU mmap writes $MW"
echo 0 >$ST/lru_lock/enabled
stats_wait_unhooked
echo 1 >$ST/mmap_lock/enabled
t_check stats-mmap-switch-sets-mmap-only \
	test "$(st lru_lock/enabled)$(st mmap_lock/enabled)$(st enabled)" = 011
t_check stats-mmap-switch-alone-hooks-no-ftrace-callback probes_absent
lock_counts
t_check stats-mmap-switch-alone-counts-mmap-not-lru test "$LRU" = 0 -a "$MW" -gt 0 ||
	echo "lru $LRU mmap writes $MW"
echo 1 >$ST/enabled
t_check stats-enabled-1-sets-both \
	test "$(st lru_lock/enabled)$(st mmap_lock/enabled)" = 11
echo 0 >$ST/enabled
t_check stats-enabled-0-clears-both \
	test "$(st lru_lock/enabled)$(st mmap_lock/enabled)$(st enabled)" = 000
sleep 1.2
stats_wait_unhooked

echo 1 >$ST/enabled
t_check stats-on-default-tier-hooks-three-lock-functions-and-no-unlock \
	default_tier_probes || grep -E 'folio_lruvec_lock|_raw_spin_unlock' "$TR/enabled_functions"
echo 1 >$ST/hold_time
t_check stats-hold-time-hooks-three-lock-and-three-unlock-functions probes_present ||
	grep -E 'folio_lruvec_lock|_raw_spin_unlock' "$TR/enabled_functions"
echo 0 >$ST/hold_time
hold_wait_unhooked
t_check stats-hold-time-0-unhooks-the-unlocks-lock-functions-stay \
	default_tier_probes || grep -E 'folio_lruvec_lock|_raw_spin_unlock' "$TR/enabled_functions"

### lru_lock: count, independent count, drain off vs on ########################

# kp_count: KP = hits of the tests/guest/lib-lru.sh kprobe events so
# far, read with shell builtins only (a fork would take the lock).
kp_count() {
	local name hits rest
	KP=0
	while read -r name hits rest; do
		case $name in
		"${LRU_PROBE_GROUP}_"*) KP=$((KP + hits)) ;;
		esac
	done <"$TR/kprobe_profile"
}

# churn_stats LABEL [HOLD_TIME]: OPS populate ops on CPU 0.  Stats are
# reset, the kprobe count taken, the churn run, the kprobe count taken
# and stats switched off, with nothing but shell builtins in between, so
# both counters cover the same window.  Sets ACQ (ours), IND (kprobes),
# HOLDS, UNM (unmatched).  hold_time is HOLD_TIME (1 unless given).
churn_stats() {
	local k0
	echo "${2:-1}" >$ST/hold_time
	echo 1 >$ST/enabled
	echo 1 >$ST/reset
	kp_count
	k0=$KP
	taskset 1 populate churn -n "$OPS" >/tmp/churn.out 2>&1 ||
		t_fail lru-churn-runs "$1: populate churn failed: $(tail -n 1 /tmp/churn.out)"
	kp_count
	echo 0 >$ST/enabled
	IND=$((KP - k0))
	ACQ=$(st lru_lock/acquisitions)
	HOLDS=$(st lru_lock/holds)
	UNM=$(st lru_lock/unmatched)
	t_comment "$1: stats $ACQ lru_lock acquisitions ($(lru_per_op "$ACQ" "$OPS")/op), kprobes $IND, holds $HOLDS, unmatched $UNM"
}

have_ud=0
if [ -e $UD/applicable ] && [ "$(cat $UD/applicable)" = 1 ]; then have_ud=1; fi
# unmap_drain's churn needs lru_add_free_dead too (docs/fixes/unmap-drain.md)
LD=/sys/kernel/mmfix/fixes/lru_add_free_dead
set_drains() {
	echo "$1" >$PD/enabled
	[ $have_ud = 0 ] || echo "$1" >$UD/enabled
	[ $have_ud = 0 ] || [ ! -e $LD/enabled ] || echo "$1" >$LD/enabled
}

if lru_probe_start; then
	set_drains 0
	churn_stats drains-off
	OFF=$ACQ
	t_check lru-count-agrees-with-kprobes-within-1pct-drains-off within_1pct "$ACQ" "$IND" ||
		echo "stats $ACQ, kprobes $IND"
	t_check lru-every-hold-ends-in-a-seen-unlock \
		test "$UNM" = 0 -a "$ACQ" = "$HOLDS" ||
		echo "acq $ACQ holds $HOLDS unmatched $UNM"
	t_check lru-hold-hist-sums-to-holds \
		test "$(hist_total $ST/lru_lock/hold_hist)" = "$HOLDS"
	ACQ1=$ACQ
	churn_stats "drains-off, hold_time 0" 0
	t_check lru-hold-counters-do-not-move-with-hold-time-0 holds_still lru_lock
	t_check lru-count-agrees-with-kprobes-within-1pct-hold-time-0 within_1pct "$ACQ" "$IND" ||
		echo "stats $ACQ, kprobes $IND"
	t_check lru-acquisitions-same-with-hold-time-0-and-1-within-1pct \
		within_1pct "$ACQ" "$ACQ1" || echo "hold_time 0: $ACQ, 1: $ACQ1"
	t_check lru-contended-at-most-acquisitions-hold-time-0 \
		test "$(st lru_lock/contended)" -le "$ACQ" -a \
		"$(hist_total $ST/lru_lock/wait_hist)" = "$(st lru_lock/contended)"
	set_drains 1
	churn_stats "drains-on$([ $have_ud = 1 ] && echo ' (populate_drain+unmap_drain+lru_add_free_dead)')"
	ON=$ACQ
	t_check lru-count-agrees-with-kprobes-within-1pct-drains-on within_1pct "$ACQ" "$IND" ||
		echo "stats $ACQ, kprobes $IND"
	set_drains 0
	lru_probe_stop
	t_comment "lru_lock acquisitions per op: $(lru_per_op $OFF $OPS) off, $(lru_per_op $ON $OPS) on, ratio $(lru_ratio $OFF $ON)"
	case $SERIES in
	7.*)
		t_check lru-acquisitions-per-op-drop-10x-with-populate-drain \
			lru_ratio_ge "$OFF" "$ON" 10 ;;
	*)
		# munmap drains too on 6.x: only both fixes together help
		if [ $have_ud = 1 ]; then
			t_check lru-acquisitions-per-op-drop-10x-with-both-drain-fixes \
				lru_ratio_ge "$OFF" "$ON" 10
		else
			t_skip lru-acquisitions-per-op-drop-10x "munmap drains too and unmap_drain is not in this module"
		fi ;;
	esac
	# every acquisition on exactly one node: the nodes add up to the
	# total (stats are off: the counters stand still); on the guest's
	# one node, node0 is the total
	nsum=0
	for f in $ST/lru_lock/node*/acquisitions; do
		nsum=$((nsum + $(cat $f)))
	done
	t_check lru-nodes-add-up-to-acquisitions test "$nsum" = "$ACQ" ||
		echo "nodes $nsum ($(ls -d $ST/lru_lock/node* | wc -l) nodes), total $ACQ"
	echo 0 >$ST/hold_time
else
	t_fail lru-count-agrees-with-kprobes "$LRU_PROBE_ERR"
fi

### mmap_lock: forced contention, and none without it ##########################

thp=/sys/kernel/mm/transparent_hugepage/enabled
thp_saved=$(sed -n 's/.*\[\(.*\)\].*/\1/p' $thp 2>/dev/null)
# khugepaged would take our mmap_lock for reading while it scans
[ -z "$thp_saved" ] || echo never >$thp

# mmap_run ARGS: mmapcontend between a stats reset and switching stats
# off, so the files read afterwards are one consistent set; hold_time
# is $HT (1 unless set).
mmap_run() {
	echo "${HT:-1}" >$ST/hold_time
	echo 1 >$ST/enabled
	echo 1 >$ST/reset
	out=$(mmapcontend "$@")
	echo 0 >$ST/enabled
}

# single_thread_counts: the counts of "mmapcontend -w 1 -r 0 -n 2000",
# bounded from both sides.  Each op takes the lock for write twice (mmap,
# munmap) and for reading three times: the write fault on the new page
# (on 6.12+ the per-VMA lock cannot prepare the anon_vma and retries
# under mmap_lock), the munmap's downgrade of its write lock (which
# counts as a read acquisition), and mincore().  So 4000 writes and
# 6000 reads, plus the fork, exec and exit of the program (about 30 and
# 90); a downgrade not counted as a read leaves about 4000 reads.
single_thread_counts() {
	local w r
	w=$(st mmap_lock/write/acquisitions) r=$(st mmap_lock/read/acquisitions)
	[ "$w" -ge 4000 ] && [ "$w" -le 4200 ] && [ "$r" -ge 6000 ] && [ "$r" -le 6300 ] ||
		{ echo "writes $w (4000-4200), reads $r (6000-6300)"; return 1; }
}

mmap_run -w 1 -r 0 -n 2000
t_comment "single thread: $out; read $(st mmap_lock/read/acquisitions)/$(st mmap_lock/read/contended) write $(st mmap_lock/write/acquisitions)/$(st mmap_lock/write/contended) (acquisitions/contended)"
t_check mmap-single-thread-counts-writes-and-reads-with-downgrades single_thread_counts
t_check mmap-single-thread-no-contention \
	test "$(st mmap_lock/read/contended)" = 0 -a "$(st mmap_lock/write/contended)" = 0

mmap_run -w 2 -r 4 -n 1000 -p 512
rc=$(st mmap_lock/read/contended) wc=$(st mmap_lock/write/contended)
hmax=$(st mmap_lock/write/hold_max_ns) rmax=$(st mmap_lock/read/hold_max_ns)
t_comment "2 writers, 4 mincore readers of 512 pages: $out; contended read $rc write $wc; max hold read $rmax write $hmax ns; worst holder $(st mmap_lock/worst_hold_comm)/$(st mmap_lock/worst_hold_pid) $(st mmap_lock/worst_hold_mode) $(st mmap_lock/worst_hold_ns) ns; worst waiter $(st mmap_lock/worst_wait_comm)/$(st mmap_lock/worst_wait_pid)"
t_check mmap-contention-counted-for-reads-and-writes test "$rc" -gt 0 -a "$wc" -gt 0
# sane: something, and under 10 s even under TCG
t_check mmap-max-hold-sane test "$hmax" -gt 0 -a "$hmax" -lt 10000000000 \
	-a "$rmax" -gt 0 -a "$rmax" -lt 10000000000
t_check mmap-worst-holder-and-waiter-named \
	test "$(st mmap_lock/worst_hold_ns)" -ge "$hmax" -a "$(st mmap_lock/worst_hold_pid)" -gt 0 \
	-a -n "$(st mmap_lock/worst_hold_comm)" -a "$(st mmap_lock/worst_wait_pid)" -gt 0
t_check mmap-hists-sum-to-counts \
	test "$(hist_total $ST/mmap_lock/write/hold_hist)" = "$(st mmap_lock/write/holds)" \
	-a "$(hist_total $ST/mmap_lock/read/hold_hist)" = "$(st mmap_lock/read/holds)" \
	-a "$(hist_total $ST/mmap_lock/write/wait_hist)" = "$wc" \
	-a "$(hist_total $ST/mmap_lock/read/wait_hist)" = "$rc"
# every hold seen ends: holds = acquisitions (one per hold)
t_check mmap-hold-time-1-holds-equal-acquisitions \
	test "$(st mmap_lock/write/holds)" = "$(st mmap_lock/write/acquisitions)" \
	-a "$(st mmap_lock/read/holds)" = "$(st mmap_lock/read/acquisitions)"
t_check mmap-no-untracked test "$(st mmap_lock/untracked)" = 0

# the default tier: the same counts, no hold moves
HT=0 mmap_run -w 1 -r 0 -n 2000
single_thread_uncontended() {
	single_thread_counts && [ "$(st mmap_lock/read/contended)" = 0 ] &&
		[ "$(st mmap_lock/write/contended)" = 0 ]
}
t_check mmap-hold-time-0-single-thread-counts-writes-and-reads-no-contention \
	single_thread_uncontended
HT=0 mmap_run -w 2 -r 4 -n 1000 -p 512
rc0=$(st mmap_lock/read/contended) wc0=$(st mmap_lock/write/contended)
t_comment "hold_time 0, 2 writers, 4 mincore readers: $out; contended read $rc0 write $wc0; worst waiter $(st mmap_lock/worst_wait_comm)/$(st mmap_lock/worst_wait_pid) $(st mmap_lock/worst_wait_ns) ns"
t_check mmap-hold-time-0-contention-counted-for-reads-and-writes test "$rc0" -gt 0 -a "$wc0" -gt 0
t_check mmap-hold-counters-do-not-move-with-hold-time-0 holds_still mmap_lock/read mmap_lock/write
t_check mmap-hold-time-0-wait-hists-sum-to-contended \
	test "$(hist_total $ST/mmap_lock/write/wait_hist)" = "$wc0" \
	-a "$(hist_total $ST/mmap_lock/read/wait_hist)" = "$rc0" \
	-a "$(st mmap_lock/worst_wait_pid)" -gt 0
t_check mmap-hold-time-0-no-untracked test "$(st mmap_lock/untracked)" = 0

mmap_run -w 2 -r 2 -n 300 -m
t_comment "2 writers, 2 /proc/PID/maps readers: $out; contended read $(st mmap_lock/read/contended) write $(st mmap_lock/write/contended)"
[ -z "$thp_saved" ] || echo "$thp_saved" >$thp

### reset #####################################################################

echo 0 >$ST/enabled
echo 1 >$ST/reset
t_check reset-zeroes-every-counter all_zero

### switching under load ######################################################

pd_before=$(cat $PD/enabled)
echo 1 >$PD/enabled
populate churn -n 1000000 >/dev/null 2>&1 &
load1=$!
mmapcontend -w 1 -r 1 -p 256 -n 1000000 >/dev/null 2>&1 &
load2=$!
sk0=$(cat $PD/skipped)
mark=$(kmsg_mark)
i=0 fails=0
while [ $i -lt 4 ]; do
	echo 1 >$ST/enabled || fails=$((fails + 1))
	sleep 0.2
	echo 1 >$ST/hold_time || fails=$((fails + 1))
	sleep 0.2
	echo 1 >$ST/reset || fails=$((fails + 1))
	echo 0 >$ST/hold_time || fails=$((fails + 1))
	sleep 1.2	# the unlock callbacks go while stats stay on
	echo 1 >$ST/hold_time || fails=$((fails + 1))
	sleep 0.2
	echo 0 >$ST/enabled || fails=$((fails + 1))
	echo 0 >$ST/hold_time || fails=$((fails + 1))
	i=$((i + 1))
done
sk1=$(cat $PD/skipped)
kill $load1 $load2 2>/dev/null
wait $load1 $load2 2>/dev/null
t_check switching-under-load-every-write-succeeds test "$fails" = 0
t_check switching-under-load-keeps-fix-state-and-counters \
	test "$(cat $PD/enabled)" = 1 -a "$sk1" -gt "$sk0" -a \
	     "$(cat $MMFIX_KLP/enabled)" = 1 -a "$(st enabled)" = 0
stats_wait_unhooked
t_check switching-off-under-load-leaves-no-probe probes_absent
# hold slots opened before the unlock callbacks went and came back must
# not be timed from then: nothing longer than 10 s under TCG
t_check switching-hold-time-under-load-no-absurd-hold \
	test "$(st lru_lock/hold_max_ns)" -lt 10000000000 -a \
	"$(st mmap_lock/write/hold_max_ns)" -lt 10000000000
t_check switching-under-load-kernel-log-clean dmesg_clean_since "$mark"
echo "$pd_before" >$PD/enabled

### tracepoint probes: every registration undone ##############################

# tracefs kprobes on tracepoint_probe_register/unregister record which
# tracepoint and which probe function; every mmfix probe registered while
# switching stats on must be unregistered (returning 0) when switched off.
tp_events="p:mmfix_tp/reg tracepoint_probe_register tp=+0(+0(%di)):string fn=%si:symbol
p:mmfix_tp/unreg tracepoint_probe_unregister tp=+0(+0(%di)):string fn=%si:symbol
r:mmfix_tp/unreg_ret tracepoint_probe_unregister ret=\$retval"
if echo "$tp_events" >>$TR/kprobe_events 2>/dev/null; then
	echo 0 >$TR/tracing_on
	: >$TR/trace
	echo 1 >$TR/events/mmfix_tp/enable
	echo 1 >$TR/tracing_on
	echo 1 >$ST/enabled
	echo 0 >$ST/enabled
	stats_wait_unhooked
	echo 1 >$ST/hold_time
	echo 1 >$ST/enabled
	echo 0 >$ST/enabled
	echo 0 >$ST/hold_time
	stats_wait_unhooked
	echo 0 >$TR/tracing_on
	echo 0 >$TR/events/mmfix_tp/enable
	grep -E 'mmfix_tp|reg:|unreg' $TR/trace | sed 's/^ *//' >/tmp/tp.trace
	for e in reg unreg unreg_ret; do echo "-:mmfix_tp/$e" >>$TR/kprobe_events; done
	echo 1 >$TR/tracing_on
	cat /tmp/tp.trace
	grep ' reg: .*\[mmfix\]' /tmp/tp.trace | sed 's/.* tp=/tp=/' >/tmp/tp.trace.reg1
	sort /tmp/tp.trace.reg1 >/tmp/tp.reg
	grep ' unreg: .*\[mmfix\]' /tmp/tp.trace | sed 's/.* tp=/tp=/' | sort >/tmp/tp.unreg
	nreg=$(wc -l </tmp/tp.reg)
	nret=$(grep -c ' unreg_ret: .*\[mmfix\]' /tmp/tp.trace)
	t_comment "tracepoint probe registrations by mmfix in two on/off rounds (hold_time 0, 1): $nreg"
	# contention_begin/end and acquire_returned; then mmap_lock_released too
	t_check tracepoint-probes-registered-on-each-switch-on test "$nreg" = 7
	t_check tracepoint-default-tier-registers-no-start-locking-or-released \
		sh -c "! sed -n 1,3p /tmp/tp.trace.reg1 | grep -qE 'mmap_lock_(start_locking|released)'"
	t_check tracepoint-probes-all-unregistered-on-switch-off cmp -s /tmp/tp.reg /tmp/tp.unreg
	t_check tracepoint-unregistrations-all-return-0 \
		sh -c "[ $nret = 7 ] && ! grep ' unreg_ret: ' /tmp/tp.trace | grep -qvE 'ret=(0|0x0)\$'"
	# a burst of switching registers the probes once, not per write
	# (twice if the host stalled the guest for a second in between)
	: >$TR/trace
	echo "$tp_events" | sed -n 1p >>$TR/kprobe_events
	echo 1 >$TR/events/mmfix_tp/enable
	i=0
	while [ $i -lt 10 ]; do
		echo 1 >$ST/enabled
		echo 0 >$ST/enabled
		i=$((i + 1))
	done
	stats_wait_unhooked
	echo 0 >$TR/events/mmfix_tp/enable
	nburst=$(grep -c ' reg: .*\[mmfix\]' $TR/trace)
	echo "-:mmfix_tp/reg" >>$TR/kprobe_events
	t_comment "tracepoint probe registrations in 10 quick on/off rounds: $nburst"
	t_check stats-switching-burst-registers-probes-once-or-twice \
		test "$nburst" = 3 -o "$nburst" = 6
else
	t_skip tracepoint-probes-all-unregistered-on-switch-off "cannot place kprobes on tracepoint_probe_(un)register"
fi

### mmfixctl ###################################################################

if command -v mmfixctl >/dev/null && mmfixctl help stats >/dev/null 2>&1; then
	echo 1 >$ST/hold_time
	echo 1 >$ST/enabled
	echo 1 >$ST/reset
	populate churn -n 200 -t 2 >/dev/null
	mmapcontend -w 2 -r 2 -n 200 >/dev/null
	echo 0 >$ST/enabled
	mmfixctl stats >/tmp/ctl.txt
	mmfixctl -j stats >/tmp/ctl.json
	cat /tmp/ctl.txt
	t_check mmfixctl-stats-text-shows-lru-and-mmap-rows \
		grep -q "^lru_lock  *$(st lru_lock/acquisitions) " /tmp/ctl.txt &&
	t_check mmfixctl-stats-text-mmap-write-row \
		grep -q "^mmap_lock write  *$(st mmap_lock/write/acquisitions) " /tmp/ctl.txt
	t_check mmfixctl-stats-json-matches-sysfs \
		grep -q "\"lru_lock\":{\"acquisitions\":$(st lru_lock/acquisitions)," /tmp/ctl.json &&
	t_check mmfixctl-stats-json-times-in-ns \
		grep -q "\"hold_max_ns\":$(st mmap_lock/write/hold_max_ns)," /tmp/ctl.json
	echo 0 >$ST/hold_time
	mmfixctl stats >/tmp/ctl0.txt
	mmfixctl -j stats >/tmp/ctl0.json
	t_check mmfixctl-stats-hold-time-0-shows-holds-off \
		grep -qE "^lru_lock  *$(st lru_lock/acquisitions) .* off  *off  *off  *off\$" /tmp/ctl0.txt ||
		cat /tmp/ctl0.txt
	t_check mmfixctl-stats-json-hold-time-0-holds-null \
		grep -q '"hold_time":false.*"holds":null' /tmp/ctl0.json
	# the numbers move while something takes the locks
	echo 1 >$ST/enabled
	populate churn -n 100000 >/dev/null 2>&1 &
	load=$!
	mmfixctl watch --count 2 1 >/tmp/ctl.watch
	kill $load 2>/dev/null
	wait $load 2>/dev/null
	cat /tmp/ctl.watch
	t_check mmfixctl-watch-count-2-prints-2-intervals \
		test "$(grep -c ' lru_lock ' /tmp/ctl.watch)" = 2
	t_check mmfixctl-watch-shows-lru-acquisitions-moving \
		awk '$2 == "lru_lock" && $3 > 0 { ok = 1 } END { exit !ok }' /tmp/ctl.watch
	echo 0 >$ST/enabled
	mmfixctl stats --reset >/dev/null
	t_check mmfixctl-stats-reset-zeroes-every-counter all_zero
else
	# the initramfs carries this tree's mmfixctl, which has one
	t_fail mmfixctl-stats "'mmfixctl help stats' failed: this mmfixctl has no stats command"
fi

### unload with stats on ######################################################

echo 1 >$ST/enabled
mark=$(kmsg_mark)
if mmfix_unload; then
	t_pass unload-with-stats-on
else
	t_fail unload-with-stats-on "$MMFIX_ERR"
fi
t_check unload-leaves-no-probe probes_absent
# A probe left behind would now run freed module code.
out=$(populate churn -n 2000 -t 2 && mmapcontend -w 2 -r 2 -n 500)
t_check after-unload-lock-workloads-run-clean \
	sh -c "dmesg_clean_since '$mark' && ! echo '$out' | grep -q 'errors=[1-9]'"
