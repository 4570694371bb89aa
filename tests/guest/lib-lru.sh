# SPDX-License-Identifier: GPL-2.0
#
# tests/guest/lib-lru.sh - count lruvec lock acquisitions independently of
# mmfix, with tracefs kprobe events.  Source it after lib.sh:
#
#	. /tests/lib-lru.sh
#	lru_probe_start || { t_fail lru-probe "$LRU_PROBE_ERR"; return 0; }
#	lru_count_run taskset 1 populate churn -n 20000 || ...
#	echo "$LRU_LOCKS acquisitions, output: $LRU_OUT"
#	lru_probe_stop
#
# One kprobe event (mmfix_lru/mmfix_lru_<function>) per folio_lruvec_lock(),
# _irq() and _irqsave(): the functions every LRU batch move and folio
# release takes the lock through (out of line in all four kernels).
# vmscan and compaction take lruvec->lru_lock directly and are not
# counted.  Hits are read from kprobe_profile, which counts every hit of
# an enabled event whether or not tracing_on lets it into the ring
# buffer; tracing_on is kept at 0 while the probes are up, so nothing
# else fills the buffer.

LRU_TRACEFS=${LRU_TRACEFS:-/sys/kernel/tracing}
LRU_PROBE_GROUP=mmfix_lru
LRU_PROBE_FUNCS="folio_lruvec_lock folio_lruvec_lock_irq folio_lruvec_lock_irqsave"
LRU_PROBE_ERR=
LRU_TRACING_ON_SAVED=
LRU_LOCKS=
LRU_OUT=

# lru_probe_start: define and enable the three events.  On failure sets
# LRU_PROBE_ERR, removes what it made and returns 1.
lru_probe_start() {
	local f
	LRU_PROBE_ERR=
	if [ ! -w "$LRU_TRACEFS/kprobe_events" ]; then
		LRU_PROBE_ERR="no $LRU_TRACEFS/kprobe_events (tracefs or CONFIG_KPROBE_EVENTS missing)"
		return 1
	fi
	lru_probe_stop
	for f in $LRU_PROBE_FUNCS; do
		if ! echo "p:$LRU_PROBE_GROUP/${LRU_PROBE_GROUP}_$f $f" >>"$LRU_TRACEFS/kprobe_events"; then
			LRU_PROBE_ERR="cannot place a kprobe on $f"
			lru_probe_stop
			return 1
		fi
	done
	LRU_TRACING_ON_SAVED=$(cat "$LRU_TRACEFS/tracing_on")
	echo 0 >"$LRU_TRACEFS/tracing_on"
	if ! echo 1 >"$LRU_TRACEFS/events/$LRU_PROBE_GROUP/enable"; then
		LRU_PROBE_ERR="cannot enable the $LRU_PROBE_GROUP kprobe events"
		lru_probe_stop
		return 1
	fi
	return 0
}

# lru_probe_stop: disable and delete the events (nothing there is fine),
# and give tracing_on its value back.
lru_probe_stop() {
	local f
	if [ -d "$LRU_TRACEFS/events/$LRU_PROBE_GROUP" ]; then
		echo 0 >"$LRU_TRACEFS/events/$LRU_PROBE_GROUP/enable"
		for f in $LRU_PROBE_FUNCS; do
			echo "-:$LRU_PROBE_GROUP/${LRU_PROBE_GROUP}_$f" >>"$LRU_TRACEFS/kprobe_events" 2>/dev/null
		done
	fi
	if [ -n "$LRU_TRACING_ON_SAVED" ]; then
		echo "$LRU_TRACING_ON_SAVED" >"$LRU_TRACEFS/tracing_on"
		LRU_TRACING_ON_SAVED=
	fi
	return 0
}

# lru_probe_count: lruvec lock acquisitions counted since lru_probe_start
# (the sum of the three events' hits).
lru_probe_count() {
	awk -v funcs="$LRU_PROBE_FUNCS" -v g="$LRU_PROBE_GROUP" '
		BEGIN { n = split(funcs, f, " "); for (i = 1; i <= n; i++) want[g "_" f[i]] = 1 }
		($1 in want) { sum += $2; seen++ }
		END { if (seen != n) exit 1; printf "%d\n", sum }' \
		"$LRU_TRACEFS/kprobe_profile"
}

# lru_count_run CMD...: run CMD; LRU_OUT gets its output (stdout and
# stderr), LRU_LOCKS the lruvec lock acquisitions made meanwhile (by
# anything in the system: keep the guest quiet).  Returns CMD's status,
# or 125 if the probes could not be read.
lru_count_run() {
	local before after rc
	LRU_LOCKS='' LRU_OUT=''
	before=$(lru_probe_count) || return 125
	LRU_OUT=$("$@" 2>&1)
	rc=$?
	after=$(lru_probe_count) || return 125
	LRU_LOCKS=$((after - before))
	return $rc
}

# lru_per_op LOCKS OPS: LOCKS/OPS with three decimals, for messages.
lru_per_op() {
	awk -v l="$1" -v o="$2" 'BEGIN { printf "%.3f\n", o ? l / o : 0 }'
}

# lru_ratio_ge BIG SMALL X: true when BIG >= X * SMALL, i.e. SMALL is at
# least X times fewer (integers; SMALL of 0 counts as 1).
lru_ratio_ge() {
	local small=$2
	[ "$small" -gt 0 ] || small=1
	[ "$1" -ge $(($3 * small)) ]
}

# lru_ratio BIG SMALL: BIG/SMALL with one decimal, for messages.
lru_ratio() {
	awk -v b="$1" -v s="$2" 'BEGIN { printf "%.1f\n", b / (s > 0 ? s : 1) }'
}
