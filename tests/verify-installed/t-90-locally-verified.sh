# SPDX-License-Identifier: GPL-2.0
# Locally verified build (tests/verify-installed/vm): on the older Debian
# build that mmfix-verify-build verified in the clean root, the module
# dkms rebuilt after the verification (/lib/mmfix/mmfix.ko) loads without
# allow_unverified=1 and /sys/kernel/mmfix/build reads "verified", and
# mmfixctl status says the build is verified; the module dkms built
# before it (/lib/mmfix/mmfix-unverified.ko) refuses to load with the
# unverified-build line.  Sourced by /init after lib.sh.

. /tests/lib-reliability.sh

KO_UNVER=/lib/mmfix/mmfix-unverified.ko

t_begin locally-verified
debver=$(sed -n 's/.* Debian \([^ ]*\).*/\1/p' /proc/version)
echo "running $(uname -r), Debian $debver"

mark=$(kmsg_mark locally-verified)
if mmfix_load; then
	t_pass locally-verified-module-loads-without-allow-unverified
	t_check locally-verified-build-reads-verified file_is "$MMFIX_SYS/build" verified
	mmfixctl status >/tmp/lv-status.txt 2>&1
	cat /tmp/lv-status.txt
	t_check locally-verified-status-says-verified grep -q '^build: *verified' /tmp/lv-status.txt
	mmfix_unload || t_fail locally-verified-unload "$MMFIX_ERR"
else
	t_fail locally-verified-module-loads-without-allow-unverified "$MMFIX_ERR"
fi
dmesg_since "$mark" | grep '^mmfix: '

mark=$(kmsg_mark unverified-before)
out=$(finit "$KO_UNVER" 2>&1); rc=$?
msgs=$(dmesg_since "$mark" | grep '^mmfix: ' | grep -v taint)
echo "finit: exit $rc: $out"
echo "$msgs"
if [ "$rc" = 0 ]; then
	t_fail module-built-before-verification-refuses "it loaded"
	mmfix_unload
else
	t_pass module-built-before-verification-refuses
fi
printf '%s\n' "$msgs" >/tmp/lv.msgs
t_check refusal-names-the-build-as-not-verified \
	grep -qF "mmfix: build $(uname -r) (Debian $debver) is not verified" /tmp/lv.msgs
