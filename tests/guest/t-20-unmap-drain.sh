# SPDX-License-Identifier: GPL-2.0
# unmap_drain and lru_add_free_dead: MAP_POPULATE + munmap churn counted
# with kprobes on the lruvec lock functions (tests/guest/lib-lru.sh),
# stock versus each switch alone versus both versus stock again in the
# same boot; data, mlock and freeing checks; MADV_DONTNEED and exit
# counted by unmap_drain's counters like munmap.
# 6.1/6.12: populate_drain alone changes nothing (munmap drains); with
# unmap_drain the batches outlive munmap; with lru_add_free_dead alone
# nothing changes either (every folio is still mapped when munmap
# drains it); with both the lock is taken MIN_RATIO times less often,
# and folios only an lru_add batch still holds are freed without
# reaching the LRU (dead_freed), with and without MGLRU, and uncharged
# from their memcg.  MAP_FIXED over a populated mapping (6.12:
# vms_clean_up_area()) leaves the batches alone too.
# 7.2/7.3: neither applies; populate_drain alone does it.
# Sourced by /init after lib.sh.
# fixes: unmap_drain lru_add_free_dead

. /tests/lib-lru.sh

UD=/sys/kernel/mmfix/fixes/unmap_drain
LD=/sys/kernel/mmfix/fixes/lru_add_free_dead
PD=/sys/kernel/mmfix/fixes/populate_drain
OPS=20000

# A single-page churn op takes the lock twice in the stock kernels (the
# page goes onto the LRU, then off it when freed).  With the drains gone,
# a full per-CPU lru_add batch of B folios would cost three: moving it
# to the LRU, freeing the B-1 folios already unmapped, and later freeing
# the one whose fault filled the batch.  unmap_drain also frees the B-1
# dead folios without putting them on the LRU (as 7.x does), so a batch
# costs two: ceiling 2/(2/B) = B.  6.1's batch holds 15 folios (ceiling
# 15.0x; the run's own ~20 other acquisitions leave 14.9x), 6.12's 31.
# The thresholds fail if the dead folios are not freed (10x and 20.7x).
# unmap_drain alone (B-1 dead folios put on the LRU and taken off it
# again): 2/(3/B), 10x and 20.7x; asked for UD_RATIO.
case $SERIES in
6.1) MIN_RATIO=14 BATCH=15 UD_RATIO=8 ;;
6.12) MIN_RATIO=25 BATCH=31 UD_RATIO=16 ;;
*) MIN_RATIO=15 ;;
esac

CHURN_ERRORS=0

# set_fixes PD UD [LD]: populate_drain, unmap_drain and lru_add_free_dead
# switches (UD "-" leaves the last two alone, for kernels where they do
# not apply; LD defaults to UD).
set_fixes() {
	echo "$1" >$PD/enabled
	[ "$2" = - ] && return 0
	echo "$2" >$UD/enabled
	echo "${3:-$2}" >$LD/enabled
}

ud_counter() { cat "$UD/$1"; }
ld_counter() { cat "$LD/$1"; }

# churn_locks LABEL: OPS single-page populate/write/check/munmap ops on
# CPU 0 (one CPU's LRU batches); LOCKS gets the lock acquisitions.
churn_locks() {
	if ! lru_count_run taskset 1 populate churn -n "$OPS"; then
		CHURN_ERRORS=$((CHURN_ERRORS + 1))
		echo "$1: populate churn failed: $LRU_OUT"
	fi
	LOCKS=$LRU_LOCKS
	t_comment "$1: $LOCKS lruvec lock acquisitions in $OPS ops ($(lru_per_op "$LOCKS" "$OPS")/op)"
}

# within_10pct A B: A is within 10% of B.
within_10pct() { [ $(($1 * 10)) -ge $(($2 * 9)) ] && [ $(($1 * 10)) -le $(($2 * 11)) ]; }

# back_to_stock: the last stock run (S2) matches the first (S1) and is
# again MIN_RATIO times the fixed run (F).
back_to_stock() { within_10pct "$S2" "$S1" && lru_ratio_ge "$S2" "$F" "$MIN_RATIO"; }

