#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# AF_XDP past the qdisc, gated by libtdmgate: tdmgen --stack afxdp sends
# AF_XDP frames (copy mode on veth) on a device whose root qdisc is tdmwin.
# The frames never pass that qdisc (__dev_direct_xmit()): it holds nothing
# and counts nothing, and
#
#   1. without the library (--ungated) they leave all over the cycle
#      although tdmwin is the root qdisc: the gap this closes;
#   2. with it (tdmgen follows the qdisc's plan through libtdmgate and
#      waits for each frame's instant) they leave inside the windows, and
#      after a `tc qdisc change` to a pending plan, inside the new plan's
#      windows from its base time on, the old ones before it.
#
#   ns A (tdmA 198.18.0.1, tdmwin root; tdmgen AF_XDP)  ==veth==  ns B (tdmB: tcpdump, receiver)
#
# Where they leave: AF_XDP copy mode hands frames to the driver without the
# device's TX taps (no dev_queue_xmit_nit()), so a capture on tdmA sees
# none.  tcpdump stamps them at tdmB, the other end of the sender's veth:
# the sender's wire.  The capture is judged on the host (tb pcap), with the
# tolerances and allowance of tdmwin_gate.sh (lib.sh), on a quiet host.
#
# A software gate acts in its sender's thread: a preemption between the
# gate's answer and the kick makes frames late.  The gated sender runs as
# a deployment runs it, at real-time priority (chrt -f), and is the
# release build (the sanitizer build's slower frames run ungated, and in
# tdmctl doctor's check).

# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tdmgate_lib.sh
. "$(dirname "$0")/tdmgate_lib.sh"
tdm_require tcpdump chrt

tdm_use_build "$TDM_ROOT/build/us" "" TDMGEN=tdmgen TDMCTL=tdmctl
{ [ -x "$TDMGEN" ] && [ -x "$TDMCTL" ]; } || tdm_skip_all "tdmgen, tdmctl not built (make tools)"
gen() { tdmgate_send afxdp "$@"; }
tdmgate_setup

# ---- 1. without the library: the qdisc does not see AF_XDP -------------------

mark=$(tdm_hostload_mark)
tdmgate_ungated

# tdmctl doctor sees an AF_XDP sender beside the qdisc (one wire per
# device): by device with xsk_diag (6.12), else the namespace's count (6.1).
modprobe -q xsk_diag 2>/dev/null
tdmgate_doctor afxdp "the AF_XDP sender" \
	'WARN +no XDP program and 1 AF_XDP socket (\(1 with TX\) on tdmA|in its namespace).*beside its tdmwin' \
	'OK +no XDP program and 0 AF_XDP sockets'

# ---- 2. gated by libtdmgate, through a plan change ----------------------------

tdmgate_gated "$mark"
check_match "gated: software gating by libtdmgate, said" "$GEN" \
	'"gate":"lib","gating":"software"'
check_match "gated: launch time looked up and said" "$GEN" '"launch_time":"[a-z]'

tdm_exit
