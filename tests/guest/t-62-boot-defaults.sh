# SPDX-License-Identifier: GPL-2.0
# Boot-time defaults (contrib/modules-load.d/mmfix.conf and
# contrib/modprobe.d/mmfix.conf, installed by "make install-boot") applied
# the way systemd-modules-load does: every module the modules-load.d
# files name is loaded with kmod's modprobe, which finds it through
# modules.dep under /lib/modules/$(uname -r) (updates/dkms, as dkms
# installs it) and adds the options of /etc/modprobe.d.  Runs when the
# initramfs carries those files and kmod (tests/host/dkms puts them in).
# fixes: populate_drain anon_fault unmap_drain lru_add_free_dead khugepaged_scan

t_begin boot-defaults
if [ ! -f /etc/modules-load.d/mmfix.conf ] || [ ! -x /bin/kmod ] ||
   [ ! -f "/lib/modules/$(uname -r)/modules.dep.bin" ]; then
	t_skip boot-defaults "no modules-load.d file, kmod or modules.dep in this initramfs"
	return 0
fi
mkdir -p /tmp/kmod
ln -sf /bin/kmod /tmp/kmod/modprobe

# modules-load.d(5): one module per line, "#" and ";" start comments.
mods=$(sed -e 's/[#;].*//' /etc/modules-load.d/*.conf | tr -s ' \t' '\n\n' | grep -v '^$')
t_check modules-load-d-names-mmfix test "$mods" = mmfix || echo "modules: $mods"

want=" $(sed -n 's/^options mmfix enable=//p' /etc/modprobe.d/*.conf | tr ',' ' ') "
t_check modprobe-d-enables-fixes test -n "$(echo $want)"

mark=$(kmsg_mark)
for m in $mods; do
	out=$(/tmp/kmod/modprobe "$m" 2>&1) || echo "modprobe $m: $out"
done
if ! mmfix_loaded || ! loop_until 60 file_is /sys/kernel/livepatch/mmfix/transition 0; then
	t_fail modprobe-loads-mmfix-from-updates-dkms "mmfix not loaded or transition stuck: $out"
	return 0
fi
t_pass modprobe-loads-mmfix-from-updates-dkms

# Each fix named in modprobe.d is on where it applies and off (with the
# module's warning) where it does not; "recommended" stands for the fixes
# whose recommended file reads 1; every other fix stays off.
bad=
for d in /sys/kernel/mmfix/fixes/*; do
	f=${d##*/}
	case " $want " in
	*" $f "*) expect=$(cat "$d/applicable") ;;
	*" recommended "*) expect=$(cat "$d/recommended") ;;
	*) expect=0 ;;
	esac
	[ "$(cat "$d/enabled")" = "$expect" ] || bad="$bad $f=$(cat "$d/enabled")(want $expect)"
done
t_check modprobe-d-options-switch-named-fixes-on test -z "$bad" || echo "fixes:$bad"

# The recommended set per series, as docs/ABI/testing/sysfs-kernel-mmfix
# documents it: never one that does nothing on this kernel (populate_drain
# needs unmap_drain on 6.x for populate/munmap churn).
case $SERIES in
6.1|6.12) rec="populate_drain unmap_drain lru_add_free_dead khugepaged_scan" ;;
7.2) rec="populate_drain khugepaged_scan" ;;
7.3) rec="populate_drain anon_fault khugepaged_scan" ;;
*) rec="?" ;;
esac
got=
for d in /sys/kernel/mmfix/fixes/*; do
	[ "$(cat "$d/recommended")" = 1 ] && got="$got ${d##*/}"
done
t_check recommended-set-is-the-documented-one-for-$SERIES \
	test "$(echo $got | tr ' ' '\n' | sort)" = "$(echo $rec | tr ' ' '\n' | sort)" ||
	echo "recommended:$got (documented: $rec)"
t_check modprobe-no-warnings dmesg_clean_since "$mark"
mmfix_unload || t_fail boot-defaults-unload "$MMFIX_ERR"
