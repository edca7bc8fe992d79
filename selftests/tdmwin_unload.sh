#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Teardown: delete the qdisc under traffic; the module cannot be removed
# while a qdisc uses it; stop-and-restart under traffic (delete, rmmod,
# load, add again); a namespace deleted with packets held in the qdisc
# releases the module; autoload by name when the module is installed in the
# module tree (6.1 asks for "sch_tdmwin", 6.12 for the alias
# "net-sch-tdmwin").  Leaves the module loaded.

# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
tdm_require rmmod

setup_ns A B || tdm_skip_all "cannot create network namespaces"
tdm_veth "$A" "$B" || tdm_skip_all "cannot create a veth pair"
D=tdmA
declare -A Q R

tc_a() { tdm_tc -n "$A" "$@"; }
add() {
	tc_a qdisc add dev "$D" root handle 1: tdmwin cycle-time 20ms base-time 0 \
		window 0 5ms "$@"
}
count() { tc_a -j qdisc show dev $D | py flat --kind tdmwin | sed -n 's/^count=//p'; }
bg_send() { # SECONDS
	nsx "$A" "$TDM_PY" "$TDM_UTIL" send --dst "$TDM_IP_B" --port 5001 \
		--duration "$1" --rate 500 --size 200 >"$TDM_TMP/sender.out" &
	SENDER=$!
	TDM_BG_PIDS+=("$SENDER")
}
refcnt() { cat /sys/module/sch_tdmwin/refcnt 2>/dev/null || echo gone; }

# ---- delete under traffic ------------------------------------------------------

check "add" add
tdm_recv_start rx "$B" --bind "$TDM_IP_B" --ports 5001
bg_send 2.5
sleep 1
check "delete the qdisc under traffic" tc_a qdisc del dev $D root
check_eq "no tdmwin left" "$(count)" 0
wait "$SENDER"
sleep 0.3
tdm_recv_stop rx R
sent=$(sed -n 's/^sent=\([0-9]*\).*/\1/p' "$TDM_TMP/sender.out")
tdm_log "sent $sent, received ${R[udp5001.n]:-0} (packets queued at the delete are dropped)"
check_num "traffic went on after the delete" "${R[udp5001.n]:-0}" -ge $((sent / 2))
check_num "the sender saw no error" "$(sed -n 's/.*errors=\([0-9]*\).*/\1/p' "$TDM_TMP/sender.out")" -eq 0

# ---- the module is pinned by its qdiscs -------------------------------------------

check "add again" add
check_fails "rmmod refused while a qdisc uses the module" rmmod sch_tdmwin
check "module still loaded" test -d /sys/module/sch_tdmwin
check "qdisc still works" tc_a -s qdisc show dev $D
tc_a qdisc del dev $D root

# ---- stop and restart under traffic ----------------------------------------------------

tdm_recv_start rx "$B" --bind "$TDM_IP_B" --ports 5001
bg_send 4
sleep 0.5
check "add under traffic" add
sleep 0.7
tdm_snap Q "$A" $D
check_num "first instance sends" "${Q[x.window_packets]:-0}" -gt 0
check "delete under traffic" tc_a qdisc del dev $D root
tdm_wait_for 5 test "$(refcnt)" = 0
check "rmmod under traffic" rmmod sch_tdmwin
check "module gone" test ! -d /sys/module/sch_tdmwin
check "load the module again" tdm_module_load
check "add again under traffic" add
sleep 0.7
tdm_snap Q "$A" $D
check_num "the new instance sends" "${Q[x.window_packets]:-0}" -gt 0
wait "$SENDER"
sleep 0.3
tdm_recv_stop rx R
sent=$(sed -n 's/^sent=\([0-9]*\).*/\1/p' "$TDM_TMP/sender.out")
check_num "traffic flowed through the restart" "${R[udp5001.n]:-0}" -ge $((sent / 2))
check_eq "no reordering" "${R[udp5001.reorder]:-x}" 0
tc_a qdisc del dev $D root

# ---- a namespace deleted with packets held -------------------------------------------

setup_ns C
ip -n "$C" link add tdmC type veth peer name tdmD
ip -n "$C" addr add 198.18.1.1/24 dev tdmC
ip -n "$C" link set tdmC up
ip -n "$C" link set tdmD up
ip -n "$C" neigh replace 198.18.1.2 lladdr 02:00:00:00:00:02 dev tdmC nud permanent
check "tdmwin on hold in a third namespace" tdm_tc -n "$C" qdisc add dev tdmC root \
	handle 1: tdmwin cycle-time 20ms window 0 5ms hold
nsx "$C" "$TDM_PY" "$TDM_UTIL" send --dst 198.18.1.2 --port 5001 --count 50 >/dev/null
check_eq "50 packets held" "$(tdm_tc -n "$C" -j -s qdisc show dev tdmC |
	py flat --kind tdmwin | sed -n 's/^qlen=//p')" 50
check_num "module in use" "$(refcnt)" -ge 1
ip netns del "$C"
NS_LIST=("${NS_LIST[@]/$C/}")
# The namespace is dismantled by a workqueue: wait for its qdiscs to go.
tdm_wait_for 10 test "$(refcnt)" = 0
check_eq "namespace deleted: the module is released" "$(refcnt)" 0
check "rmmod after the namespace went" rmmod sch_tdmwin
check "load the module again" tdm_module_load

# ---- autoload by name ----------------------------------------------------------------------

inst=$(modinfo -n sch_tdmwin 2>/dev/null)
if [ -z "$inst" ]; then
	tdm_skip "autoload" "sch_tdmwin is not installed in /lib/modules/$(uname -r) (tools/testbed/install-module)"
else
	tdm_log "installed: $inst"
	check_match "module alias net-sch-tdmwin" "$(modinfo -F alias "$inst")" "^net-sch-tdmwin$"
	check_match "modprobe resolves net-sch-tdmwin" \
		"$(modprobe -R net-sch-tdmwin 2>&1)" "sch_tdmwin"
	tdm_wait_for 5 test "$(refcnt)" = 0
	check "rmmod before autoload" rmmod sch_tdmwin
	check "tc qdisc add loads the module by itself" add
	check "module loaded by the kernel" test -d /sys/module/sch_tdmwin
	check_eq "the qdisc is there" "$(count)" 1
	tc_a qdisc del dev $D root
	if [ -n "${TDM_KO:-}" ] && [ "$(modinfo -F srcversion "$inst")" != \
		"$(modinfo -F srcversion "$TDM_KO")" ]; then
		tdm_log "the installed module differs from $TDM_KO: reloading the build"
		tdm_wait_for 5 test "$(refcnt)" = 0
		rmmod sch_tdmwin && insmod "$TDM_KO"
	fi
fi
check "module loaded at the end" tdm_module_load

tdm_exit
