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
	ip netns exec "$A" "${TDM_PYU[@]}" send --dst "$TDM_IP_B" --port 5001 \
		--duration "$1" --rate 500 --size 200 >"$TDM_TMP/sender.out" &
	SENDER=$!
	TDM_BG_PIDS+=("$SENDER")
}
refcnt() { cat /sys/module/sch_tdmwin/refcnt 2>/dev/null || echo gone; }
# For tdm_wait_for, which re-runs its command (not a value computed once).
unused() { [ "$(refcnt)" = 0 ]; }
# The tdmwin qdisc has sent a packet through its gate.
sends() {
	tdm_snap Q "$A" "$D"
	[ "${Q[x.window_packets]:-0}" -gt 0 ]
}

# ---- delete under traffic ------------------------------------------------------

check "add" add
tdm_recv_start rx "$B" --bind "$TDM_IP_B" --ports 5001
bg_send 2.5
tdm_recv_wait rx 1	# traffic flows (python starts slowly under TCG)
check "delete the qdisc under traffic" tc_a qdisc del dev $D root
check_eq "no tdmwin left" "$(count)" 0
wait "$SENDER"
sent=$(tdm_sent "$TDM_TMP/sender.out")
tdm_recv_wait rx $((sent / 2))
tdm_recv_stop rx R
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
bg_send 600	# stopped below, once the restart is checked (TCG is slow)
tdm_recv_wait rx 1
check "add under traffic" add
tdm_wait_for 60 sends
check_num "first instance sends" "${Q[x.window_packets]:-0}" -gt 0
check "delete under traffic" tc_a qdisc del dev $D root
tdm_wait_for 60 unused
check "rmmod under traffic" rmmod sch_tdmwin
check "module gone" test ! -d /sys/module/sch_tdmwin
check "load the module again" tdm_module_load
check "add again under traffic" add
tdm_wait_for 60 sends
check_num "the new instance sends" "${Q[x.window_packets]:-0}" -gt 0
kill -TERM "$SENDER"
wait "$SENDER"
sent=$(tdm_sent "$TDM_TMP/sender.out")
tdm_recv_wait rx $((sent / 2))
tdm_recv_stop rx R
check_num "traffic flowed through the restart" "${R[udp5001.n]:-0}" -ge $((sent / 2))
check_eq "no reordering" "${R[udp5001.reorder]:-x}" 0
tc_a qdisc del dev $D root

# ---- autoload by name ----------------------------------------------------------------------

inst=$(modinfo -n sch_tdmwin 2>/dev/null)
if [ -z "$inst" ]; then
	tdm_skip "autoload" "sch_tdmwin is not installed in /lib/modules/$(uname -r) (testbed/guest/install-module)"
else
	tdm_log "installed: $inst"
	check_match "module alias net-sch-tdmwin" "$(modinfo -F alias "$inst")" "^net-sch-tdmwin$"
	check_match "modprobe resolves net-sch-tdmwin" \
		"$(modprobe -R net-sch-tdmwin 2>&1)" "sch_tdmwin"
	tdm_wait_for 60 unused
	check "rmmod before autoload" rmmod sch_tdmwin
	check "tc qdisc add loads the module by itself" add
	check "module loaded by the kernel" test -d /sys/module/sch_tdmwin
	check_eq "the qdisc is there" "$(count)" 1
	tc_a qdisc del dev $D root
	if [ -n "${TDM_KO:-}" ] && ! cmp -s "$inst" "$TDM_KO"; then
		tdm_log "the installed module differs from $TDM_KO: reloading the build"
		tdm_wait_for 60 unused
		rmmod sch_tdmwin && insmod "$TDM_KO"
	fi
fi
# ---- a namespace deleted with packets waiting in the qdisc ----------------------

