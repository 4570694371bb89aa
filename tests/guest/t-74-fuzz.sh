# SPDX-License-Identifier: GPL-2.0
# Fuzzed input: random writes (empty, > PAGE_SIZE, binary, signed,
# whitespace, partial, near misses) to every writable file under
# /sys/kernel/mmfix, and random enable= and fixes= values at load (fix
# names and "recommended").  Each is either a
# documented value (docs/ABI/testing/sysfs-kernel-mmfix) and accepted, or
# refused with EINVAL, the value read back unchanged, and a refused load
# leaves nothing behind.  Sizes: 150 writes per file and 12 loads in CI
# (a load takes 5-10 s on 6.1 under slub_debug),
# 1,000 each with mmfixtest.soak=full; seed mmfixtest.seed= (printed).
# Sourced by /init after lib.sh.

. /tests/lib-reliability.sh

t_begin fuzz
rel_require fuzz || return 0
mmfix_require_ko fuzz || return 0
writes=$(rel_size 150 1000)
loads=$(rel_size 12 1000)
seed=$(cmdline_get seed || echo 20261202)
mark=$(kmsg_mark fuzz)

if ! mmfix_load; then
	t_fail fuzz-load "$MMFIX_ERR"
	return 0
fi
fixes=$(rel_fixes | paste -sd, -)
applicable=$(rel_applicable_fixes | paste -sd, -)
# what "recommended" stands for in enable= and fixes= on this kernel
recommended=$(for f in "$MMFIX_SYS"/fixes/*/recommended; do
	[ "$(cat "$f")" != 1 ] || basename "${f%/recommended}"
done | paste -sd, -)

# The documented values of each writable file (sysfuzz SPEC).
specs= unknown=
for f in $(rel_writable_files); do
	case ${f#$MMFIX_SYS/} in
	fixes/*/enabled)
		if [ "$(cat "${f%/enabled}/applicable")" = 1 ]; then
			specs="$specs 01:$f"
		else
			specs="$specs 01x:$f"
		fi ;;
	stats/enabled|stats/lru_lock/enabled|stats/mmap_lock/enabled|stats/hold_time)
		specs="$specs 01:$f" ;;
	stats/reset)	specs="$specs 1w:$f" ;;
	*)		unknown="$unknown ${f#$MMFIX_SYS/}" ;;
	esac
done
t_check fuzz-every-writable-file-has-a-documented-spec test -z "$unknown" ||
	echo "writable files t-74 does not know (document them, add a spec):$unknown"

# shellcheck disable=SC2086
sysfuzz write -n "$writes" -s "$seed" $specs >/tmp/fuzz-write.out 2>&1
write_rc=$?
cat /tmp/fuzz-write.out
t_check fuzz-sysfs-writes-accepted-iff-documented-else-einval-unchanged test "$write_rc" = 0
nfiles=$(grep -c '^file=' /tmp/fuzz-write.out)
t_check fuzz-sysfs-every-file-fuzzed test "$nfiles" = "$(echo $specs | wc -w)"

if mmfix_unload; then
	t_pass fuzz-unload
else
	t_fail fuzz-unload "$MMFIX_ERR"
	return 0
fi

# Module parameters: every one the module lists (its .modinfo "parm="
# strings; busybox modinfo wants a modules.dep) must be known here:
# enable= and fixes= are fuzzed below, the bool allow_unverified is
# t-79's, the bool upgrade t-68's.
params=$(strings -a "$MMFIX_KO" | sed -n 's/^parm=\([^:]*\):.*/\1/p' | sort -u | paste -sd' ' -)
echo "module parameters: $params"
t_check fuzz-module-parameters-are-known test "$params" = "allow_unverified enable fixes upgrade"
sysfuzz param -n "$loads" -s "$seed" -k "$MMFIX_KO" -f "$fixes" -a "$applicable" \
	-r "$recommended" >/tmp/fuzz-param.out 2>&1
param_rc=$?
cat /tmp/fuzz-param.out
t_check fuzz-enable-parameter-accepted-iff-documented-else-einval test "$param_rc" = 0
sysfuzz param -p fixes -n "$loads" -s "$seed" -k "$MMFIX_KO" -f "$fixes" -a "$applicable" \
	-r "$recommended" >/tmp/fuzz-fixes.out 2>&1
fixes_rc=$?
cat /tmp/fuzz-fixes.out
t_check fuzz-fixes-parameter-accepted-iff-documented-else-einval test "$fixes_rc" = 0
t_check fuzz-refused-loads-leave-nothing \
	test ! -e /sys/module/mmfix -a ! -e "$MMFIX_SYS" -a ! -e "$MMFIX_KLP"

dmesg_clean_since "$mark" && t_pass fuzz-kernel-log-clean || t_fail fuzz-kernel-log-clean "see .out"

sum() { awk -v k="$1" '{ for (i = 1; i <= NF; i++) if (split($i, a, "=") == 2 && a[1] == k) s += a[2] } END { print s + 0 }' "$2"; }
rel_report fuzz mode=$REL_MODE seed=$seed files=$nfiles writes_per_file=$writes \
	writes=$(sum writes /tmp/fuzz-write.out) \
	accepted=$(sum accepted /tmp/fuzz-write.out) \
	rejected=$(sum rejected /tmp/fuzz-write.out) \
	empty=$(sum empty /tmp/fuzz-write.out) bad=$(sum bad /tmp/fuzz-write.out) \
	param_loads=$(sed -n 's/^param writes=\([0-9]*\).*/\1/p' /tmp/fuzz-param.out) \
	param_accepted=$(sed -n 's/^param .* accepted=\([0-9]*\).*/\1/p' /tmp/fuzz-param.out) \
	param_rejected=$(sed -n 's/^param .* rejected=\([0-9]*\).*/\1/p' /tmp/fuzz-param.out) \
	param_bad=$(sed -n 's/^param .* bad=\([0-9]*\).*/\1/p' /tmp/fuzz-param.out)
