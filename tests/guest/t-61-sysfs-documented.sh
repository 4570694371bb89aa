# SPDX-License-Identifier: GPL-2.0
# Every file and directory mmfix creates under /sys/kernel/mmfix on this
# kernel is described by a "What:" entry of
# docs/ABI/testing/sysfs-kernel-mmfix (<fix> and <N> match any name),
# and every entry names something that exists.
# Runs when the initramfs carries the document at /etc/mmfix/ (the
# tests/host/dkms boots put it there).

ABI=/etc/mmfix/sysfs-kernel-mmfix
t_begin sysfs-documented
if [ ! -f "$ABI" ]; then
	t_skip sysfs-documented "no $ABI in this initramfs"
	return 0
fi
mmfix_require_ko sysfs-documented || return 0
if ! mmfix_load; then
	t_fail sysfs-documented-load "$MMFIX_ERR"
	return 0
fi

# "What: /sys/kernel/mmfix/fixes/<fix>/enabled" -> glob .../fixes/*/enabled
pats=$(sed -n 's/^What:[[:space:]]*//p' "$ABI" | sed 's/<[^>]*>/*/g; s#/$##')

# documented FILE: a What: entry matches it; a directory is also covered
# by the entries below it.
documented() {
	local p q
	for p in $pats; do
		q=$p
		while [ -n "$q" ]; do
			case $1 in $q) return 0 ;; esac
			[ -d "$1" ] || break
			q=${q%/*}
		done
	done
	return 1
}
undocumented=
for f in $(find /sys/kernel/mmfix -mindepth 1); do
	documented "$f" || undocumented="$undocumented ${f#/sys/kernel/mmfix/}"
done
t_check sysfs-files-all-documented-in-abi test -z "$undocumented" ||
	echo "not in $ABI:$undocumented"
# and the other way: every What: entry names something that exists
# (a pattern matches at least one file or directory).  A fix's own
# counters exist only where it applies: fixes/F/X with fixes/F/applicable
# 0 may be absent; so may entries of kernels no supported one is yet
# ("KernelVersion: none yet").
future=$(awk '/^What:/ { w = w " " $2; next }
	/^KernelVersion:/ { if ($0 ~ /none yet/) print w; w = ""; next }' "$ABI" |
	sed 's/<[^>]*>/*/g')
absent=
for p in $pats; do
	case " $future " in *" $p "*|*" $p/ "*) continue ;; esac
	set -- $p
	[ -e "$1" ] && continue
	case $p in
	/sys/kernel/mmfix/fixes/[a-z]*/*)
		f=${p#/sys/kernel/mmfix/fixes/}
		f=${f%%/*}
		! file_is "/sys/kernel/mmfix/fixes/$f/applicable" 0 || continue ;;
	esac
	absent="$absent ${p#/sys/kernel/mmfix/}"
done
t_check sysfs-abi-entries-all-exist test -z "$absent" ||
	echo "in $ABI, not under /sys/kernel/mmfix:$absent"
t_comment "sysfs: $(find /sys/kernel/mmfix -mindepth 1 | wc -l) entries checked against $(echo "$pats" | wc -l) What: lines"
mmfix_unload || t_fail sysfs-documented-unload "$MMFIX_ERR"
