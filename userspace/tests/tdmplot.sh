#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Every tdmplot plot drawn from known input: tdmstat synth writes a capture
# of a known plan (two senders, 1 ms windows; three runs with dead times 0,
# 100 and 300 us), tdmstat analyze -P turns each into tdmstat's outputs, and
# tdmplot draws transit, windows, timeline, hist (and hist --tx) of one run,
# sweep over the three, and `all` of one run into a folder.  Each plot must
# exit 0 and write a PNG (its signature, a real size) and an SVG.  Built
# into O/tests as test_tdmplot and run by `make unit`; prints TAP lines.
# Without matplotlib for tdmplot's python it prints a TAP skip with the
# reason ("SKIP: ...", exit 4).  Needs no root.  About 15 s.
#
#   tests/tdmplot.sh TDMSTAT TDMPLOT
set -uo pipefail
# shellcheck source=../../selftests/tap.sh
. "$(dirname "$(readlink -f "$0")")/../../selftests/tap.sh"
tdmstat=$1 tdmplot=$2

# tdmplot's interpreter, from its first line.
py=$(sed -n '1s/^#! *//p' "$tdmplot")
$py -c 'import matplotlib' 2>/dev/null ||
	tdm_skip_all "no matplotlib for $py (python3-matplotlib; testbed/guest/setup installs it)"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
export MPLCONFIGDIR=$tmp/mpl

# png_ok FILE: a PNG (signature and IHDR) of at least 100x100 pixels.
png_ok() {
	"$py" - "$1" <<'EOF'
import struct, sys
b = open(sys.argv[1], "rb").read(24)
assert b[:8] == b"\x89PNG\r\n\x1a\n" and b[12:16] == b"IHDR", "not a PNG"
w, h = struct.unpack(">II", b[16:24])
assert w >= 100 and h >= 100, "%dx%d" % (w, h)
EOF
}

# plotted DESC OUT CMD...: CMD exits 0 and writes OUT.png and OUT.svg.
plotted() {
	local desc=$1 out=$2 why="" rc
	shift 2
	"$@" >"$tmp/log" 2>&1
	rc=$?
	if [ "$rc" != 0 ]; then
		why="exit status $rc"
	elif ! png_ok "$out.png" >>"$tmp/log" 2>&1; then
		why="no PNG image at $out.png"
	elif ! grep -q '<svg' "$out.svg" 2>/dev/null; then
		why="no SVG image at $out.svg"
	fi
	if [ -z "$why" ]; then
		tdm_ok "$desc"
	else
		tdm_fail "$desc: $why"
		sed 's/^/#   /' "$tmp/log" | tail -n 15
	fi
}

runs=()
for d in 0 100 300; do
	printf '[auto]\nsenders 2\nwindow 1ms\ndead_time %sus\n' "$d" >"$tmp/plan$d"
	if "$tdmstat" synth -n 3000 -S 2 -p "$tmp/plan$d" -o "$tmp/s$d.pcap" >/dev/null &&
	   "$tdmstat" analyze -q -P -p "$tmp/plan$d" -o "$tmp/run$d" "$tmp/s$d.pcap"; then
		tdm_ok "tdmstat output of a known run (dead time $d us)"
	else
		tdm_fail "tdmstat output of a known run (dead time $d us)"
	fi
	runs+=("$tmp/run$d")
done
r=$tmp/run100
for p in transit windows timeline hist; do
	plotted "tdmplot $p" "$tmp/p-$p" "$tdmplot" "$p" "$r" -o "$tmp/p-$p"
done
plotted "tdmplot hist --tx" "$tmp/p-histtx" "$tdmplot" hist --tx "$r" -o "$tmp/p-histtx"
plotted "tdmplot timeline --xlim 5" "$tmp/p-tl5" "$tdmplot" timeline --xlim 5 "$r" -o "$tmp/p-tl5"
plotted "tdmplot sweep over three dead times" "$tmp/p-sweep" "$tdmplot" sweep "${runs[@]}" -o "$tmp/p-sweep"
# methods: a dead-time sweep as tools/bench-wire-guest writes it with
# WIRE_DESCEND=1: one method stopped at its first point (one point), one
# with three, loss from 0 to 10^5 (a log scale must keep the 0), and a
# point whose taps could not tell the emulated port's drops apart (null).
pt() { # method dead_us ideal_loss ideal_overlap collisions overlap
	printf '{"method": "%s", "senders": 8, "dead_ns": %d, "cycles": 1000, ' "$1" $(($2 * 1000))
	printf '"ideal_loss": %s, "ideal_overlap": %s, "collisions": %s, "overlap": %s}' "$3" "$4" "$5" "$6"
}
{
	printf '{"kernel": "test", "mbit": 50, "points": [\n'
	pt free 4000 164805 6254 170000 6300; echo ,
	pt tdmwin 4000 0 0 300 12; echo ,
	pt tdmwin 2000 0 0 null 40; echo ,
	pt tdmwin 1000 3 6 900 80; echo ,
	# the corner turn: a column of its own (loss, the least utilized link)
	printf '{"corner": "3x3", "method": "free", "senders": 3, "dead_ns": 0, "ideal_loss": 812, '
	printf '"ports": [{"utilization": 0.61}, {"utilization": 0.58}, {"utilization": 0.6}]},\n'
	printf '{"corner": "3x3", "method": "tdmwin_barrel", "senders": 3, "dead_ns": 0, "ideal_loss": 0, '
	printf '"ports": [{"utilization": 0.95}, {"utilization": 0.94}, {"utilization": null}]}'
	printf '\n]}\n'
} >"$tmp/sweep.json"
plotted "tdmplot methods on a downward sweep" "$tmp/p-methods" "$tdmplot" methods \
	"$tmp/sweep.json" -o "$tmp/p-methods"
# all: the four plots of one run, into a folder.
"$tdmplot" all "$r" -o "$tmp/all" >"$tmp/log" 2>&1
rc=$?
if [ "$rc" = 0 ]; then
	for p in transit windows timeline hist; do
		if png_ok "$tmp/all/run100-$p.png" >/dev/null 2>&1 && [ -s "$tmp/all/run100-$p.svg" ]; then
			tdm_ok "tdmplot all: $p"
		else
			tdm_fail "tdmplot all: $p missing or not an image"
		fi
	done
else
	tdm_fail "tdmplot all: exit status $rc"
	sed 's/^/#   /' "$tmp/log" | tail -n 15
fi
tdm_exit
