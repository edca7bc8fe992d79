# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# The gated half of the tests of senders past the qdisc (tdmgate_afxdp.sh,
# tdmgate_dpdk.sh; source after lib.sh): whatever the stack, the same
# frames through the same plan change, judged the same way.

# tdmgate_setup: namespaces A and B, a veth between them (tdmA in A,
# sender's device D; tdmB in B), tdmwin at tdmA's root with two windows,
# [2,6) and [12,15) ms of a 20 ms cycle (WINS, as tb pcap takes them; its
# base in BASE, its cycle in CYCLE), the pending plan's window WINS2, the
# associative arrays Q and R; skips the test where that cannot be made.
tdmgate_setup() {
	setup_ns A B || tdm_skip_all "cannot create network namespaces"
	tdm_veth "$A" "$B" || tdm_skip_all "cannot create a veth pair"
	D=tdmA
	CYCLE=20000000
	WINS="2000000:4000000,12000000:3000000"	# [2,6) ms and [12,15) ms
	WINS2="8000000:3000000"			# the pending plan: [8,11) ms
	declare -gA Q R
	check "add tdmwin: cycle 20ms, windows [2,6) and [12,15) ms, CLOCK_REALTIME" \
		tc_a qdisc add dev $D root handle 1: tdmwin cycle-time 20ms base-time 0 \
		window 2ms 4ms window 12ms 3ms clockid CLOCK_REALTIME link-speed 1000
	tdm_snap Q "$A" $D
	BASE=${Q[options.base_time]:-0}
}

tc_a() { tdm_tc -n "$A" "$@"; }