# Deleting a namespace must dismantle its tdmwin qdiscs, with packets in
# them, and release the module.  Note: a packet of a local socket pins the
# socket, and the socket its namespace, until the packet is freed; so
# packets of local sockets held forever (hold, like sch_plug) keep a deleted
# namespace alive.  Here the waiting packets are either local ones that
# leave at a window, or packets the kernel itself sends (ICMP errors) held
# on hold.
ns_probe() { # DESC HOW [TDMWIN-ARGS...]
	local desc=$1 how=$2 c mac_c mac_d q=
	shift 2
	setup_ns C
	c=$C
	ip -n "$c" link add tdmC type veth peer name tdmD netns "$B"
	ip -n "$c" addr add 198.18.1.1/24 dev tdmC
	ip -n "$B" addr add 198.18.1.2/24 dev tdmD
	ip -n "$c" link set tdmC up
	ip -n "$B" link set tdmD up
	mac_c=$(nsx "$c" cat /sys/class/net/tdmC/address)
	mac_d=$(nsx "$B" cat /sys/class/net/tdmD/address)
	ip -n "$c" neigh replace 198.18.1.2 lladdr "$mac_d" dev tdmC nud permanent
	ip -n "$B" neigh replace 198.18.1.1 lladdr "$mac_c" dev tdmD nud permanent
	if [ "$how" = local ]; then
		local_waiting "$desc"
	else
		check "$desc: tdmwin in a third namespace" tdm_tc -n "$c" qdisc add \
			dev tdmC root handle 1: tdmwin "$@"
		# UDP to a closed port of C: C's kernel answers with ICMP errors.
		nsx "$B" "${TDM_PYC[@]}" send --dst 198.18.1.1 --port 9 --count 5 >/dev/null
		tdm_wait_for 30 waiting
		q=$(qlen_c)
	fi
	[ -n "$q" ] && check_num "$desc: packets wait" "$q" -ge 1
	check_num "$desc: module in use" "$(refcnt)" -ge 1
	ip netns del "$c"
	NS_LIST=("${NS_LIST[@]/$c/}")
	# The namespace is dismantled by a workqueue: wait for its qdiscs to go.
	tdm_wait_for 60 unused
	check_eq "$desc: namespace deleted: the module is released" "$(refcnt)" 0
}

qlen_c() { # the queue of ns_probe's qdisc
	tdm_tc -n "$c" -j -s qdisc show dev tdmC | py flat --kind tdmwin | sed -n 's/^qlen=//p'
}
waiting() { [ "$(qlen_c)" -ge 1 ]; }

# local_waiting DESC: ns_probe's qdisc in $c with local packets waiting for
# its window; sets ns_probe's q to its queue as read before the window
# opened, or leaves it empty (nothing to judge).  The packets must still
# wait when the queue is read, however slow the machine: a tc call or a
# python start takes seconds on a debug kernel under TCG, and the
# namespace's setup once took longer than the 8 s the window was placed
# ahead (its opening was computed before the setup).  So the opening is
# computed from the clock here, after the setup, 8 s ahead on a cycle of
# 10 s (the longest the qdisc takes); and if the queue was read only after
# the window opened (the packets may have left), the qdisc is added again
# with the window further ahead and the packets sent again, rather than
# judging an emptied queue.
local_waiting() {
	local desc=$1 lead open win t
	for lead in 8000 9000 9800; do
		open=$(( $(tdm_now CLOCK_REALTIME) / 1000000 + lead ))
		win=$((open % 10000))
		if [ "$win" -gt 9900 ]; then
			# The window would not fit before the cycle's end: the next
			# cycle's start, later still.
			open=$((open + 10000 - win))
			win=0
		fi
		tdm_tc -n "$c" qdisc del dev tdmC root 2>/dev/null
		check "$desc: tdmwin in a third namespace (window in $lead ms)" \
			tdm_tc -n "$c" qdisc add dev tdmC root handle 1: tdmwin \
			cycle-time 10s base-time 0 window "${win}ms" 100ms \
			clockid CLOCK_REALTIME || return 1
		nsx "$c" "${TDM_PYC[@]}" send --dst 198.18.1.2 --port 5001 --count 50 >/dev/null
		q=$(qlen_c)
		# The clock after the read: before the opening, the read was too.
		t=$(( $(tdm_now CLOCK_REALTIME) / 1000000 ))
		if [ "$t" -lt "$open" ]; then
			tdm_log "$desc: queue read $((open - t)) ms before the window opens"
			return 0
		fi
		q=
		tdm_log "$desc: the queue was read $((t - open)) ms after the window opened (a slow machine): again, with the window further ahead"
	done
	tdm_skip "$desc: packets wait" "the queue was read after the window opened 3 times, 8-9.8 s after the qdisc was added"
}

ns_probe "local packets waiting for a window" local
ns_probe "kernel packets on hold" kernel cycle-time 2s base-time 0 window 1s 100ms hold
check "rmmod after the namespaces went" rmmod sch_tdmwin

check "module loaded at the end" tdm_module_load

tdm_exit
