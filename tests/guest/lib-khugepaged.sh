# SPDX-License-Identifier: GPL-2.0
#
# tests/guest/lib-khugepaged.sh - helpers of the khugepaged_scan tests of
# livepatch transitions (t-52, t-55, t-56) and of mmap_lock writers
# (t-53, t-54, t-57).  Source after lib.sh.

KS=/sys/kernel/mmfix/fixes/khugepaged_scan
THP=/sys/kernel/mm/transparent_hugepage
KD=$THP/khugepaged
KCG=/sys/fs/cgroup/mmfix-khugepaged

ks() { cat "$KS/$1"; }
field() { echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
kpids() { grep -lx khugepaged /proc/[0-9]*/comm 2>/dev/null | cut -d/ -f3; }
kpid() { kpids | head -n 1; }
khugepaged_gone() { [ -z "$(kpids)" ]; }
cursors_zero() { file_is "$KS/cursors" 0; }
cursor_saved() { [ "$(ks cursors)" -ge 1 ]; }
step() { echo "--- $* (uptime $(cut -d' ' -f1 /proc/uptime))"; }
transition_done() { file_is "$MMFIX_KLP/transition" 0; }

# mmhold (tests/guest/kmod/mmhold.c, test-only, never installed) holds a
# process's mmap_lock for write: t-53, t-54 (lib-writer-hold.sh), t-57.
HOLD_KO=/lib/mmfix/mmhold.ko
HOLD=/sys/kernel/debug/mmhold
hold_state() { cat $HOLD/state; }
holding() { [ "$(hold_state)" = holding ]; }
hold_over() { case $(hold_state) in done*) return 0 ;; esac; return 1; }

# mmhold_insert NAME: insmod mmhold; without it SKIP NAME, if insmod fails
# FAIL NAME-helper-loads; status 1 then.
mmhold_insert() {
	if [ ! -f "$HOLD_KO" ]; then
		t_skip "$1" "no $HOLD_KO (tests/guest/kmod/build)"
		return 1
	fi
	insmod "$HOLD_KO" && return 0
	t_fail "$1-helper-loads" "insmod $HOLD_KO"
	return 1
}

# khpidle_start NAME VMAS: khpidle (tests/guest/progs/khpidle.c) with
# VMAS one-page VMAs in the background, its pid in the caller's $idle;
# status 0 once it prints "ready" (the time it took goes to the log).
# If it exits first, or is not ready in 90 s (100k VMAs take 1-5 s
# under TCG, but 47 s were seen in t-87 on 6.1), FAIL NAME with what it printed and its exit status or
# where it is (state, wchan, kernel stack), kill it, status 1.
khpidle_start() {
	local out=/tmp/khpidle-$1.out t0=$(now_cs) where
	khpidle -n "$2" >"$out" 2>&1 &
	idle=$!
	loop_until 90 khpidle_settled "$out"
	if grep -q '^ready' "$out"; then
		echo "khpidle -n $2 ready in $(( $(now_cs) - t0 )) cs"
		return 0
	fi
	if khpidle_alive; then
		where="$(awk '/^(State|VmSize)/ { printf "%s ", $0 }' \
			/proc/$idle/status)wchan $(cat /proc/$idle/wchan 2>/dev/null)"
		where="$where, stack $(tr '\n' ' ' </proc/$idle/stack 2>/dev/null)"
		kill -9 "$idle"
		wait "$idle" 2>/dev/null
	else
		wait "$idle"
		where="exited $?"
	fi
	where="$where; it printed: $(tr '\n' ' ' <"$out")"
	t_fail "$1" "khpidle -n $2 not ready: $where; $(grep MemAvailable /proc/meminfo)"
	return 1
}

# khpidle_alive: $idle runs (not exited, not a zombie)
khpidle_alive() {
	[ -d "/proc/$idle" ] && ! grep -qs '^State:.Z' "/proc/$idle/status"
}

# khpidle_settled OUT: khpidle printed "ready" to OUT, or exited
khpidle_settled() { grep -q '^ready' "$1" || ! khpidle_alive; }

# stall_start NAME: uffdstall parks a thread in populate_vma_page_range()
# (patched by populate_drain on every kernel) until /tmp/release-NAME
# exists; sets STALL_PID.
stall_start() {
	rm -f "/tmp/release-$1" "/tmp/stall-$1.out"
	uffdstall -r "/tmp/release-$1" -t 300 >"/tmp/stall-$1.out" 2>&1 &
	STALL_PID=$!
	loop_until 30 grep -q '^stalled ' "/tmp/stall-$1.out"
}

