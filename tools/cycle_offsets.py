#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Where in the cycle did packets leave?  Reads a pcap with nanosecond
timestamps (tcpdump --time-stamp-precision=nano), folds each packet's time
into the plan's cycle and compares the offsets with the configured windows.

  cycle_offsets.py FILE --base NS --cycle NS --window OFF:LEN [--window ...]
                   [--clock-shift NS] [--tolerance NS] [--bins N] [--json]

--clock-shift is added to every pcap timestamp (the pcap is stamped with
CLOCK_REALTIME; pass TAI - REALTIME when the plan is on CLOCK_TAI).
Exit status: 0 if every packet lies inside a window widened by the
tolerance, 1 otherwise, 2 on bad input.
"""
import argparse
import json
import os
import sys

# One pcap reader for the project: the testbed's (standard library only).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "testbed"))
from tdmtb.pcap import read_pcap  # noqa: E402  (yields t_ns, frame, linktype)


def parse_window(text):
    try:
        off, length = (int(x) for x in text.split(":"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"window '{text}': want OFFSET:LENGTH in ns")
    if off < 0 or length <= 0:
        raise argparse.ArgumentTypeError(f"window '{text}': negative offset or empty")
    return off, length


def capture_times(path, shift=0, min_size=0):
    """The stamps (ns) of PATH's frames of MIN_SIZE bytes or more, each
    plus SHIFT."""
    return [t + shift for t, frame, _ in read_pcap(path)
            if len(frame) >= min_size]


def analyse(times, base, cycle, windows, tol):
    """Fold times into the cycle; count packets inside widened windows."""
    offsets, outside = [], []
    for t in times:
        if t < base - tol:
            outside.append(t)
            continue
        off = (t - base) % cycle
        offsets.append(off)
        ok = False
        for w_off, w_len in windows:
            # distance into the window, wrapping around the cycle edge
            d = (off - w_off) % cycle
            if d < w_len + tol or d >= cycle - tol:
                ok = True
                break
        if not ok:
            outside.append(t)
    return offsets, outside


def open_latency(times, base, cycle, windows, tol):
    """First packet of each window instance minus the window's start."""
    first = {}
    for t in times:
        if t < base:
            continue
        k, off = divmod(t - base, cycle)
        for i, (w_off, w_len) in enumerate(windows):
            if w_off <= off < w_off + w_len + tol:
                key = (k, i)
                if key not in first:
                    first[key] = off - w_off
                break
    lat = sorted(first.values())
    if not lat:
        return {"windows": 0}
    pick = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))]
    return {"windows": len(lat), "min_ns": lat[0], "median_ns": pick(0.5),
            "p99_ns": pick(0.99), "max_ns": lat[-1],
            "mean_ns": sum(lat) // len(lat)}


def histogram(offsets, cycle, windows, bins, width=50):
    counts = [0] * bins
    for off in offsets:
        counts[min(off * bins // cycle, bins - 1)] += 1
    peak = max(counts) or 1
    lines = []
    for i, c in enumerate(counts):
        lo = i * cycle // bins
        hi = (i + 1) * cycle // bins
        inwin = any(lo < w + l and hi > w for w, l in windows)
        bar = "#" * (c * width // peak) if c else ""
        lines.append(f"{lo / 1000:9.1f}us {'W' if inwin else ' '} {c:7d} {bar}")
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pcap")
    ap.add_argument("--base", type=int, required=True)
    ap.add_argument("--cycle", type=int, required=True)
    ap.add_argument("--window", type=parse_window, action="append", required=True)
    ap.add_argument("--clock-shift", type=int, default=0)
    ap.add_argument("--tolerance", type=int, default=0)
    ap.add_argument("--min-size", type=int, default=0,
                    help="ignore packets shorter than this (ARP, acks)")
    ap.add_argument("--bins", type=int, default=33)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    if a.cycle <= 0:
        ap.error("--cycle must be positive")
    try:
        times = capture_times(a.pcap, a.clock_shift, a.min_size)
    except OSError as e:
        print(f"cycle_offsets: {e}", file=sys.stderr)
        return 2
    offsets, outside = analyse(times, a.base, a.cycle, a.window, a.tolerance)
    strict = len(analyse(times, a.base, a.cycle, a.window, 0)[1])
    res = {"packets": len(times), "outside": len(outside),
           "outside_strict": strict, "tolerance_ns": a.tolerance,
           "open_latency": open_latency(times, a.base, a.cycle, a.window,
                                        a.tolerance)}
    if a.json:
        print(json.dumps(res))
    else:
        print(f"{len(times)} packets, {strict} outside the exact windows, "
              f"{len(outside)} outside the windows widened by "
              f"{a.tolerance / 1000:.0f} us; W = bin overlaps a window")
        for line in histogram(offsets, a.cycle, a.window, a.bins):
            print(line)
        lat = res["open_latency"]
        if lat["windows"]:
            print(f"first packet after a window opened, over {lat['windows']} windows: "
                  f"min {lat['min_ns'] / 1000:.1f} us, median {lat['median_ns'] / 1000:.1f} us, "
                  f"p99 {lat['p99_ns'] / 1000:.1f} us, max {lat['max_ns'] / 1000:.1f} us")
    return 1 if outside or not times else 0


if __name__ == "__main__":
    sys.exit(main())
