# SPDX-License-Identifier: GPL-2.0
#
# tests/guest/lib-reliability.sh - helpers of the reliability suite
# (t-7x-*.sh): size, the fixes and files the loaded module has, the
# background workloads, the khugepaged and leak checks.  Source it after
# lib.sh:
#
#	. /tests/lib-reliability.sh
#	n=$(rel_size 10 100)              # CI size, full size
#	rel_workloads_start
#	...
#	rel_workloads_stop || t_fail ... "$REL_ERR"
#
# Size: mmfixtest.soak=full on the kernel command line selects the full
# size (make soak, docs/reliability.md), mmfixtest.soak=ci the CI size
# (make test); without either the tests skip (rel_require).  Every test also sends a "# REL <series> <test>
# key=value..." comment, from which scripts/reliability writes
# docs/reliability.md.

REL_MODE=$(cmdline_get soak || echo off)
REL_STOP=/tmp/rel-stop
REL_OUT=/tmp/rel-work
REL_ERR=
MMFIX_SYS=/sys/kernel/mmfix
THP=/sys/kernel/mm/transparent_hugepage
KHP=$THP/khugepaged

# rel_require NAME: SKIP NAME (and return 1) unless this is a reliability
# boot: mmfixtest.soak=ci|full, with slub_debug=FZPU (scripts/reliability,
# tests/run-all).  A plain run-suite boot leaves these long tests out.
rel_require() {
	case $REL_MODE in
	ci|full) return 0 ;;
	esac
	t_skip "$1" "reliability suite: boot with mmfixtest.soak=ci|full slub_debug=FZPU (make test, make soak)"
	return 1
}

# rel_size CI FULL: the size for this run.
rel_size() { [ "$REL_MODE" = full ] && echo "$2" || echo "$1"; }

# rel_hooks: every kprobe, ftrace hook and livepatch registered, to
# compare before and after a load that must leave nothing behind.
rel_hooks() {
	cat /sys/kernel/debug/kprobes/list 2>/dev/null
	cat /sys/kernel/tracing/enabled_functions 2>/dev/null
	ls /sys/kernel/livepatch 2>/dev/null
}

# rel_report TEST KEY=VALUE...: one line for the reliability report, as
# a comment on the results port ("# REL <series> <test> key=value...").
rel_report() { t_comment "REL $SERIES $*"; }

# rel_slub_debug: the kernel was booted with slub_debug checks on (the
# suite asks for FZPU: sanity checks, red zones, poisoning, user tracking).
rel_slub_debug() {
	[ "$(cat /sys/kernel/slab/kmalloc-64/sanity_checks 2>/dev/null)" = 1 ] &&
	[ "$(cat /sys/kernel/slab/kmalloc-64/red_zone 2>/dev/null)" = 1 ] &&
	[ "$(cat /sys/kernel/slab/kmalloc-64/poison 2>/dev/null)" = 1 ] &&
	[ "$(cat /sys/kernel/slab/kmalloc-64/store_user 2>/dev/null)" = 1 ]
}

### what the loaded module has #################################################

rel_fixes() { ls "$MMFIX_SYS/fixes" 2>/dev/null; }

rel_applicable_fixes() {
	local f
	for f in $(rel_fixes); do
		[ "$(cat "$MMFIX_SYS/fixes/$f/applicable")" = 1 ] && echo "$f"
	done
}

# The on/off switches: each fix's enabled, and stats/enabled if present.
rel_switches() {
	local f
	for f in $(rel_applicable_fixes); do echo "$MMFIX_SYS/fixes/$f/enabled"; done
	[ -f "$MMFIX_SYS/stats/enabled" ] && echo "$MMFIX_SYS/stats/enabled"
}

# Every regular file below /sys/kernel/mmfix with any write bit.
rel_writable_files() { find "$MMFIX_SYS" -type f -perm /222 | sort; }

# Counters that only grow: every fix file but the fixed ones (switch,
# applicability, recommendation, function list), minus
# documented gauges (docs/ABI/testing/sysfs-kernel-mmfix).
REL_GAUGES="khugepaged_scan/cursors"
rel_monotonic_counters() {
	local f g skip
	for f in $(find "$MMFIX_SYS/fixes" -type f | sort); do
		case ${f##*/} in enabled|applicable|reason|recommended|functions|owned_by|overridden_by) continue ;; esac
		skip=
		for g in $REL_GAUGES; do
			case $f in */$g) skip=1 ;; esac
		done
		[ -n "$skip" ] || echo "$f"
	done
}