stall_release() {
	touch "/tmp/release-$1"
	loop_until 60 grep -q '^released ' "/tmp/stall-$1.out"
	wait "$STALL_PID"
}

# within NAME LIMIT_S CMD...: run CMD in the background; PASS NAME if it
# finished within LIMIT_S (else FAIL; it is left to finish, and
# /tmp/within-NAME then holds its exit status).
within() { within_status any "$@"; }

# within_ok NAME LIMIT_S CMD...: the same, and CMD must also exit 0.
within_ok() { within_status 0 "$@"; }

within_status() {
	local want=$1 name=$2 limit=$3 t0 rc
	shift 3
	rm -f "/tmp/within-$name"
	t0=$(now_cs)
	("$@" >/dev/null 2>&1; echo $? >"/tmp/within-$name") &
	if ! loop_until "$limit" test -s "/tmp/within-$name"; then
		t_fail "$name" "not finished after $limit s"
		return 1
	fi
	rc=$(cat "/tmp/within-$name")
	echo "$name: $(( $(now_cs) - t0 )) cs, status $rc"
	if [ "$want" != any ] && [ "$rc" != "$want" ]; then
		t_fail "$name" "finished with status $rc"
		return 1
	fi
	t_pass "$name"
}

# khugepaged_runs: a khugepaged thread exists and none sleeps in D state
# (a khugepaged_mutex holder or the thread stopped shows as neither).
khugepaged_runs() {
	local p st ok=0
	[ -n "$(kpids)" ] || { echo "no khugepaged"; return 1; }
	for p in $(kpids); do
		st=$(sed 's/.*) \(.\).*/\1/' /proc/$p/stat 2>/dev/null)
		[ "$st" != D ] || { echo "khugepaged $p in D state"; ok=1; }
	done
	return $ok
}

# Memory onlining and offlining during a stalled transition.  In all four
# tested builds (6.1.192-3, 6.12.118, 7.2.12, 7.3.4 sources) both
# online_pages() and offline_pages() (mm/memory_hotplug.c) end, once the
# block's pages are on or off, with init_per_zone_wmark_min()
# (mm/page_alloc.c), which calls khugepaged_min_free_kbytes_update()
# (mm/khugepaged.c), which takes khugepaged_mutex.  Every Debian build has
# MEMORY_HOTPLUG and MEMORY_HOTREMOVE, so a block of the guest's boot
# memory (128 MiB, all in ZONE_DMA32 in a 2 GiB guest) can go offline and
# online again through memoryN/online when nothing unmovable sits in it;
# no QEMU memory hotplug is needed.
MEM=/sys/devices/system/memory
MEM_BLOCK=
MEM_WHY=

# mem_block_pick: MEM_BLOCK is the highest-numbered of the last four
# blocks that goes offline and online again now, each within 10 s; when
# none does, MEM_WHY says why.
mem_block_pick() {
	local n b why="no $MEM/memory*/online"
	MEM_BLOCK= MEM_WHY=
	for n in $(ls -d $MEM/memory[0-9]* 2>/dev/null | sed 's/.*memory//' |
		   sort -rn | head -n 4); do
		b=$MEM/memory$n
		file_is $b/online 1 || { why="$b is not online"; continue; }
		if ! timeout -s KILL 10 sh -c "echo 0 >$b/online" 2>/dev/null; then
			why="offlining $b failed (busy?)"
			continue
		fi
		if ! timeout -s KILL 10 sh -c "echo 1 >$b/online"; then
			MEM_WHY="onlining $b again failed: $(cat $b/state)"
			return 1
		fi
		MEM_BLOCK=$b
		echo "memory block $b ($(cat $b/valid_zones)) goes offline and online"
		return 0
	done
	MEM_WHY=$why
	return 1
}

# mem_cycle PREFIX: MEM_BLOCK goes offline and online again, each within
# 20 s with status 0 (PREFIX-memory-offline-within-20s,
# PREFIX-memory-online-within-20s); online is only tried once offline has
# finished (a second writer would spin on the device hotplug lock).  The
# bug is a wait for the stalled transition, which is released only after
# the check: any bound catches it, so it is one that TCG with two guests
# on two cores does not reach (0.5 s is usual).
mem_cycle() {
	if [ -z "$MEM_BLOCK" ]; then
		t_skip "$1-memory-offline-within-20s" "$MEM_WHY"
		t_skip "$1-memory-online-within-20s" "$MEM_WHY"
		return 0
	fi
	if within_ok "$1-memory-offline-within-20s" 20 sh -c "echo 0 >$MEM_BLOCK/online"; then
		within_ok "$1-memory-online-within-20s" 20 sh -c "echo 1 >$MEM_BLOCK/online" ||
			d_stacks
	elif [ -e "/tmp/within-$1-memory-offline-within-20s" ]; then
		t_fail "$1-memory-online-within-20s" "not tried: offlining $MEM_BLOCK failed"
	else
		d_stacks
		t_fail "$1-memory-online-within-20s" "not tried: offlining $MEM_BLOCK still blocked"
	fi
}

