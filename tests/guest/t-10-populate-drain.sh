# SPDX-License-Identifier: GPL-2.0
# populate_drain: load, switch, counters, LRU placement, VM_LOCKED, unload.
# Sourced by /init after lib.sh.
# fixes: populate_drain

PD=/sys/kernel/mmfix/fixes/populate_drain

# counter NAME -> current value
pd_counter() { cat "$PD/$1"; }

# churn_delta ARGS... -> "drained skipped" added by one populate churn run
churn_delta() {
	local d0 s0 out
	d0=$(pd_counter drained); s0=$(pd_counter skipped)
	out=$(populate churn "$@") || { echo "churn failed: $out"; return 1; }
	echo "$(( $(pd_counter drained) - d0 )) $(( $(pd_counter skipped) - s0 ))"
}

# field KEY LINE -> value of KEY=value in LINE
field() { echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"; }

t_begin populate-drain
mmfix_require_ko populate-drain || return 0
if ! mmfix_load; then
	t_fail load-transition-completes "insmod or transition failed"
	return 0
fi
t_check load-transition-completes \
	test "$(cat /sys/kernel/livepatch/mmfix/enabled)" = 1 -a \
	     "$(cat /sys/kernel/livepatch/mmfix/transition)" = 0

t_check sysfs-version-and-kernel-series \
	test "$(cat /sys/kernel/mmfix/kernel)" = "$SERIES" -a -n "$(cat /sys/kernel/mmfix/version)"
t_check populate-drain-applicable-and-off-by-default \
	test "$(cat $PD/applicable)" = 1 -a "$(cat $PD/enabled)" = 0
t_check enabled-is-root-only-0644 \
	test "$(stat -c %a $PD/enabled)" = 644 -a "$(stat -c %a $PD/drained)" = 444

bad=""
# (An empty write never reaches the kernel: open+close is not a store.)
for v in 2 on yes -1 01 " 1" "1 " "1\n\n" "\n" "0x1" "+1" "$(printf '\001\377')"; do
	if printf "$v" > $PD/enabled 2>/dev/null; then bad="$bad [$v]"; fi
	[ "$(cat $PD/enabled)" = 0 ] || bad="$bad changed-by[$v]"
done
t_check switch-rejects-bad-writes-and-keeps-value test -z "$bad" || echo "accepted:$bad"
echo 1 > $PD/enabled && a=$(cat $PD/enabled)
printf 0 > $PD/enabled && b=$(cat $PD/enabled)
t_check switch-accepts-0-and-1 test "$a$b" = 10

echo 0 > $PD/enabled
d=$(churn_delta -n 500)
t_check fix-off-every-populate-drains test "$d" = "500 0" || echo "drained/skipped delta: $d"

echo 1 > $PD/enabled
d=$(churn_delta -n 500)
# every populate counted once, and as a skip: "500 0" is a fix that
# does nothing
t_check fix-on-unlocked-populate-skips-drain test "$d" = "0 500" || echo "delta: $d"
t_check fix-on-counts-skipped-not-drained test "${d% *}" = 0 -a "${d#* }" = 500

d=$(churn_delta -n 200 -l)
t_check fix-on-locked-populate-still-drains test "$d" = "200 0" || echo "delta: $d"

d=$(churn_delta -n 300 -t 2 -p 8)
t_check fix-on-threaded-churn-data-intact test "$d" = "0 600" || echo "delta: $d"

# Calls that return before get-user-pages count in neither counter:
# mlock2(MLOCK_ONFAULT) (VM_LOCKONFAULT) everywhere, and a PROT_NONE
# MAP_POPULATE from 6.12 on; 6.1's populate_vma_page_range() still runs
# get-user-pages for PROT_NONE (which faults nothing in) and drains.  A
# kprobe counts that each op did call populate_vma_page_range().
TR=/sys/kernel/tracing
# skip_delta MODE: "drained skipped kprobe-hits resident" of 200 ops
pvpr_hits() { awk '$1 == "mmfix_t10_pvpr" { print $2 }' $TR/kprobe_profile; }
skip_delta() {
	local d0 s0 h0 out
	d0=$(pd_counter drained); s0=$(pd_counter skipped); h0=$(pvpr_hits)
	out=$(popskip "$1" -n 200) || { echo "popskip failed: $out"; return 1; }
	echo "$(( $(pd_counter drained) - d0 )) $(( $(pd_counter skipped) - s0 )) $(( $(pvpr_hits) - h0 )) $(field resident "$out")"
}
if echo "p:mmfix_t10/mmfix_t10_pvpr populate_vma_page_range" >>$TR/kprobe_events &&
   echo 1 >$TR/events/mmfix_t10/enable; then
	d=$(skip_delta onfault)
	t_check fix-on-lockonfault-populate-counts-in-neither test "$d" = "0 0 200 0" ||
		echo "drained skipped calls resident: $d"
	d=$(skip_delta protnone)
	case $SERIES in
	6.1) want="0 200 200 0" ;;
	*) want="0 0 200 0" ;;
	esac
	t_check fix-on-prot-none-populate-counts-as-the-kernel-populates test "$d" = "$want" ||
		echo "drained skipped calls resident: $d (want $want)"
	echo 0 >$TR/events/mmfix_t10/enable
	echo "-:mmfix_t10/mmfix_t10_pvpr" >>$TR/kprobe_events
