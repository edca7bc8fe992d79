# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Helpers for tests on tdm_testdev (selftests/kmod/tdm_testdev.c), the NIC
# test double: two Ethernet devices tdmt0 and tdmt1 wired to each other,
# each with a PTP hardware clock on CLOCK_TAI + phc_offset_s that stamps
# received frames when SIOCSHWTSTAMP enabled it (source after lib.sh).
#
#   tdmt_require [PARAM=VALUE...]  (re)load it with these parameters
#                                  (skip the test if it cannot); it is
#                                  unloaded when the test exits
#   tdmt_hwts NS DEV RX_FILTER     SIOCSHWTSTAMP (0 none, 1 all)
#   tdmt_phc NS DEV                its /dev/ptpN (ethtool -T)
#   tdmt_phc_minus_tai PTP [SECS]  PHC - CLOCK_TAI, ns; with SECS, also
#                                  its rate of change over SECS, ppm
#   tdmt_rx_edt 0|1                frames arrive carrying a monotonic
#                                  delivery time (no software RX stamp)

TDMT_KO=${TDMT_KO:-$TDM_ROOT/build/kmod/$(uname -r)/testdev/tdm_testdev.ko}
TDMT_PARAMS=/sys/module/tdm_testdev/parameters

tdmt_unload() {
	[ -d /sys/module/tdm_testdev ] || return 0
	rmmod tdm_testdev
}

# modprobe finds it where make modules-testbed installs it (extra/ of the
# guest kernel's module tree), shared by every work tree on the host: it
# is used only if it is this tree's build (as run.sh does for sch_tdmwin),
# else the build.
tdmt_load() {
	local inst
	tdmt_unload || return 1
	inst=$(modinfo -n tdm_testdev 2>/dev/null)
	if [ -n "$inst" ] && { [ ! -f "$TDMT_KO" ] || cmp -s "$inst" "$TDMT_KO"; }; then
		modprobe -q tdm_testdev "$@" 2>/dev/null && return 0
	fi
	[ -f "$TDMT_KO" ] && insmod "$TDMT_KO" "$@"
}

tdmt_require() {
	command -v ethtool >/dev/null || tdm_skip_all "ethtool not installed"
	command -v hwstamp_ctl >/dev/null || tdm_skip_all "hwstamp_ctl not installed (linuxptp)"
	tdmt_load "$@" ||
		tdm_skip_all "tdm_testdev not loadable (make modules-testbed; $TDMT_KO)"
	if [ ! -d /sys/class/net/tdmt0 ] || [ ! -d /sys/class/net/tdmt1 ]; then
		tdmt_unload
		tdm_skip_all "tdm_testdev loaded but tdmt0/tdmt1 missing"
	fi
	trap 'tdm_cleanup; tdmt_unload' EXIT
}

tdmt_hwts() { # NS DEV RX_FILTER
	ip netns exec "$1" hwstamp_ctl -i "$2" -t 0 -r "$3" >/dev/null
}

tdmt_phc() { # NS DEV
	local n
	n=$(ip netns exec "$1" ethtool -T "$2" |
		sed -n 's/^PTP Hardware Clock: *\([0-9]*\)$/\1/p')
	[ -n "$n" ] && echo "/dev/ptp$n"
}

tdmt_phc_minus_tai() { # PTP [SECS]
	"$TDM_PY" -S -c '
import os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY)
clk = ((~fd) << 3) | 3          # FD_TO_CLOCKID
tai = getattr(time, "CLOCK_TAI", 11)
def off():  # the narrowest of 9 brackets: a preempted read is not used
    best = None
    for _ in range(9):
        a = time.clock_gettime_ns(tai)
        p = time.clock_gettime_ns(clk)
        b = time.clock_gettime_ns(tai)
        if best is None or b - a < best[0]:
            best = (b - a, p - (a + b) // 2, (a + b) // 2)
    return best[1], best[2]
d0, t0 = off()
if len(sys.argv) < 3:
    print(d0)
    sys.exit(0)
time.sleep(float(sys.argv[2]))
d1, t1 = off()
print(d1, (d1 - d0) * 1000000 // (t1 - t0))' "$@"
}

tdmt_rx_edt() {
	echo "$1" >"$TDMT_PARAMS/rx_edt"
}
