# SPDX-License-Identifier: GPL-2.0
# Load/unload soak: N cycles (4 in CI, 100 with mmfixtest.soak=full) of
# load -> switch every applicable fix (and lock stats) on -> off -> unload,
# while three workloads run (populate churn, threaded anonymous faults,
# an mm with many VMAs for khugepaged; paced in CI, flat out in full).  Then: every cycle completed and
# left nothing behind, the workloads' data checks passed, khugepaged is
# alive with its settings unchanged, khugepaged_scan's shadow variables
# were all freed, no slab object allocated by the unloaded module
# survives (slub_debug=U allocation traces) and slab/MemAvailable are
# back within bounds (MemAvailable counted with the free pages on per-CPU
# lists), and the kernel log is clean.
# Sourced by /init after lib.sh; best run with slub_debug=FZPU.

. /tests/lib-reliability.sh

t_begin soak
rel_require soak || return 0
mmfix_require_ko soak || return 0
if mmfix_loaded; then
	t_fail soak-starts-unloaded "mmfix is loaded before the soak"
	return 0
fi
# CI: two cycles each way of switching on (enable=, sysfs); a cycle takes
# 30-60 s on 6.x (two transitions under the workloads and slub_debug)
cycles=$(rel_size 4 100)
dwell=$(rel_size 0.2 1)
if rel_slub_debug; then
	t_pass soak-slub-debug-fzpu-active
else
	t_skip soak-slub-debug-fzpu-active "booted without slub_debug=FZPU: red zones and poisoning unchecked"
fi

# Which fixes apply (and the cursor gauge), from one load.
if ! mmfix_load; then
	t_fail soak-first-load "$MMFIX_ERR"
	return 0
fi
applicable=$(rel_applicable_fixes | paste -sd, -)
has_cursors=0
[ -f "$MMFIX_SYS/fixes/khugepaged_scan/cursors" ] && has_cursors=1
mmfix_unload || { t_fail soak-first-unload "$MMFIX_ERR"; return 0; }
t_comment "soak: $cycles cycles, applicable fixes: ${applicable:-none}"

# khugepaged scans often enough to be busy during the soak; its settings
# are then snapshotted and must not change.
khp_saved_scan=$(cat "$KHP/scan_sleep_millisecs")
khp_saved_alloc=$(cat "$KHP/alloc_sleep_millisecs")
echo 200 >"$KHP/scan_sleep_millisecs"
echo 200 >"$KHP/alloc_sleep_millisecs"
khp_settings=$(rel_khugepaged_settings)
khp_scans0=$(cat "$KHP/full_scans")

orphans0=$(rel_orphan_slab_objects)
[ -z "$orphans0" ] || printf '%s\n' "$orphans0" | head -n 80
t_check soak-no-slab-object-outlives-the-module-before-soak test -z "$orphans0"

sync
echo 3 >/proc/sys/vm/drop_caches
mem0=$(rel_meminfo)
mark=$(kmsg_mark soak)
rel_workloads_start

done_cycles=0 fail_load=0 fail_switch=0 fail_unload=0 leftovers=0 cursors_left=0
start=$(now_cs)
i=1
while [ $i -le "$cycles" ]; do
	# odd cycles switch the fixes on through enable=, even ones through sysfs
	if [ $((i % 2)) = 1 ] && [ -n "$applicable" ]; then
		mmfix_load "enable=$applicable"
	else
		mmfix_load
	fi || {
		fail_load=$((fail_load + 1))
		echo "cycle $i: load: $MMFIX_ERR"
		mmfix_unload
		i=$((i + 1))
		continue
	}
	rel_set_switches 1 || { fail_switch=$((fail_switch + 1)); echo "cycle $i: $REL_ERR"; }
	sleep "$dwell"
	rel_set_switches 0 || { fail_switch=$((fail_switch + 1)); echo "cycle $i: $REL_ERR"; }
	# Unpatch first and read the cursor gauge while the module is still
	# there: every shadow variable must be gone once the patch is off.
	echo 0 >"$MMFIX_KLP/enabled"
	if loop_until "$MMFIX_TRANSITION_TIMEOUT" test ! -d "$MMFIX_KLP"; then
		if [ "$has_cursors" = 1 ]; then
			c=$(cat "$MMFIX_SYS/fixes/khugepaged_scan/cursors")
			[ "$c" = 0 ] || { cursors_left=$((cursors_left + 1)); echo "cycle $i: $c cursors left after unpatching"; }
		fi
	fi
	if ! mmfix_unload; then
		fail_unload=$((fail_unload + 1))
		echo "cycle $i: unload: $MMFIX_ERR"
	elif [ -e "$MMFIX_SYS" ] || [ -e "$MMFIX_KLP" ] || [ -e /sys/module/mmfix ]; then
		leftovers=$((leftovers + 1))
		echo "cycle $i: left sysfs entries behind"
	else
		done_cycles=$((done_cycles + 1))
	fi
	[ $((i % 10)) != 0 ] || echo "cycle $i/$cycles done at uptime $(cut -d' ' -f1 /proc/uptime) s"
	i=$((i + 1))