# field KEY LINE -> value of KEY=value in LINE
field() { echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"; }

meminfo_kb() { awk -v k="$1:" '$1 == k { print $2 }' /proc/meminfo; }

# Puts every CPU's LRU batches onto the LRU (lru_add_drain_all()), which
# also frees folios whose last reference was the batch's.
drain_all_cpus() { echo 1 >/proc/sys/vm/compact_memory; }

t_begin unmap-drain
mmfix_require_ko unmap-drain-loads || return 0
mark=$(kmsg_mark)
if ! mmfix_load; then
	t_fail unmap-drain-loads "$MMFIX_ERR"
	return 0
fi

if ! lru_probe_start; then
	t_fail lru-lock-kprobes-placed "$LRU_PROBE_ERR"
	mmfix_unload
	return 0
fi

case $SERIES in
6.1|6.12)
	# docs/fixes/unmap-drain.md: callers may rely on no more than the
	# ABI of a replaced function only if gcc made no IPA clone of it
	t_check replaced-functions-have-no-ipa-clones sh -c "! grep -E \
		' (unmap_region|vms_complete_munmap_vmas|vms_clean_up_area|free_pages_and_swap_cache|folio_batch_move_lru)\.' \
		/proc/kallsyms"
	t_check unmap-drain-applicable-and-off-by-default \
		test "$(cat $UD/applicable)" = 1 -a "$(cat $UD/enabled)" = 0
	t_check lru-add-free-dead-applicable-and-off-by-default \
		test "$(cat $LD/applicable)" = 1 -a "$(cat $LD/enabled)" = 0

	set_fixes 0 0
	churn_locks stock
	S1=$LOCKS
	t_check stock-churn-takes-lru-lock-twice-per-op \
		test "$S1" -ge $((OPS * 19 / 10)) -a "$S1" -le $((OPS * 22 / 10))

	set_fixes 1 0
	churn_locks populate-drain-only
	t_check populate-drain-alone-gains-nothing-munmap-drains \
		within_10pct "$LOCKS" "$S1"

	set_fixes 1 1 0
	x0=$(ld_counter dead_freed)
	churn_locks unmap-drain-alone
	U=$LOCKS
	xd=$(($(ld_counter dead_freed) - x0))
	t_check unmap-drain-alone-lru-locks-at-least-${UD_RATIO}x-fewer \
		lru_ratio_ge "$S1" "$U" "$UD_RATIO" ||
		echo "stock $S1, unmap_drain alone $U: $(lru_ratio "$S1" "$U")x"
	t_check lru-add-free-dead-off-frees-no-batched-folio test "$xd" = 0 ||
		echo "dead_freed +$xd"
	t_comment "populate_drain+unmap_drain: $(lru_ratio "$S1" "$U")x fewer lruvec lock acquisitions"

	set_fixes 1 0 1
	x0=$(ld_counter dead_freed)
	churn_locks lru-add-free-dead-alone
	L=$LOCKS
	xd=$(($(ld_counter dead_freed) - x0))
	t_comment "lru-add-free-dead-alone: dead_freed +$xd in $OPS ops"
	t_check lru-add-free-dead-alone-gains-nothing-munmap-drains \
		within_10pct "$L" "$S1"
	t_comment "populate_drain+lru_add_free_dead: $(lru_ratio "$S1" "$L")x fewer lruvec lock acquisitions"

	set_fixes 1 1
	d0=$(ud_counter drained) s0=$(ud_counter skipped)
	x0=$(ld_counter dead_freed)
	churn_locks both-on
	F=$LOCKS
	dd=$(($(ud_counter drained) - d0)) sd=$(($(ud_counter skipped) - s0))
	xd=$(($(ld_counter dead_freed) - x0))
	t_check unmap-drain-on-skips-every-drain \
		test "$dd" = 0 -a "$sd" -ge $((2 * OPS)) ||
		echo "drained +$dd skipped +$sd"
	# B-1 of every B folios are dead when their batch moves.
	t_comment "both-on: dead_freed +$xd in $OPS ops"
	t_check lru-add-free-dead-on-frees-dead-batched-folios-off-lru \
		test "$xd" -ge $((OPS * (BATCH - 1) / BATCH * 95 / 100)) -a "$xd" -le "$OPS" ||
		echo "dead_freed +$xd in $OPS ops"
	t_check both-on-lru-locks-at-least-${MIN_RATIO}x-fewer \
		lru_ratio_ge "$S1" "$F" "$MIN_RATIO" ||
		echo "stock $S1, fixed $F: $(lru_ratio "$S1" "$F")x"
	t_comment "populate_drain+unmap_drain+lru_add_free_dead: $(lru_ratio "$S1" "$F")x fewer lruvec lock acquisitions"

	# MAP_FIXED over the previous op's populated mapping: mmap() itself
	# unmaps the old page (6.12: vms_clean_up_area(), then
	# vms_complete_munmap_vmas() and free_pages_and_swap_cache(); 6.1:
	# unmap_region()), two drain decisions per op, both skipped.
	d0=$(ud_counter drained) s0=$(ud_counter skipped)
	if ! lru_count_run taskset 1 populate churn -f -n "$OPS"; then
		CHURN_ERRORS=$((CHURN_ERRORS + 1))
		echo "map-fixed: populate churn -f failed: $LRU_OUT"
	fi
	FX=$LRU_LOCKS
	dd=$(($(ud_counter drained) - d0)) sd=$(($(ud_counter skipped) - s0))
	t_comment "map-fixed both-on: $FX lruvec lock acquisitions in $OPS ops ($(lru_per_op "$FX" "$OPS")/op), drained +$dd skipped +$sd"
	t_check map-fixed-over-mapping-skips-every-drain \
		test "$dd" = 0 -a "$sd" -ge $((2 * OPS)) ||
		echo "drained +$dd skipped +$sd"
	t_check map-fixed-over-mapping-lru-locks-at-least-${MIN_RATIO}x-fewer \
		lru_ratio_ge "$S1" "$FX" "$MIN_RATIO" ||
		echo "stock $S1, MAP_FIXED churn $FX: $(lru_ratio "$S1" "$FX")x"

	set_fixes 0 0
	d0=$(ud_counter drained) s0=$(ud_counter skipped)
	x0=$(ld_counter dead_freed)
	churn_locks stock-again
	S2=$LOCKS
	dd=$(($(ud_counter drained) - d0)) sd=$(($(ud_counter skipped) - s0))
	xd=$(($(ld_counter dead_freed) - x0))
	t_check unmap-drain-off-drains-every-time \
		test "$sd" = 0 -a "$dd" -ge $((2 * OPS)) ||
		echo "drained +$dd skipped +$sd"
	t_check both-off-frees-no-batched-folio test "$xd" = 0 ||
		echo "dead_freed +$xd"
	t_check both-off-lru-locks-back-to-stock back_to_stock ||
		echo "stock $S1, fixed $F, stock again $S2"

	# Every mmu_gather that frees pages passes free_pages_and_swap_cache(),
	# munmap or not: N MADV_DONTNEED zaps of a written page count N, N
	# child exits at least N (zapcount, tests/guest/progs), as drained
	# with the fix off and as skipped with it on.  zapcount's own exec
	# and exit add a few; counters read with shell builtins (a fork and
	# exit would count too).
	zap_ok() { # MODE N SWITCH
		local d0 s0 d1 s1 dd sd hi out
		echo "$3" >$UD/enabled
		read -r d0 <$UD/drained; read -r s0 <$UD/skipped
		out=$(zapcount "$1" -n "$2") || { echo "zapcount: $out"; return 1; }
		read -r d1 <$UD/drained; read -r s1 <$UD/skipped
		dd=$((d1 - d0)) sd=$((s1 - s0))
		echo "$1 $2, unmap_drain $3: drained +$dd skipped +$sd"
		# one per zap; an exit frees its pages in a few batches (two
		# on 6.1)
		if [ "$1" = dontneed ]; then hi=$(($2 + 10)); else hi=$((3 * $2)); fi
		if [ "$3" = 1 ]; then set -- "$dd" "$sd" "$2" "$hi"; else set -- "$sd" "$dd" "$2" "$hi"; fi
		[ "$1" = 0 ] && [ "$2" -ge "$3" ] && [ "$2" -le "$4" ]
	}
	t_check unmap-drain-off-madv-dontneed-drains-once-each zap_ok dontneed 500 0
	t_check unmap-drain-on-madv-dontneed-skips-once-each zap_ok dontneed 500 1
	t_check unmap-drain-off-exit-drains zap_ok exit 100 0
	t_check unmap-drain-on-exit-skips zap_ok exit 100 1
	echo 0 >$UD/enabled
	UD_ON=1 UD_OFF=0
	;;
