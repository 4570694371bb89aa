# SPDX-License-Identifier: GPL-2.0
#
# tests/guest/lib-khugepaged.sh - helpers of the khugepaged_scan tests of
# livepatch transitions (t-52, t-55, t-56).  Source after lib.sh.

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
# finished within LIMIT_S (else FAIL; it is left to finish).
within() {
	local name=$1 limit=$2 t0
	shift 2
	rm -f "/tmp/within-$name"
	t0=$(now_cs)
	("$@" >/dev/null 2>&1; echo $? >"/tmp/within-$name") &
	if loop_until "$limit" test -e "/tmp/within-$name"; then
		t_pass "$name"
		echo "$name: $(( $(now_cs) - t0 )) cs, status $(cat "/tmp/within-$name")"
	else
		t_fail "$name" "not finished after $limit s"
	fi
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
