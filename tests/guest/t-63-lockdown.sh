# SPDX-License-Identifier: GPL-2.0
# Kernel lockdown (what Secure Boot turns on): a module not signed by a
# key the kernel trusts is refused, and "mmfixctl status" says why and
# what to do (docs/install.md, Secure Boot).  Runs only when the kernel
# was booted locked down (tests/host/dkms boots with lockdown=integrity
# and the dkms-built module, signed by a key the guest does not trust).

t_begin lockdown
grep -q " /sys/kernel/security " /proc/mounts ||
	mount -t securityfs securityfs /sys/kernel/security 2>/dev/null
mode=$(sed -n 's/.*\[\(.*\)\].*/\1/p' /sys/kernel/security/lockdown 2>/dev/null)
case $mode in
integrity|confidentiality) ;;
*)
	t_skip lockdown "kernel not locked down (${mode:-no lockdown file}); boot with lockdown=integrity"
	return 0 ;;
esac
mmfix_require_ko lockdown || return 0

mark=$(kmsg_mark)
if out=$(insmod "$MMFIX_KO" 2>&1); then
	t_fail lockdown-refuses-untrusted-module "insmod succeeded"
	mmfix_unload
	return 0
fi
t_pass lockdown-refuses-untrusted-module
t_check lockdown-kernel-says-why \
	sh -c "kmsg_since $mark | grep -q 'Lockdown: insmod: unsigned module loading is restricted'"
t_check lockdown-leaves-nothing test ! -e /sys/module/mmfix -a ! -e /sys/kernel/mmfix

out=$(mmfixctl status 2>&1)
rc=$?
# 6 not-loaded, 7 not-built (no mmfix.ko under /lib/modules here): the
# lifecycle exit codes of docs/mmfixctl.8
t_check mmfixctl-status-exits-not-loaded test "$rc" = 6 -o "$rc" = 7 || echo "rc $rc: $out"
t_check mmfixctl-status-names-lockdown-mode \
	sh -c "echo \"\$1\" | grep -q 'the kernel is locked down ($mode): an unsigned module cannot be loaded'" sh "$out"
t_check mmfixctl-status-points-at-mok-key \
	sh -c "echo \"\$1\" | grep -q 'sign mmfix.ko with the DKMS MOK key (/var/lib/dkms/mok.pub, enrolled with mokutil --import)'" sh "$out"
out=$(mmfixctl -j status 2>&1)
t_check mmfixctl-json-reports-lockdown \
	sh -c "echo \"\$1\" | grep -q '\"lockdown\":\"$mode\"' && echo \"\$1\" | grep -q '\"note\":'" sh "$out" ||
	echo "$out"
