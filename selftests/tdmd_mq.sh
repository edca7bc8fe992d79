#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tdmd on every TX queue: a member on a veth with 4 TX queues and
# "queues all", "txtime on" in its tdm.conf, a coordinator on the peer.
# The member puts mq at the root and a tdmwin under each queue, each with
# an etf child of the configured delta and txtime on; every instance reads
# back the same plan, and so after a two-phase change pushed by the
# coordinator.  The device's lease is set and renewed (no expiry over two
# leases).  A hold (ptp_policy require by reload, ptp4l absent) reaches
# all four, and the release too.  Queues the device lacks, and txtime at
# the root of a multi-queue device, are refused at start with their
# reason.  The kernel side of mq and txtime is tdmwin_mq.sh's and
# tdmwin_txtime.sh's.

# shellcheck source=tdmd_lib.sh
. "$(dirname "$0")/tdmd_lib.sh"
tdmd_require

NQ=4
MQ=100:
DELTA=2000000

setup_ns A B || tdm_skip_all "cannot create network namespaces"
tdm_veth "$A" "$B" $NQ || tdm_skip_all "cannot create a $NQ-queue veth pair"
tdmd_key "$TDMD_KEY"

# The lease: long against the member's own delays on a slow guest, as in
# tdmd_lease.sh.
per_call_ms=$(tdm_tc_call_ms "$A")
LEASE_MS=$(( per_call_ms * 5 < 1000 ? 1000 : (per_call_ms * 5 + 999) / 1000 * 1000 ))
tdm_log "one tc call: ${per_call_ms} ms; lease ${LEASE_MS} ms"

plan() { # FILE WINDOW
	cat >"$1" <<PLAN
[global]
lead_time  2s
base_align 0
clock      tai
[auto]
senders   a
window    $2
dead_time 1ms
PLAN
}
plan "$TDM_TMP/plan1.conf" 2ms
plan "$TDM_TMP/plan2.conf" 3ms

member_conf() { # FILE KEY=VALUE...
	local f=$1
	shift
	tdmd_member_conf "$f" a interface=tdmA "coordinator=$TDM_IP_B:$TDMD_PORT" \
		queues=all handle=$MQ txtime=on etf_delta=${DELTA}ns \
		lease=${LEASE_MS}ms ptp_policy=warn "ptp_socket=$TDM_TMP/no-ptp4l" "$@"
}

# ---- refused at start -------------------------------------------------------------
# Both tdmd at once (a start takes a second or two here); each writes
# its output and exit status into $TDM_TMP/NAME.out.
REFUSING=()
refuse() { # NAME KEY=VALUE...
	local name=$1
	shift
	member_conf "$TDM_TMP/$name.conf" "control_socket=$TDM_TMP/$name.sock" "$@"
	(ip netns exec "$A" timeout 20 "$TDMD" -f "$TDM_TMP/$name.conf" \
		>"$TDM_TMP/$name.out" 2>&1; echo "exit $?" >>"$TDM_TMP/$name.out") &
	REFUSING+=($!)
}
refused() { # NAME DESCRIPTION MESSAGE
	local out
	out=$(cat "$TDM_TMP/$1.out")
	check_match "$2: refused" "$out" '^exit [1-9]'
	check_match "$2: says why" "$out" "$3"
}
refuse bad1 "queues=1 4"
refuse bad2 queues=root
wait "${REFUSING[@]}"
refused bad1 "a queue the device lacks" "queues: tdmA has no TX queue 4 \\(it has 4: 0 to 3\\)"
refused bad2 "txtime at the root of the 4-queue device" \
	"txtime: tdmA has 4 TX queues .*set 'queues all'"
check_eq "nothing was installed" "$(tdm_tc -n "$A" -j qdisc show dev tdmA |
	py flat --kind tdmwin | sed -n 's/^count=//p')" 0

# ---- programmed: mq, a tdmwin and an etf on every queue, one plan -----------------
tdmd_coord_conf "$TDM_TMP/coord.conf" "$TDM_TMP/plan1.conf"
tdmd_start coord "$B" "$TDM_TMP/coord.conf" || tdmd_fatal "the coordinator starts"
member_conf "$TDM_TMP/m.conf"
tdmd_start m "$A" "$TDM_TMP/m.conf" || tdmd_fatal "the member starts"

