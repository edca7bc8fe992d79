# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Helpers for the tdmrx selftests (source after lib.sh): load tdmrx.ko
# (insmod from build/kmod/$(uname -r)/ unless loaded or installed), find
# or build the reader helper build/selftests/tdmrx_probe, and run it.

TDMRX_PROBE=${TDMRX_PROBE:-$TDM_ROOT/build/selftests/tdmrx_probe}
TDMRX_KO=${TDMRX_KO:-$TDM_ROOT/build/kmod/$(uname -r)/tdmrx.ko}

tdmrx_load() {
	[ -d /sys/module/tdmrx ] && return 0
	if [ -f "$TDMRX_KO" ]; then
		insmod "$TDMRX_KO"
	else
		modprobe tdmrx 2>/dev/null
	fi
}

tdmrx_require() {
	tdm_require
	tdmrx_load || tdm_skip_all "tdmrx.ko not loadable ($TDMRX_KO missing? make modules-testbed)"
	[ -c /dev/tdmrx ] || tdm_skip_all "no /dev/tdmrx"
	if [ ! -x "$TDMRX_PROBE" ]; then
		make -s -C "$TDM_DIR" tools >/dev/null 2>&1 ||
			tdm_skip_all "cannot build $TDMRX_PROBE (make tools; needs libmnl-dev)"
	fi
}

probe() {
	"$TDMRX_PROBE" "$@"
}

# tdmrx_start NAME NS ARGS...: the probe in the background (attach ARGS),
# output in $TDM_TMP/NAME.out; returns once it is attached (or failed).
tdmrx_start() {
	local name=$1 ns=$2
	shift 2
	rm -f "$TDM_TMP/$name.ready" "$TDM_TMP/$name.out"
	ip netns exec "$ns" "$TDMRX_PROBE" attach "$@" --ready "$TDM_TMP/$name.ready" \
		>"$TDM_TMP/$name.out" 2>&1 &
	eval "TDMRX_PID_$name=$!"
	TDM_BG_PIDS+=($!)
	for _ in $(seq 100); do
		[ -f "$TDM_TMP/$name.ready" ] && return 0
		grep -q '^error=' "$TDM_TMP/$name.out" 2>/dev/null && break
		sleep 0.1
	done
	echo "probe $name did not attach:" >&2
	cat "$TDM_TMP/$name.out" >&2
	return 1
}

# tdmrx_wait NAME ARRAY [SIGNAL]: (signal and) wait for the probe, load
# its key=value output into ARRAY.
tdmrx_wait() {
	local name=$1 pidvar="TDMRX_PID_$1"
	[ -n "${3:-}" ] && kill "-$3" "${!pidvar}" 2>/dev/null
	wait "${!pidvar}" 2>/dev/null
	tdm_kv "$2" "$(cat "$TDM_TMP/$name.out")"
}
