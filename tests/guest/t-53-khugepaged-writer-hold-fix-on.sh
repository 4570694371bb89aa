# SPDX-License-Identifier: GPL-2.0
# khugepaged_scan on: a writer holding one process's mmap_lock for 30 s,
# taken while khugepaged walks it, never puts khugepaged to sleep: others
# still collapse, the fix, the patch and the module all go within 5 s
# (tests/guest/lib-writer-hold.sh).  Sourced by /init after lib.sh.
# fixes: khugepaged_scan
. /tests/lib-writer-hold.sh
writer_hold_test on
