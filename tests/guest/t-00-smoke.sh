# SPDX-License-Identifier: GPL-2.0
#
# t-00-smoke: the VM harness itself works on this kernel: we booted the
# kernel we meant to, and the interfaces every later test relies on are
# there.  Sourced by /init after /tests/lib.sh.

# The booted kernel is the build scripts/setup fetched for this series
# (catches a stale .cache or a wrong -kernel path).
if [ -z "$MMFIX_RELEASE" ]; then
	t_fail smoke-kernel-release "no expected release (mmfixtest.release= missing)"
elif [ "$(uname -r)" = "$MMFIX_RELEASE" ]; then
	t_pass smoke-kernel-release
else
	t_fail smoke-kernel-release "booted $(uname -r), expected $MMFIX_RELEASE"
fi

# The series the host thinks it tests matches the kernel's own version.
case $(uname -r) in
"$SERIES".*) t_pass smoke-series-matches-kernel ;;
*) t_fail smoke-series-matches-kernel "series $SERIES but uname -r is $(uname -r)" ;;
esac

t_check smoke-livepatch-sysfs test -d /sys/kernel/livepatch

t_check smoke-tracefs-mounted \
	grep -q '^tracefs /sys/kernel/tracing tracefs' /proc/mounts
t_check smoke-kprobe-events-available test -w /sys/kernel/tracing/kprobe_events

# Symbol addresses are visible to root: tests resolve non-exported
# functions (e.g. populate_vma_page_range) through /proc/kallsyms.
addr=$(grep -m1 ' populate_vma_page_range$' /proc/kallsyms | cut -d' ' -f1)
case $addr in
""|0000000000000000)
	t_fail smoke-kallsyms-visible "populate_vma_page_range address '${addr:-absent}'" ;;
*)	t_pass smoke-kallsyms-visible ;;
esac

# A marker written to /dev/kmsg can be found again (tests diff dmesg
# against transcripts after a marker).
kmsg_marker smoke
echo "mmfix-test: smoke after marker" >/dev/kmsg
if [ "$(dmesg_since smoke)" = "mmfix-test: smoke after marker" ]; then
	t_pass smoke-kmsg-marker
else
	t_fail smoke-kmsg-marker "dmesg after marker: '$(dmesg_since smoke | head -n 3)'"
fi

# The emulated CPU gets CMPXCHG16B's flags right, or has none (QEMU
# 7.2's TCG computes them from a stale lazy state, which crashes guests
# at random in SLUB's fast path: tests/vm/boot boots with -cpu max,-cx16).
if command -v cx16flags >/dev/null; then
	t_check smoke-cpu-cmpxchg16b-flags-right-or-absent cx16flags || :
else
	t_skip smoke-cpu-cmpxchg16b-flags-right-or-absent "no cx16flags in this initrd"
fi