# d_stacks: the kernel stack of every task in D state, for the log.
d_stacks() {
	local p
	for p in $(grep -l '^State:.*D' /proc/[0-9]*/status 2>/dev/null | cut -d/ -f3); do
		echo "D state: $p $(cat /proc/$p/comm 2>/dev/null)"
		sed 's/^/    /' /proc/$p/stack 2>/dev/null
	done
}

# mem_restore PREFIX: after the stall, wait (60 s at most) for an
# offlining mem_cycle left blocked and bring MEM_BLOCK online again.
mem_restore() {
	[ -n "$MEM_BLOCK" ] || return 0
	loop_until 60 test -s "/tmp/within-$1-memory-offline-within-20s"
	loop_until 60 test ! -e "/tmp/within-$1-memory-online-within-20s" -o \
		-s "/tmp/within-$1-memory-online-within-20s"
	file_is $MEM_BLOCK/online 1 ||
		timeout -s KILL 10 sh -c "echo 1 >$MEM_BLOCK/online" ||
		t_fail "$1-memory-block-online-again" "$MEM_BLOCK: $(cat $MEM_BLOCK/state)"
}

# stalled_writes PREFIX: during a stalled transition, writes to THP
# enabled and defrag and to vm.min_free_kbytes each finish within 10 s,
# memory goes offline and online (mem_cycle), and khugepaged runs (not
# in D state within 10 s).  A write that waits for the transition can
# only finish once the stall is released, after these checks; 10 s is
# far above a write's 0.2-1.2 s under TCG with two guests on two cores.
stalled_writes() {
	local p=$1 min defrag
	min=$(cat /proc/sys/vm/min_free_kbytes)
	defrag=$(sed 's/.*\[\(.*\)\].*/\1/' $THP/defrag)
	within $p-thp-enabled-write-within-10s 10 sh -c "echo madvise >$THP/enabled"
	within $p-thp-defrag-write-within-10s 10 sh -c "echo $defrag >$THP/defrag"
	within $p-min-free-kbytes-write-within-10s 10 sh -c "echo $min >/proc/sys/vm/min_free_kbytes"
	mem_cycle $p
	t_check $p-khugepaged-runs-not-in-d-state loop_until 10 khugepaged_runs
}

# Settings an admin gave khugepaged: CPU 1, nice 5, cgroup $KCG (when
# cgroup2 lets a kernel thread in).
KS_CGROUP=
khugepaged_settings_set() {
	local p
	p=$(kpid)
	[ -n "$p" ] || return 1
	taskset -p 2 "$p" >/dev/null && renice 5 -p "$p" >/dev/null || return 1
	mkdir -p $KCG 2>/dev/null
	if echo "$p" >$KCG/cgroup.procs 2>/dev/null; then
		KS_CGROUP=0::/${KCG#/sys/fs/cgroup/}
	else
		t_comment "khugepaged cannot be moved into $KCG; cgroup not checked"
	fi
}

# khugepaged_settings_kept: every khugepaged thread has CPU 1, nice 5
# and the cgroup; prints what it found.
khugepaged_settings_kept() {
	local p cpus nice cg ok=0
	for p in $(kpids); do
		cpus=$(sed -n 's/^Cpus_allowed_list:\t*//p' /proc/$p/status)
		nice=$(cut -d' ' -f19 /proc/$p/stat)
		cg=$(grep '^0::' /proc/$p/cgroup)
		echo "khugepaged $p: cpus $cpus nice $nice cgroup $cg"
		[ "$cpus" = 1 ] && [ "$nice" = 5 ] &&
			{ [ -z "$KS_CGROUP" ] || [ "$cg" = "$KS_CGROUP" ]; } || ok=1
	done
	[ -n "$(kpids)" ] && return $ok
}

khugepaged_settings_reset() {
	local p
	p=$(kpid)
	[ -z "$p" ] && return 0
	taskset -p 3 "$p" >/dev/null
	renice 19 -p "$p" >/dev/null
	echo "$p" >/sys/fs/cgroup/cgroup.procs 2>/dev/null
	rmdir $KCG 2>/dev/null
	return 0
}