else
	t_fail fix-on-lockonfault-populate-counts-in-neither "no kprobe on populate_vma_page_range"
fi

# Pages of an unlocked populate wait in the per-CPU batch with the fix on,
# and are on the LRU at once with it off.
out=$(populate lru -p 4)
t_check fix-on-populated-pages-wait-in-cpu-batch \
	test "$(field lru "$out")" = 0 -a "$(field errors "$out")" = 0 || echo "$out"
echo 0 > $PD/enabled
out=$(populate lru -p 4)
t_check fix-off-populated-pages-on-lru-at-once \
	test "$(field lru "$out")" = 4 -a "$(field errors "$out")" = 0 || echo "$out"

# The reason the drain exists: mlocked pages reach the unevictable LRU
# (and its accounting) before MAP_LOCKED returns.  Must hold with the fix on.
echo 1 > $PD/enabled
out=$(populate lru -l -p 256)
t_check fix-on-map-locked-pages-unevictable-at-once \
	test "$(field lru "$out")" = 256 -a "$(field unevictable "$out")" = 256 \
	     -a "$(field mlocked "$out")" = 256 -a "$(field errors "$out")" = 0 || echo "$out"
t_check fix-on-map-locked-meminfo-unevictable-grows \
	test "$(field unevictable_kb "$out")" -ge 512 || echo "$out"
echo 0 > $PD/enabled

t_check rmmod-refused-while-patch-enabled sh -c '! rmmod mmfix 2>/dev/null'

if mmfix_unload; then
	t_pass unload-disables-and-removes
else
	t_fail unload-disables-and-removes "see console log"
fi
t_check unload-leaves-no-sysfs \
	test ! -e /sys/kernel/mmfix -a ! -e /sys/kernel/livepatch/mmfix
# Allowed taints: O (out-of-tree, 4096), E (unsigned, 8192), K (livepatch, 32768).
t_check no-taint-beyond-livepatch-out-of-tree-unsigned \
	test $(( $(cat /proc/sys/kernel/tainted) & ~(4096 | 8192 | 32768) )) = 0 ||
	echo "tainted=$(cat /proc/sys/kernel/tainted)"

# A bad parameter is refused with one clear line and leaves nothing behind.
mark=$(kmsg_mark)
if insmod /lib/mmfix/mmfix.ko enable=bogus 2>/dev/null; then
	t_fail bad-parameter-refused "insmod enable=bogus succeeded"
	mmfix_unload
else
	t_check bad-parameter-refused-with-clear-message \
		sh -c "kmsg_since $mark | grep -q \"mmfix: enable=: unknown fix 'bogus' (known: populate_drain\""
	t_check bad-parameter-leaves-nothing \
		test ! -e /sys/kernel/mmfix -a ! -e /sys/kernel/livepatch/mmfix -a ! -e /sys/module/mmfix
fi

# enable= switches fixes on at load; mmfixctl drives a full cycle.
if mmfix_load enable=populate_drain; then
	t_check enable-parameter-switches-fix-on test "$(cat $PD/enabled)" = 1
	t_check mmfixctl-status-shows-fix sh -c 'mmfixctl status | grep -q populate_drain'
	mmfixctl disable populate_drain
	t_check mmfixctl-disable test "$(cat $PD/enabled)" = 0
	mmfixctl enable populate_drain
	t_check mmfixctl-enable test "$(cat $PD/enabled)" = 1
	t_check mmfixctl-unload-removes-module \
		sh -c 'mmfixctl unload && test ! -e /sys/module/mmfix'
else
	t_fail enable-parameter-switches-fix-on "insmod enable=populate_drain failed"
fi