# tdmgate_doctor STACK WHAT WHILE_RE AFTER_RE: tdmctl doctor's tdm.bypass
# line (one wire per device, bypass.rst) while an ungated STACK sender
# runs on D, matching WHILE_RE (@PID@ in it: the sender's pid) within 20
# s, then once it is done, matching AFTER_RE.  WHAT names the sender in
# the checks.
tdmgate_doctor() {
	local stack=$1 what=$2 want=$3 after=$4 pid doc
	# nsenter execs tdmgen (ip netns exec may fork it): $! is the sender.
	nsenter --net="/run/netns/$A" "$TDMGEN" --stack "$stack" --ungated -I "$D" \
		-p 5009 -c 1000 -r 100pps -E 0 -q "$TDM_IP_B" >/dev/null \
		2>"$TDM_TMP/doctor-gen.err" &
	pid=$!
	TDM_BG_PIDS+=("$pid")
	want=${want//@PID@/$pid}
	# Until its socket exists: an AF_XDP sender binds it once its UMEM is
	# set up, DPDK's once the EAL has started the port (more than 0.5 s on
	# a loaded guest).
	tdm_wait_for 20 tdmgate_bypass_matches "$want"
	doc=$(tdmgate_bypass_line)
	tdm_log "doctor while $what runs: $doc"
	check_match "doctor: $what beside tdmwin, a warning" "$doc" "$want"
	kill -TERM "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	check_match "doctor: $what gone once it is done" "$(tdmgate_bypass_line)" "$after"
}

tdmgate_bypass_line() {
	nsx "$A" "$TDMCTL" doctor -i "$D" 2>&1 | grep '^tdm.bypass'
}

tdmgate_bypass_matches() {	# RE, as check_match matches
	tdmgate_bypass_line | grep -qiE -- "$1"
}

# tdmgate_send STACK [chrt -f 50 BUILD/tdmgen] ARGS...: tdmgen --stack
# STACK in A on D, 200-byte datagrams to B's port 5001, no end markers,
# its JSON summary on stdout and its stderr in $TDM_TMP/gen.err; $TDMGEN
# unless a chrt command line names another.
tdmgate_send() {
	local stack=$1 bin=("$TDMGEN")
	shift
	[ "$1" = chrt ] && { bin=("${@:1:4}"); shift 4; }
	nsx "$A" "${bin[@]}" --stack "$stack" -I "$D" -p 5001 -s 200 -E 0 -j "$@" \
		"$TDM_IP_B" 2>"$TDM_TMP/gen.err"
}

# tdmgate_capture NAME GEN_ARGS...: capture at tdmB and receive while tdmgen sends.
tdmgate_capture() {
	local name=$1 out
	shift
	tdm_cap_start "$name" "$B" tdmB "udp dst port 5001" || return 1
	tdm_recv_start "rx$name" "$B" --bind "$TDM_IP_B" --ports 5001 || return 1
	out=$(gen "$@")
	check_eq "$name: tdmgen sent" $? 0
	sed 's/^/# /' "$TDM_TMP/gen.err"
	tdm_log "$name: $out"
	GEN=$out
	tdm_recv_wait "rx$name" "$(sed -n 's/.*"sent":\([0-9]*\).*/\1/p' <<<"$out")" 30
	tdm_cap_stop "$name"
	tdm_recv_stop "rx$name" R
}

# tdmgate_ungated: the caller's sender without the library (--ungated),
# 600 frames at 1000/s, captured at tdmB: the qdisc sees none of them,
# and many leave outside its windows (judged on the host).  The sender's
# summary in GEN, the receiver's counts in R.
tdmgate_ungated() {
	tdmgate_capture ungated --ungated -c 600 -r 1000pps
	check_match "ungated: said so" "$GEN" '"gate":"none"'
	tdm_snap Q "$A" "$D"
	check_eq "ungated: the qdisc saw none of it" "${Q[x.window_packets]:-}:${Q[qlen]:-}" 0:0
	tdm_judge ungated tb pcap "@$TDM_TMP/ungated.pcap" --port 5001 --cycle "$CYCLE" \
		--base "$BASE" --windows "$WINS" --tol-early "$TOL_EARLY" --tol-late "$TOL_LATE"
	tdm_judge_check "ungated: frames captured" ungated 'judged >= 400'
	tdm_judge_check "ungated: many frames outside the windows though tdmwin is root" ungated \
		'outside * 100 // (judged + 1) >= 25'
}

# tdmgate_gated MARK: the caller's sender, gated by libtdmgate, sends 3000
# frames at 1000/s, captured at tdmB (the sender's wire) and received
# there; once frames flow, `tc qdisc change` makes a plan with one window
# at [8,11) ms (WINS2) pending, its base a cycle boundary 1.5 s ahead.
# Checks what the stacks share: all sent and received, the qdisc saw none
# of it and switched; on the host, the frames before the base inside the
# first plan's windows, those after it inside the new one's, within the
# allowance, and the first frame on the new plan.  Leaves the sender's
# summary in GEN (what the stack says of itself the caller checks).
#
# After tdmgate_setup, with the caller's gen (the sender: `gen chrt -f 50
# TDMGEN ARGS...`, as tdmgate_send); MARK: tdm_hostload_mark from before
# the sending.
tdmgate_gated() {
	local mark=$1 gpid t0 t1 slow='' b2 w2

	tdm_cap_start gated "$B" tdmB "udp dst port 5001" || tdm_fail "tcpdump did not start"
	tdm_recv_start rxgated "$B" --bind "$TDM_IP_B" --ports 5001
	gen chrt -f 50 "$TDM_ROOT/build/us/tdmgen" -c 3000 -r 1000pps >"$TDM_TMP/gated.json" &
	gpid=$!
	TDM_BG_PIDS+=("$gpid")
	tdm_recv_wait rxgated 100 30
	t0=$(tdm_now)
	b2=$(( (t0 / CYCLE + 75) * CYCLE ))
	check "change: pending plan, window [8,11) ms from base $b2" tc_a qdisc change \
		dev "$D" root tdmwin clockid CLOCK_REALTIME base-time "$b2" window 8ms 3ms \
		plan-version 2
	t1=$(tdm_now)
	[ "$t1" -lt "$b2" ] ||
		slow="tc took $(( (t1 - t0) / 1000000 )) ms, past the pending base: too slow a guest"
	wait "$gpid"
	check_eq "gated: tdmgen sent" $? 0
	GEN=$(cat "$TDM_TMP/gated.json")
	sed 's/^/# /' "$TDM_TMP/gen.err"
	tdm_log "gated: $GEN"
	tdm_recv_wait rxgated 3000 30
	tdm_cap_stop gated
	tdm_recv_stop rxgated R
	tdm_quiet_judge "$mark"
	# shellcheck disable=SC2034  # lib.sh's tdm_timing reads it
	[ -z "$slow" ] || TDM_LOADED=$slow
	check_eq "gated: the receiver got all" "${R[udp5001.n]:-x}:${R[udp5001.lost]:-x}" 3000:0
	tdm_snap Q "$A" "$D"
	check_eq "gated: the qdisc saw none of it" "${Q[x.window_packets]:-}:${Q[qlen]:-}" 0:0
	check_eq "gated: the qdisc switched to the pending plan" "${Q[options.plan_version]:-}" 2

	tdm_judge gated tb pcap "@$TDM_TMP/gated.pcap" --port 5001 --cycle "$CYCLE" \
		--base "$BASE" --windows "$WINS" --switch "$b2" --base2 "$b2" \
		--windows2 "$WINS2" --tol-early "$TOL_EARLY" --tol-late "$TOL_LATE"
	tdm_timing tdm_judge_check "gated: frames under the first plan" gated 'phase1 >= 300'
	tdm_timing tdm_judge_check "gated: frames under the pending plan, after its base" gated \
		'phase2 >= 300'
	tdm_timing tdm_judge_check "gated: frames outside their plan's windows, at most the allowance" \
		gated 'outside <= allowed(judged)'
	# What a user-space gate held under TCG before the shared sending loop
	# (bypass.rst, "Measured": 2-4 % outside, ungated 30-50 %): a gate that
	# stops working fails here even where the allowance above is out of
	# reach.
	tdm_timing tdm_judge_check "gated: the gate does most of its work: at most 10 % outside" \
		gated 'outside * 10 <= judged'
	tdm_judge_check "gated: no reordering" gated 'reorder == 0'
	# The latency of the change: from the new plan's first window's
	# opening to the first frame that left in it.
	w2=$(( b2 + 8000000 ))
	tdm_judge newplan tb span "@$TDM_TMP/gated.pcap" --port 5001 --to "$w2"
	tdm_timing tdm_judge_check "gated: the first frame on the new plan within 5 ms of its first window" \
		newplan "first_after >= $w2 and first_after - $w2 <= 5000000"
}