*)
	t_check unmap-drain-not-applicable-kernel-does-not-drain \
		test "$(cat $UD/applicable)" = 0 -a \
		     "$(cat $UD/reason)" = "kernel no longer drains in free_pages_and_swap_cache()"
	t_check unmap-drain-cannot-be-switched-on \
		sh -c "! echo 1 2>/dev/null >$UD/enabled && [ \"\$(cat $UD/enabled)\" = 0 ]"
	t_check lru-add-free-dead-not-applicable-kernel-frees-them \
		test "$(cat $LD/applicable)" = 0 -a \
		     "$(cat $LD/reason)" = "kernel frees dead folios of an lru_add batch itself"
	t_check lru-add-free-dead-cannot-be-switched-on \
		sh -c "! echo 1 2>/dev/null >$LD/enabled && [ \"\$(cat $LD/enabled)\" = 0 ]"

	set_fixes 0 -
	churn_locks stock
	S1=$LOCKS
	t_check stock-churn-takes-lru-lock-twice-per-op \
		test "$S1" -ge $((OPS * 19 / 10)) -a "$S1" -le $((OPS * 22 / 10))
	set_fixes 1 -
	churn_locks populate-drain-on
	F=$LOCKS
	t_check populate-drain-alone-lru-locks-at-least-${MIN_RATIO}x-fewer \
		lru_ratio_ge "$S1" "$F" "$MIN_RATIO" ||
		echo "stock $S1, fixed $F: $(lru_ratio "$S1" "$F")x"
	t_comment "populate_drain: $(lru_ratio "$S1" "$F")x fewer lruvec lock acquisitions"
	set_fixes 0 -
	churn_locks stock-again
	S2=$LOCKS
	t_check populate-drain-off-lru-locks-back-to-stock back_to_stock ||
		echo "stock $S1, fixed $F, stock again $S2"
	UD_ON=- UD_OFF=-
	;;