done
secs=$(( ($(now_cs) - start) / 100 ))

rel_workloads_stop; work_rc=$?
work=$(rel_workloads_summary)
echo "cycles: $done_cycles/$cycles in ${secs}s; load failures $fail_load, switch failures $fail_switch, unload failures $fail_unload, leftovers $leftovers, cursors left $cursors_left"

t_check soak-all-cycles-load-switch-unload \
	test "$done_cycles:$fail_load:$fail_switch:$fail_unload" = "$cycles:0:0:0"
t_check soak-unload-leaves-no-sysfs-or-module test "$leftovers" = 0
if [ "$has_cursors" = 1 ]; then
	t_check soak-shadow-variables-freed-at-every-unpatch test "$cursors_left" = 0
else
	t_skip soak-shadow-variables-freed-at-every-unpatch "no khugepaged_scan/cursors in this module"
fi
if [ "$work_rc" = 0 ]; then
	t_pass soak-workloads-data-intact
else
	t_fail soak-workloads-data-intact "$REL_ERR"
fi

khp_pid=$(rel_khugepaged_pid)
t_check soak-khugepaged-alive test -n "$khp_pid"
t_check soak-khugepaged-kept-scanning test "$(cat "$KHP/full_scans")" -gt "$khp_scans0"
now_settings=$(rel_khugepaged_settings)
t_check soak-khugepaged-settings-unchanged test "$now_settings" = "$khp_settings" ||
	printf 'before:\n%s\nafter:\n%s\n' "$khp_settings" "$now_settings"
echo "$khp_saved_scan" >"$KHP/scan_sleep_millisecs"
echo "$khp_saved_alloc" >"$KHP/alloc_sleep_millisecs"

orphans=$(rel_orphan_slab_objects)
if [ -d /sys/kernel/debug/slab ] && rel_slub_debug; then
	[ -z "$orphans" ] || printf '%s\n' "$orphans" | head -n 80
	t_check soak-no-slab-object-outlives-the-module test -z "$orphans"
else
	t_skip soak-no-slab-object-outlives-the-module "no slab allocation traces (needs slub_debug=U and debugfs)"
fi
vm=$(rel_orphan_vmalloc)
[ -z "$vm" ] || echo "$vm"
t_check soak-no-vmalloc-area-outlives-the-module test -z "$vm"
stuck=$(rel_orphan_task_stacks)
[ -z "$stuck" ] || { echo "$stuck"; cat $stuck; }
t_check soak-no-task-runs-unloaded-code test -z "$stuck"

sync
echo 3 >/proc/sys/vm/drop_caches
mem1=$(rel_meminfo)
set -- $mem0 $mem1
sunreclaim_growth=$(( $4 - $1 ))
avail_drop=$(( $2 + $3 - $5 - $6 ))
echo "SUnreclaim ${1} -> ${4} kB, MemAvailable ${2} -> ${5} kB," \
	"per-CPU free lists ${3} -> ${6} kB"
# Bounds: a leak of one small object per cycle is what the allocation
# traces above catch; these catch bulk leaks (pages, big buffers).
t_check soak-unreclaimable-slab-growth-under-4mib test "$sunreclaim_growth" -lt 4096
t_check soak-memavailable-drop-under-32mib test "$avail_drop" -lt 32768

dmesg_clean_since "$mark" && t_pass soak-kernel-log-clean || t_fail soak-kernel-log-clean "see .out"

rel_report soak mode=$REL_MODE cycles=$cycles completed=$done_cycles \
	load_failures=$fail_load switch_failures=$fail_switch \
	unload_failures=$fail_unload leftovers=$leftovers \
	cursors_left=$cursors_left seconds=$secs \
	fixes=${applicable:-none} slub_debug=$(rel_slub_debug && echo FZPU || echo off) \
	orphan_sites=$(printf '%s\n' "$orphans" | grep -c '^[a-z].*: ') \
	sunreclaim_growth_kb=$sunreclaim_growth memavailable_drop_kb=$avail_drop \
	pcp_kb=$3/$6 \
	khugepaged_alive=$([ -n "$khp_pid" ] && echo yes || echo no) \
	workloads_ok=$([ "$work_rc" = 0 ] && echo yes || echo no) $work