# rel_set_switches VALUE: write VALUE to every switch; 0 on success.
rel_set_switches() {
	local s rc=0
	for s in $(rel_switches); do
		echo "$1" >"$s" || { REL_ERR="write $1 to $s failed"; rc=1; }
	done
	return $rc
}

### background workloads #######################################################

# rel_workloads_start [NAME...]: these workloads (default all three) until
# rel_workloads_stop; flat out at full size, paced at CI size (with both
# vCPUs busy, the livepatch transition's text patching IPIs make every
# load and unload of 6.x take ~15 s under TCG, ~3 s paced):
#   populate    MAP_POPULATE churn, 2 threads (populate_drain's path)
#   faults      threaded anonymous faults with MADV_DONTNEED (anon_fault,
#               unmap_drain paths)
#   khugepaged  an mm with many VMAs and a region for khugepaged to
#               collapse (khugepaged_scan's path): thpscan restarted every
#               few seconds, or soakwork vmas where thpscan is missing
# Each one checks its data and writes "name key=value... errors=N" into
# $REL_OUT/name.
rel_workloads_start() {
	local w
	REL_WORKLOADS=${*:-populate faults khugepaged}
	REL_PIDS=
	rm -rf "$REL_STOP" "$REL_OUT"
	mkdir -p "$REL_OUT"
	for w in $REL_WORKLOADS; do
		"rel_workload_$w" &
		REL_PIDS="$REL_PIDS $!"
	done
}

rel_workload_populate() {
	local n=0 bad=0 ops pause
	ops=$(rel_size 20 200)
	pause=$(rel_size 0.1 0)
	while [ ! -e "$REL_STOP" ]; do
		populate churn -n "$ops" -t 2 >/dev/null 2>&1 || bad=$((bad + 1))
		n=$((n + 1))
		[ "$pause" = 0 ] || sleep "$pause"
	done
	echo "populate runs=$n ops=$((n * ops * 2)) errors=$bad" >"$REL_OUT/populate"
}

rel_workload_faults() {
	local out
	out=$(soakwork faults -t 2 -p 64 -i "$(rel_size 5000 0)" -s "$REL_STOP" -d 21600 2>&1)
	echo "faults $out" >"$REL_OUT/faults"
}

rel_workload_khugepaged() {
	local n=0 bad=0 kb_sum=0 out key kb
	while [ ! -e "$REL_STOP" ]; do
		if command -v thpscan >/dev/null; then
			out=$(thpscan -n 2000 -r 4 -w 1 -s 2000 -d 3000 2>&1)
			key=anon_huge_kb
		else
			out=$(soakwork vmas -v 2000 -s "$REL_STOP" 2>&1)
			key=thp_kb
		fi || { bad=$((bad + 1)); echo "$out" >>"$REL_OUT/khugepaged.err"; }
		kb=$(echo "$out" | tr ' ' '\n' | sed -n "s/^$key=//p")
		kb_sum=$((kb_sum + ${kb:-0}))
		n=$((n + 1))
	done
	echo "khugepaged runs=$n anon_huge_kb=$kb_sum errors=$bad" >"$REL_OUT/khugepaged"
}

# rel_workloads_stop: stop them, wait (bounded), and check that every
# data check passed.  Prints the summary lines; 1 with REL_ERR on a
# problem.
rel_workloads_stop() {
	local w bad=0
	REL_ERR=
	touch "$REL_STOP"
	# (exited children stay zombies, which kill -0 still finds, until wait)
	if ! loop_until 120 sh -c "for p in $REL_PIDS; do
			grep -qv '^[0-9]* ([^)]*) Z' /proc/\$p/stat 2>/dev/null && exit 1
		done; exit 0"; then
		REL_ERR="workloads still running 120 s after the stop request"
		# shellcheck disable=SC2086
		kill -9 $REL_PIDS 2>/dev/null
		return 1
	fi
	# shellcheck disable=SC2086
	wait $REL_PIDS 2>/dev/null
	for w in $REL_WORKLOADS; do
		cat "$REL_OUT/$w" 2>/dev/null || { REL_ERR="$REL_ERR $w: no summary;"; bad=1; continue; }
		case $(cat "$REL_OUT/$w") in
		*" errors=0"*) ;;
		*) REL_ERR="$REL_ERR $(cat "$REL_OUT/$w");"; bad=1 ;;
		esac
	done
	[ ! -s "$REL_OUT/khugepaged.err" ] || head -n 5 "$REL_OUT/khugepaged.err"
	return $bad
}

