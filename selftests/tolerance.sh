# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Where a captured frame may lie relative to its window, and how many may
# lie elsewhere: the guest suite's figures (lib.sh sources this file) and
# the host's (the host tests that judge a capture with `testbed/tb pcap`:
# userspace/tests/tdmgate_tdmd.sh).  No side effects but its variables
# and tdm_allowed.

# In the guest, for every test that judges departures from a capture (see
# tdmwin_gate.sh for why): [off - TOL_EARLY, off + len + TOL_LATE) in ns,
# and at most OUTLIER_PERMILLE per mille of the judged packets outside.
# They stand for the emulator's timing noise (TCG's timers, vCPU skew and
# stalls), which time dilation does not scale: they do not follow
# TDM_TIMESCALE.
# shellcheck disable=SC2034  # used by the tests that source this file
TOL_EARLY=${TDM_TOL_EARLY_NS:-1000000}
# shellcheck disable=SC2034
TOL_LATE=${TDM_TOL_LATE_NS:-1500000}
OUTLIER_PERMILLE=${TDM_OUTLIER_PERMILLE:-5}

# tdm_allowed N: outliers allowed among N judged packets.
tdm_allowed() { echo $(( $1 * OUTLIER_PERMILLE / 1000 )); }

# On the host (a real kernel, real timers; a capture on a veth peer, the
# sender on the other end), none of TCG's noise is there, and the window
# is judged [off - HOST_TOL_EARLY, off + len + HOST_TOL_LATE):
#   - early 0: the capture's stamp is taken in the sender's own send call
#     (veth's netif_rx stamps the frame as it enqueues it at the peer), on
#     the same clock as the gate's, after the gate let the frame go: a
#     frame stamped before its window left before it;
#   - late 200 us: the frames of one kick (up to 32, booked back to back
#     at the plan's link speed) are stamped one by one as the send call
#     hands them over, over up to 84 us (DPDK's net_af_packet, measured
#     on the 2-core development machine at load 6: transit from tdmgen's
#     TX stamp to the peer's median 11 us, p99 55 us), and an interrupt
#     may take the real-time sender between the gate's answer and the
#     kick.  Seven times tighter than the guest's TOL_LATE.
# The allowance is the guest's, OUTLIER_PERMILLE.
# shellcheck disable=SC2034
HOST_TOL_EARLY=${TDM_HOST_TOL_EARLY_NS:-0}
# shellcheck disable=SC2034
HOST_TOL_LATE=${TDM_HOST_TOL_LATE_NS:-200000}
