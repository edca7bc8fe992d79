# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Two network namespaces joined by a veth, for the host tests that send
# between them (tdmgen_dpdk.sh, preload.sh, tdmgate_tdmd.sh).  Source it
# after selftests/tap.sh; it defines functions only:
#
#   veth_ns NS_A NS_B DEV_A DEV_B
#             make NS_A and NS_B, DEV_A in NS_A to DEV_B in NS_B, addresses
#             198.18.0.1/24 (DEV_A) and 198.18.0.2/24 (DEV_B), no IPv6 (its
#             housekeeping would be among the frames counted), both up and
#             static neighbours both ways (no ARP among them); the whole
#             test a skip where that cannot be made.  The caller removes
#             the namespaces on exit (veth_ns_del).
#   veth_ns_del NS...
#             remove these namespaces, quietly
#   veth_ns_neigh NS DEV PEER_NS PEER_DEV ADDR
#             ADDR (PEER_DEV's) a permanent neighbour of DEV again (a DPDK
#             port started over DEV flushes them)
veth_ns() {
	local a=$1 b=$2 da=$3 db=$4 n
	if ! ip netns add "$a" || ! ip netns add "$b" ||
	   ! ip -n "$a" link add "$da" type veth peer name "$db" netns "$b"; then
		tdm_skip_all "cannot create network namespaces and a veth pair"
	fi
	for n in "$a" "$b"; do
		ip netns exec "$n" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
			net.ipv6.conf.default.disable_ipv6=1
	done
	ip -n "$a" addr add 198.18.0.1/24 dev "$da"
	ip -n "$b" addr add 198.18.0.2/24 dev "$db"
	ip -n "$a" link set "$da" up
	ip -n "$b" link set "$db" up
	veth_ns_neigh "$a" "$da" "$b" "$db" 198.18.0.2
	veth_ns_neigh "$b" "$db" "$a" "$da" 198.18.0.1
}

veth_ns_del() {
	local n
	for n in "$@"; do ip netns del "$n" 2>/dev/null; done
}

veth_ns_neigh() {
	ip -n "$1" neigh replace "$5" dev "$2" nud permanent \
		lladdr "$(ip netns exec "$3" cat "/sys/class/net/$4/address")"
}