esac
lru_probe_stop

t_check churn-data-intact-in-every-run test "$CHURN_ERRORS" = 0

set_fixes 1 "$UD_ON"
out=$(populate churn -n 2000 -t 2 -p 8)
t_check fixes-on-threaded-churn-data-intact test "$(field errors "$out")" = 0 ||
	echo "$out"

if [ "$UD_ON" = 1 ]; then
	# MGLRU marks pages faulted in active (lru_gen_in_fault()) before
	# they enter the batch: a dead folio freed with PG_active set would
	# be a "Bad page state" (no-kernel-warnings).  6.12 runs with MGLRU
	# on (CONFIG_LRU_GEN_ENABLED), 6.1 with it off: churn once in the
	# other mode too.
	LG=/sys/kernel/mm/lru_gen/enabled
	lg0=$(cat $LG)
	case $lg0 in
	0x0000) mglru=on lg1=y ;;
	*) mglru=off lg1=n ;;
	esac
	echo $lg1 >$LG
	x0=$(ld_counter dead_freed)
	out=$(taskset 1 populate churn -n 3000)
	xd=$(($(ld_counter dead_freed) - x0))
	t_comment "MGLRU $mglru: dead_freed +$xd in 3000 ops"
	t_check fixes-on-mglru-$mglru-churn-frees-dead-folios-data-intact \
		test "$(field errors "$out")" = 0 -a \
		     "$xd" -ge $((3000 * (BATCH - 1) / BATCH * 95 / 100)) ||
		echo "$out, dead_freed +$xd"
	echo "$lg0" >$LG

	# Dead folios leave their memcg: the charge of a churn run in its
	# own cgroup comes back once every CPU's batches drain (20000
	# charges kept would be 78 MB; a page freed still charged is a
	# "Bad page state").
	CG=/sys/fs/cgroup/mmfix-t20
	echo +memory >/sys/fs/cgroup/cgroup.subtree_control
	mkdir $CG
	x0=$(ld_counter dead_freed)
	out=$(sh -c "echo \$\$ >$CG/cgroup.procs && exec taskset 1 populate churn -n $OPS")
	xd=$(($(ld_counter dead_freed) - x0))
	drain_all_cpus
	cur=$(cat $CG/memory.current)
	t_comment "memcg: dead_freed +$xd in $OPS ops, memory.current $cur bytes after the run"
	t_check fixes-on-memcg-charge-of-dead-folios-returns \
		test "$(field errors "$out")" = 0 -a "$xd" -ge $((OPS / 2)) -a "$cur" -lt 4194304 ||
		echo "$out, dead_freed +$xd, memory.current $cur after the run"
	rmdir $CG