# The workloads' summaries as one line of prefixed key=value
# ("populate_runs=12 populate_errors=0 faults_rounds=...").
rel_workloads_summary() {
	local w
	for w in $REL_WORKLOADS; do
		sed "s/^[a-z]* //; s/\([a-z_]*\)=/${w}_\1=/g" "$REL_OUT/$w" 2>/dev/null
	done | tr '\n' ' '
}

### khugepaged #################################################################

# Its settings (not its counters), one "name value" per line.
rel_khugepaged_settings() {
	local f
	for f in "$KHP"/*; do
		case ${f##*/} in full_scans|pages_collapsed) continue ;; esac
		echo "${f##*/} $(cat "$f")"
	done
	echo "enabled $(cat "$THP/enabled")"
	echo "defrag $(cat "$THP/defrag")"
}

# pid of the khugepaged thread (busybox has no pgrep).
rel_khugepaged_pid() {
	local p
	for p in /proc/[0-9]*; do
		[ "$(cat "$p/comm" 2>/dev/null)" = khugepaged ] && { echo "${p#/proc/}"; return 0; }
	done
	return 1
}

### leaks ######################################################################

# "SUnreclaim MemAvailable PCP" in kB.  PCP is the free pages held on the
# per-CPU page lists (/proc/zoneinfo pagesets "count:"), which MemFree and
# MemAvailable leave out; it swings by tens of MiB with the last workload
# (6.1: 26 MiB, then 21 MiB, in one soak), so a drop is judged on
# MemAvailable + PCP (amd64: 4 kB pages).
rel_meminfo() {
	awk '$1 == "count:" { n += $2 }
		$1 == "SUnreclaim:" { s = $2 } $1 == "MemAvailable:" { a = $2 }
		END { print s, a, n * 4 }' /proc/zoneinfo /proc/meminfo
}

# Slab objects still allocated whose allocation stack holds an address in
# the module area that no longer resolves to a symbol: code of an mmfix
# module that has been unloaded since (the only modules this VM ever
# loads).  Needs slub_debug=U (alloc_traces, with stacks from the stack
# depot).  Prints one block per allocation site: "cache: header" and its
# stack.  Not counted, because they are caches or owned by something
# alive, not leaks:
#   stacks through arch_ftrace_update_trampoline: the trampoline of the
#	kernel's static kprobe ftrace_ops, made when the first kprobe (here
#	lock stats') is armed, is kept for reuse (6.1: module_alloc(); 7.x:
#	the execmem cache);
#   vmap_area: vfree() leaves the area to a lazy purge, which frees its
#	vmap_area much later (rel_orphan_vmalloc checks the live areas);
#   __kthread_create_on_node: the name of a kernel thread started from
#	module code (khugepaged_scan restarts khugepaged), freed when that
#	thread exits; rel_orphan_task_stacks checks no thread runs
#	unloaded code.
rel_orphan_slab_scan() {
	local d
	for d in /sys/kernel/debug/slab/*; do
		[ -r "$d/alloc_traces" ] && [ "${d##*/}" != vmap_area ] || continue
		awk -v c="${d##*/}" '
			function flush() {
				if (orphan && !benign)
					printf "%s: %s", c, block
				block = ""; orphan = 0; benign = 0
			}
			/^ *[0-9]+ / {
				flush()
				benign = /__kthread_create_on_node\+/
			}
			{ block = block $0 "\n" }
			/0xffffffff[c-f][0-9a-f]{7}([^0-9a-f]|$)/ { orphan = 1 }
			/arch_ftrace_update_trampoline/ { benign = 1 }
			END { flush() }' "$d/alloc_traces"
	done
}

# The same after letting deferred frees happen: unused dentries and
# inodes pin the kernfs nodes of removed sysfs files until evicted, and
# RCU frees come later.  Retries for up to 30 s; prints what remains.
rel_orphan_slab_objects() {
	local deadline out
	deadline=$(( $(now_cs) + 3000 ))
	while :; do
		echo 2 >/proc/sys/vm/drop_caches
		out=$(rel_orphan_slab_scan)
		[ -n "$out" ] && [ "$(now_cs)" -lt "$deadline" ] || break
		sleep 2
	done
	[ -z "$out" ] || printf '%s\n' "$out"
}

# Live vmalloc areas whose caller is unloaded module code.
rel_orphan_vmalloc() {
	awk '$3 ~ /^0xffffffff[c-f][0-9a-f]+$/' /proc/vmallocinfo
}

# Tasks whose kernel stack holds unloaded module code (would crash).
rel_orphan_task_stacks() {
	grep -l '0xffffffff[c-f][0-9a-f]\{7\}' /proc/[0-9]*/task/*/stack 2>/dev/null
}