# snap: the device's qdiscs now, one tc call flattened into T ("3.kind",
# "3.options.hold", ...), and Q[I]: the index in T of queue I's tdmwin.
declare -A T Q
snap() {
	local line k
	T=() Q=()
	while IFS= read -r line; do
		T["${line%%=*}"]=${line#*=}
	done < <(tdm_tc -n "$A" -j -s qdisc show dev tdmA | py json)
	for ((k = 0; k < ${T[len]:-0}; k++)); do
		[ "${T[$k.kind]}" = tdmwin ] || continue
		Q[$(( ${T[$k.parent]#"$MQ"} - 1 ))]=$k
	done
}
# at PARENT: the index in T of the qdisc at PARENT (root, or MAJ:MIN),
# "none" if none.
at() {
	local k
	for ((k = 0; k < ${T[len]:-0}; k++)); do
		if [ "${T[$k.parent]:-}" = "$1" ] ||
		   [ "$1:${T[$k.root]:-}" = root:true ]; then
			echo "$k"
			return
		fi
	done
	echo none
}
# The plan queue I runs, as its dump in the last snap says (not its
# state or lease).
plan_sig() { # I
	local k p=${Q[$1]:-none}.options.
	for k in "${!T[@]}"; do
		case $k in
		"$p"hold|"$p"lease*|"$p"unconfirmed) ;;
		"$p"*) echo "${k#"$p"}=${T[$k]}" ;;
		esac
	done | sort
}
# every_queue KEY VALUE: every instance's dump has KEY=VALUE.
every_queue() {
	local i
	snap
	for i in $(seq 0 $((NQ - 1))); do
		[ "${T[${Q[$i]:-none}.$1]:-}" = "$2" ] || return 1
	done
}
check "every queue runs plan v1" tdm_wait_for 30 every_queue options.plan_version 1 ||
	tdmd_show_logs

snap
check_eq "mq at the root, handle $MQ" "${T[$(at root).kind]:-none}:${T[$(at root).handle]:-}" \
	"mq:$MQ"
check_eq "four tdmwin instances" "${#Q[@]}" $NQ
same_plan() { # DESC
	local i sig0 sig
	snap
	for i in $(seq 0 $((NQ - 1))); do
		sig=$(plan_sig "$i")
		[ "$i" = 0 ] && sig0=$sig
		check_eq "$1: queue $i reads back queue 0's plan" "$sig" "$sig0"
	done
	[ -n "$sig0" ] || tdm_fail "$1: no plan read back"
}
same_plan "v1"
for i in $(seq 0 $((NQ - 1))); do
	k=${Q[$i]:-none}
	h=${T[$k.handle]:-none}
	e=$(at "${h}1")
	check_eq "queue $i: txtime on" "${T[$k.options.txtime]:-}" true
	check_eq "queue $i: an etf child at ${h}1" "${T[$e.kind]:-none}" etf
	check_eq "queue $i: etf delta $DELTA" "${T[$e.options.delta]:-}" $DELTA
	check_eq "queue $i: etf keeps the stamps (skip_sock_check)" \
		"${T[$e.options.skip_sock_check]:-}" on
	check_eq "queue $i: the device's lease" "${T[$k.options.lease]:-none}" \
		$((LEASE_MS * 1000000))
done

declare -A S
tdmd_jsnap S m status
check_eq "status: the mq tree" "${S[instances.tree]:-}" mq
for i in $(seq 0 $((NQ - 1))); do
	check_eq "status: queue $i present, plan v1" \
		"${S[instances.list.$i.queue]:-}:${S[instances.list.$i.present]:-}:${S[instances.list.$i.plan_version]:-}" \
		"$i:true:1"
done
check_match "tdmctl status lists the queues" "$(tdmctl_at m status)" \
	"instances: 4 under mq 100:, launch times by etf \\(delta $DELTA ns\\)"

# ---- renewed: no expiry over two leases -----------------------------------------
sleep $((LEASE_MS * 2 / 1000))
snap
for i in $(seq 0 $((NQ - 1))); do
	k=${Q[$i]:-none}
	check_eq "queue $i: not held by the lease, no expiry" \
		"${T[$k.xstats.lease_held]:-${T[$k.lease_held]:-x}}:${T[$k.xstats.lease_expiries]:-${T[$k.lease_expiries]:-x}}" \
		0:0
done
tdmd_jsnap S m status
check_eq "the member renews" "${S[qdisc.lease.renewing]:-}" true
check_num "renewals over two leases" "${S[qdisc.lease.renewals]:-0}" -ge 4

# ---- a two-phase change reaches every queue -------------------------------------
check "plan v2 pushed" tdmctl_at coord -t 60 plan push "$TDM_TMP/plan2.conf"
check "every queue runs plan v2" tdm_wait_for 30 every_queue options.plan_version 2
same_plan "v2"
check_eq "v2 is the 3 ms window" "${T[${Q[0]:-none}.options.windows.0.length]:-}" 3000000

# ---- a hold reaches every queue -----------------------------------------------
check "not held under ptp_policy warn" every_queue options.hold false
sed -i 's/^ptp_policy warn$/ptp_policy require/' "$TDM_TMP/m.conf"
check "reload to ptp_policy require" tdmctl_at m reload
check "ptp4l absent: every queue held" tdm_wait_for 10 every_queue options.hold true
sed -i 's/^ptp_policy require$/ptp_policy warn/' "$TDM_TMP/m.conf"
check "reload to ptp_policy warn" tdmctl_at m reload
check "every queue released" tdm_wait_for 10 every_queue options.hold false

# On a failure, what the daemons said.
[ "$TDM_FAILS" = 0 ] || tdmd_show_logs 60
tdmd_finish
tdm_exit
