# SPDX-License-Identifier: GPL-2.0
#
# tests/guest/lib-stall.sh - stall a livepatch transition on purpose:
# uffdstall parks a thread on a userfaultfd fault inside
# populate_vma_page_range() (mlock of a uffd-registered range), where it
# sleeps until released; while it sleeps in the patched function (or in
# the kernel's own one) the transition cannot switch it.  Source after
# lib.sh (t-67, t-78):
#
#	stall_start a || t_fail ...       # STALL_PID, STALL_TID
#	echo 0 >$MMFIX_KLP/enabled        # the transition now waits for it
#	...
#	stall_release a                   # exit status of uffdstall
#
# uffdstall gives up by itself after 300 s: nothing sleeps forever.

# stall_start NAME: run uffdstall until /tmp/release-NAME exists; sets
# STALL_PID (uffdstall) and STALL_TID (the thread in the fault).
stall_start() {
	rm -f "/tmp/release-$1" "/tmp/stall-$1.out"
	uffdstall -r "/tmp/release-$1" -t 300 >"/tmp/stall-$1.out" 2>&1 &
	STALL_PID=$!
	STALL_TID=
	loop_until 30 grep -q '^stalled ' "/tmp/stall-$1.out" || return 1
	STALL_TID=$(sed -n 's/^stalled .* tid=\([0-9]*\) .*/\1/p' "/tmp/stall-$1.out")
	[ -n "$STALL_TID" ]
}

# stall_release NAME: resolve the fault; uffdstall must report success.
stall_release() {
	touch "/tmp/release-$1"
	loop_until 60 grep -q '^released ' "/tmp/stall-$1.out"
	wait "$STALL_PID"
}

# stack_of: the kernel stack of the stalled thread.
stack_of() { cat "/proc/$STALL_PID/task/$STALL_TID/stack" 2>/dev/null; }
