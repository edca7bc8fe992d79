#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# DPDK past the qdisc, gated by libtdmgate: tdmgen --stack dpdk sends
# through DPDK's ethdev on a net_af_packet vdev (no hugepages, no PCI) over
# a device whose root qdisc is tdmwin.  The PMD's packet socket bypasses
# the qdisc (PACKET_QDISC_BYPASS, __dev_direct_xmit()): it holds nothing and
# counts nothing, and
#
#   1. without the library (--ungated) frames leave all over the cycle
#      although tdmwin is the root qdisc: the gap this closes;
#      tdmctl doctor warns of the PMD's packet socket beside tdmwin;
#   2. with it (tdmgen follows the qdisc's plan through libtdmgate and
#      waits for each burst's instant: net_af_packet offers no TX
#      timestamp, so the gating is in software, and said so) they leave
#      inside the windows, and after a `tc qdisc change` to a pending plan,
#      inside the new plan's windows from its base time on.
#
#   ns A (tdmA 198.18.0.1, tdmwin root; tdmgen DPDK)  ==veth==  ns B (tdmB: tcpdump, receiver)
#
# Where they leave: the bypassing packet socket hands frames to the driver
# without the device's TX taps, so a capture on tdmA sees none; tcpdump
# stamps them at tdmB, the sender's wire.  The capture is judged on the
# host (tb pcap), with the tolerances and allowance of tdmwin_gate.sh
# (lib.sh), on a quiet host.  The gated sender is the release build at
# real-time priority (chrt -f), as tdmgate_afxdp.sh runs its own.

# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tdmgate_lib.sh
. "$(dirname "$0")/tdmgate_lib.sh"
tdm_require tcpdump chrt ldd

tdm_use_build "$TDM_ROOT/build/us" "" TDMGEN=tdmgen TDMCTL=tdmctl
{ [ -x "$TDMGEN" ] && [ -x "$TDMCTL" ]; } || tdm_skip_all "tdmgen, tdmctl not built (make tools)"
[[ $(ldd "$TDM_ROOT/build/us/tdmgen") == *librte_eal* ]] ||
	tdm_skip_all "tdmgen built without DPDK (libdpdk-dev)"
# Starting a net_af_packet port sets the device's MAC address (ethdev
# replays it, the same one), and the kernel flushes the device's
# neighbours on that, permanent ones too: each run gets it back first.
gen() {
	ip -n "$A" neigh replace "$TDM_IP_B" lladdr "$TDM_MAC_B" dev $D nud permanent
	tdmgate_send dpdk "$@"
}
tdmgate_setup

# ---- 1. without the library: the qdisc does not see DPDK's frames -------------

mark=$(tdm_hostload_mark)
tdmgate_ungated
check_match "ungated: said so, and the PMD's launch time" "$GEN" \
	'"stack":"dpdk","gate":"none","gating":"none","launch_time":"not offered by the PMD"'
check_eq "ungated: the receiver got all" "${R[udp5001.n]:-x}:${R[udp5001.lost]:-x}" 600:0

# tdmctl doctor sees the PMD's packet socket (a TX ring bound to tdmA)
# beside the qdisc: a warning naming tdmgen (bypass.rst, "Kernel and
# bypass traffic on one device").
modprobe -q packet_diag 2>/dev/null
ip -n "$A" neigh replace "$TDM_IP_B" lladdr "$TDM_MAC_B" dev $D nud permanent
tdmgate_doctor dpdk "the DPDK sender's TX ring" \
	'WARN +.* on tdmA, beside its tdmwin qdisc; 1 packet socket with a TX ring \(pid @PID@ tdmgen, inode [0-9]+\)$' \
	'OK +.*; no packet socket with a TX ring$'

# ---- 2. gated by libtdmgate, through a plan change ----------------------------

tdmgate_gated "$mark"
check_match "gated: software gating by libtdmgate, the PMD's launch time said" "$GEN" \
	'"gate":"lib","gating":"software","launch_time":"not offered by the PMD"'

tdm_exit
