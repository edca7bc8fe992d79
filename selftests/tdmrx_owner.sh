#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# One owner at a time: a second ATTACH gets EBUSY and the kernel's text
# naming the device and the owner's port id; DETACH by anyone else is
# refused unless forced; bad attach parameters are refused with a reason;
# when the owner's socket goes (exit, SIGKILL) the kernel detaches by
# itself, and a forced detach ends the owner's session.

# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tdmrx_lib.sh
. "$(dirname "$0")/tdmrx_lib.sh"
tdmrx_require

setup_ns A B || tdm_skip_all "cannot create network namespaces"
tdm_veth "$A" "$B" || tdm_skip_all "cannot create a veth pair"
declare -A P G

pb() { nsx "$B" "$TDMRX_PROBE" "$@"; }
attached() { [ "$(pb get | sed -n 's/^attached=//p')" = "$1" ]; }

tdmrx_start own "$B" tdmB 5001 --duration 60 || tdm_skip_all "cannot attach"
portid=$(sed -n 's/^portid=//p' "$TDM_TMP/own.out")
tdm_kv G "$(pb get)"
check_eq "get: attached, owner is our port id, device" \
	"${G[attached]:-}:${G[owner]:-}:${G[ifname]:-}" "1:$portid:tdmB"

out=$(pb attach tdmB 5002 --duration 0)
rc=$?
check_eq "second attach refused" "$rc" 2
check_match "EBUSY names the device and the owner" "$out" \
	"error=kernel: tdmrx is attached to tdmB by port id $portid\$"

out=$(pb detach)
check_match "detach by a non-owner refused" "$out" "error=kernel: not the owner"
check "still attached" attached 1

out=$(pb attach tdmB 5001 --ring 100 --duration 0)
check_match "ring not a power of two: refused with a reason" "$out" "power of two"
out=$(pb attach tdmB 5001 --ring 32 --duration 0)
check_match "ring below the minimum: refused with a reason" "$out" "error=kernel: .*range"
out=$(pb attach tdmB 5001 --ring 1024 --watermark 2048 --duration 0)
check_match "watermark above the ring: refused with a reason" "$out" "watermark is larger"
out=$(pb attach nosuchdev 5001 --duration 0)
check_match "no such device" "$out" "no such device"

# The owner exits (closes its netlink socket first, keeps the rings).
tdmrx_wait own P INT
check_eq "owner exit: the kernel detached the session" \
	"${P[owner_closed]:-}:${P[finished]:-}" 1:1
check "get: not attached after the owner left" tdm_wait_for 60 attached 0

# SIGKILL: no goodbye at all.
tdmrx_start kill "$B" tdmB 5001 --duration 60 || tdm_skip_all "cannot attach"
check "attached again" attached 1
tdmrx_wait kill P KILL
check "SIGKILLed owner: detached" tdm_wait_for 60 attached 0

# A forced detach ends someone else's session; the owner sees it end.
tdmrx_start forced "$B" tdmB 5001 --duration 60 || tdm_skip_all "cannot attach"
check "forced detach by a non-owner" pb detach --force
tdmrx_wait forced P
check_eq "the owner saw its session end (finished)" "${P[finished]:-}" 1
check "get: not attached" attached 0

tdm_exit
