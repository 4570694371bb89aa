# SPDX-License-Identifier: GPL-2.0
# A module whose livepatch relocation names a symbol the kernel does not
# have (here: lru_add_drain at a symbol position that does not exist, as
# a rebuilt kernel that lost or renamed a function would look) must fail
# to load with the livepatch core naming the symbol, and leave nothing
# registered.  (vmlinux klp relocations are applied while the module
# loads, so the load fails before mmfix's init runs.)  /lib/mmfix/mmfix-badsym.ko is built by tests/run-all with
# scripts/build-module --klp-syms.
ko=/lib/mmfix/mmfix-badsym.ko
if [ ! -f $ko ]; then
	t_skip missing-symbol-fails-load "no $ko in this initrd"
	return 0
fi
mark=$(kmsg_mark)
if insmod $ko 2>/dev/null; then
	t_fail missing-symbol-fails-load "insmod succeeded"
	mmfix_unload
	return 0
fi
t_pass missing-symbol-fails-load
t_check missing-symbol-named-by-livepatch-core sh -c \
	"kmsg_since $mark | grep -q \"symbol position 9 for symbol 'lru_add_drain' in object 'vmlinux' not found\""
t_check missing-symbol-init-never-ran sh -c \
	"! kmsg_since $mark | grep -q 'mmfix: .* loaded on'"
t_check missing-symbol-leaves-nothing-registered \
	test ! -e /sys/kernel/mmfix -a ! -e /sys/kernel/livepatch/mmfix -a ! -e /sys/module/mmfix
# and the real module still loads afterwards
if mmfix_load; then
	t_pass missing-symbol-then-good-module-loads
	mmfix_unload || t_fail missing-symbol-then-good-module-unloads "$MMFIX_ERR"
else
	t_fail missing-symbol-then-good-module-loads "$MMFIX_ERR"
fi
