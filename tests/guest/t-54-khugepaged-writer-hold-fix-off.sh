# SPDX-License-Identifier: GPL-2.0
# khugepaged_scan off: the same as t-53 with the patch loaded and the fix
# off (tests/guest/lib-writer-hold.sh).  Sourced by /init after lib.sh.
# fixes: khugepaged_scan
. /tests/lib-writer-hold.sh
writer_hold_test off