fi

# Folios whose last reference is an LRU batch's are freed when the batch
# moves, not lost: MemFree comes back once every CPU's batches drain.
# The replaced munmap code also returns the mappings' commit charge
# (Committed_AS, exact to a few per-CPU batches of pages): 20000 lost
# one-page charges would be 78 MB.
drain_all_cpus
m0=$(meminfo_kb MemFree) c0=$(meminfo_kb Committed_AS)
out=$(populate churn -n "$OPS")
drain_all_cpus
m1=$(meminfo_kb MemFree) c1=$(meminfo_kb Committed_AS)
t_check fixes-on-unmapped-pages-freed-after-batch-drain \
	test $((m0 - m1)) -lt 8192 || echo "MemFree $m0 kB -> $m1 kB after $OPS ops: $out"
t_check fixes-on-munmap-returns-commit-charge \
	test $((c1 - c0)) -lt 32768 || echo "Committed_AS $c0 kB -> $c1 kB after $OPS ops"

# MAP_LOCKED still puts its pages on the unevictable LRU before mmap
# returns (the Unevictable delta may be a batch short: the populate's
# drain also munlocks pages earlier unmaps left in the mlock batch);
# after munmap, with the unmap drain skipped, the pages are munlocked
# and freed by the batch drain.
mlocked0=$(meminfo_kb Mlocked)
out=$(populate lru -l -p 256)
t_check fixes-on-map-locked-pages-unevictable-at-once \
	test "$(field lru "$out")" = 256 -a "$(field unevictable "$out")" = 256 \
	     -a "$(field mlocked "$out")" = 256 -a "$(field errors "$out")" = 0 \
	     -a "$(field unevictable_kb "$out")" -ge 896 || echo "$out"
drain_all_cpus
# (meminfo folds per-CPU vmstat deltas about once a second: wait for it)
t_check fixes-on-unmapped-locked-pages-munlocked \
	loop_until 5 sh -c "[ \$(sed -n 's/^Mlocked: *\([0-9]*\).*/\1/p' /proc/meminfo) = $mlocked0 ]" ||
	echo "Mlocked $mlocked0 kB before, $(meminfo_kb Mlocked) kB after"
set_fixes 0 "$UD_OFF"

t_check no-kernel-warnings dmesg_clean_since "$mark"
if mmfix_unload; then
	t_pass unmap-drain-unloads
else
	t_fail unmap-drain-unloads "$MMFIX_ERR"
fi
