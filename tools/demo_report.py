#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The demo's report: the gated run, the free-running run (no TDM) and the
user-space TDM run (the original tool's method) side by side, on the wire
testbed (Documentation/testbed.rst).

Reads what tools/demo-guest left in its output folder: tdmstat's CSV/JSON
for each run (gated-*, free-*, usertdm-*), tdmgen's JSON summaries, the
senders' qdisc counters (tc -s -j) and the NICs' and the switch port's
(NAME-switch.json), and what tools/demo computed from the captures on the
host: the port's drops told apart by its taps (NAME-port-drops.txt) and
the ideal port (NAME-ideal*), and prints

  * the first windows of the gated run (the per-window table; all of them
    are in gated-windows.csv),
  * per sender and run: windows, packets, goodput, loss and where it
    happened (collisions at the switch port, the emulator's bunching
    there, elsewhere), packets that left or arrived outside their sender's
    window, windows overlapping another sender's, the smallest observed
    dead time before the sender's windows, and the gate-open latency of
    its qdisc,
  * per run: offered load, goodput and utilization of the line rate, the
    plan's slot utilization,
  * a verdict per run,
  * the headline: per method (tdmwin, user-space TDM, free-running),
    frames lost to collisions at the switch port, windows overlapping
    another sender's, goodput as a share of the line, the emulator's own
    drops apart, and each method against tdmwin (a tie said as such).

Loss at the switch port is told apart by taps on its inputs and output
(testbed/tdmtb/portdrops.py): a collision is a frame dropped while
another sender's frame was in the port's buffer, the senders overlapping
at the bottleneck; a self drop is one dropped with only its own sender's
frames there, which a wire at the port's rate cannot cause: the emulator
bunched them (a late timer or softirq).  The first is what TDM prevents,
the second is reported as the emulator's.

Every packet is counted: each received packet (duplicates aside) is
inside its window, outside it, or of "no window" (its window has no row in
the window table, so it cannot be judged), each its own number, and the
three add up to the packets received, which the report checks.  The same
for the departures of every sender's tap.

Two views of "outside its window":

  * departures: a tap on every sender's device (tcpdump -Q out) stamps each
    packet as the qdisc hands it to the driver, analysed by tdmstat with
    the plan.  This is what the gate controls.
  * arrivals at the receiver (tdmrx): under QEMU TCG a softirq may run
    milliseconds late, so arrivals show the emulator's delivery delays as
    much as the senders' timing.

Both are judged with the selftests' timing tolerances (tools/demo passes
selftests/tolerance.sh's TOL_EARLY, TOL_LATE and OUTLIER_PERMILLE): a packet is
outside when it lies more than --early-us before its window or --late-us
after it.  Under TCG the qdisc dequeues a burst inside the window and the
emulated driver may stamp its last frames hundreds of microseconds later,
or milliseconds when a vCPU is descheduled in between; on hardware the
same check can run with zero tolerances.

The free-running and user-space TDM runs are reported, not judged: they
are what the gate is compared with.

With --check the exit status is 1 when the gated run lacks a sender's
sent count, has departures of no window (they cannot be judged), or when
a run's counts do not add up; and, on a quiet host (timing checks: a vCPU
stalled for milliseconds delays a frame past its window whatever the gate
did), when it let more than --outlier-permille of its packets leave
outside their sender's windows, lost more than that share to collisions
at the switch port, or lost any frame anywhere but at the switch port.
"""
import argparse
import csv
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "testbed"))
import wire_sweep  # noqa: E402
from tdmtb.flat import parse_kv  # noqa: E402


def load_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def num(v, default=None):
    if v in (None, "", "null"):
        return default
    return int(v)


def s64(v):
    """A signed 64-bit figure that tc's JSON prints unsigned (a window
    opened before its time has a negative open latency)."""
    return v - (1 << 64) if v is not None and v >= 1 << 63 else v


def overlapped(w):
    """A window row that overlaps another sender's window, at its front
    or at its back."""
    return bool(num(w.get("overlap_front"), 0) or num(w.get("overlap_back"), 0))


def load_run(folder, name, senders, early_ns, late_ns):
    """Per-sender figures of one run."""
    pre = os.path.join(folder, name)
    if not os.path.exists(pre + "-windows.csv"):
        return None
    with open(pre + ".json") as f:
        summary = json.load(f)
    wins = load_csv(pre + "-windows.csv")
    span = {(w["plan_version"], w["window"]): (int(w["win_start_ns"]),
                                              int(w["win_end_ns"]))
            for w in wins}
    res = {}
    for s in summary.get("senders", []):
        res[int(s["sender"])] = {
            "name": s["name"], "sent": s.get("sent"),
            "received": s.get("received") or 0, "lost": s.get("lost"),
            "rx_outside": s.get("rx_outside") or 0,
            "windows": s.get("windows") or 0,
            "start": s.get("start_rx_ns"), "end": s.get("end_rx_ns"),
            "bytes": 0, "outside_tol": 0, "inside": 0, "no_window": 0,
            "dead_min": None, "lat_mean": None, "lat_max": None,
            "overlaps": 0, "collisions": None,
            "self_drops": None, "nic_drops": None, "ideal_lost": None,
            "ideal_overlaps": None}
    for w in wins:
        r = res.get(int(w["sender"]))
        if r is None:
            continue
        r["bytes"] += num(w["bytes"], 0)
        if overlapped(w):
            r["overlaps"] += 1
        d = num(w["dead_rx_ns"])
        if d is not None and (r["dead_min"] is None or d < r["dead_min"]):
            r["dead_min"] = d
    have_packets = os.path.exists(pre + "-packets.csv")
    other = 0   # packets of a sender the summary does not list
    if have_packets:
        with open(pre + "-packets.csv", newline="") as f:
            for p in csv.DictReader(f):
                if p["duplicate"] == "1":
                    continue
                r = res.get(int(p["sender"]))
                if r is None:
                    other += 1
                    continue
                sp = span.get((p["plan_version"], p["window"]))
                if sp is None:
                    r["no_window"] += 1
                    continue
                rx = int(p["rx_ns"])
                if rx < sp[0] - early_ns or rx >= sp[1] + late_ns:
                    r["outside_tol"] += 1
                else:
                    r["inside"] += 1
    for i in range(1, senders + 1):
        r = res.get(i - 1)
        try:
            with open("%s-qdisc-tx%d.json" % (pre, i)) as f:
                q = json.load(f)
        except (OSError, ValueError):
            continue
        if r is None or not q:
            continue
        x = q[0].get("xstats") or {}
        if q[0].get("kind") == "tdmwin" and x.get("open_latency_count"):
            r["lat_mean"] = s64(x.get("open_latency_mean"))
            r["lat_max"] = s64(x.get("open_latency_max"))
    for i in range(1, senders + 1):
        r = res.get(i - 1)
        if r is None:
            continue
        r["departures"], r["dep_out"], r["dep_nowin"] = departures(
            "%s-tap-tx%d" % (pre, i), i - 1, early_ns, late_ns)
        r["nic_judged"], r["nic_out"], _ = departures(
            "%s-nic-tx%d" % (pre, i), i - 1, early_ns, late_ns)
    try:
        with open(pre + "-switch.json") as f:
            sw = json.load(f)
    except (OSError, ValueError):
        sw = None
    taps = load_kv(pre + "-port-drops.txt")
    if sw is not None:
        sw["taps"] = taps
    for i, x in enumerate((sw or {}).get("senders", [])):
        r = res.get(i)
        if r is not None:
            r["nic_drops"] = x["nic_drops"]
            if taps is not None:
                r["collisions"] = taps.get("collision.%d" % i, 0)
                r["self_drops"] = taps.get("self.%d" % i, 0)
    ideal = load_ideal(pre, res)
    return {"senders": res, "run": summary.get("run", {}), "switch": sw,
            "have_packets": have_packets, "other": other, "ideal": ideal}


def load_kv(path):
    """A file of key=value lines (testbed/tb's output) as a dict of
    integers, or None without it."""
    try:
        with open(path) as f:
            return {k: int(v) for k, v in parse_kv(f.read()).items()}
    except (OSError, ValueError):
        return None


def load_ideal(pre, res):
    """The ideal port's figures (tools/demo: testbed/tb ideal-port on
    the senders' taps, and tdmstat analyze on its output): per sender in
    RES, ideal_lost and ideal_overlaps; for the run {"lost", "overlap",
    "windows"}, or None without them."""
    kv = load_kv(pre + "-ideal.txt")
    if kv is None:
        return None
    try:
        with open(pre + "-ideal.json") as f:
            run = json.load(f).get("run", {})
        wins = load_csv(pre + "-ideal-windows.csv")
    except (OSError, ValueError):
        return None
    for i, r in res.items():
        r["ideal_lost"] = int(kv.get("collision.%d" % i, 0)) + \
            int(kv.get("self.%d" % i, 0))
        r["ideal_overlaps"] = 0
    for w in wins:
        r = res.get(int(w["sender"]))
        if r is not None and overlapped(w):
            r["ideal_overlaps"] += 1
    return {"lost": int(kv.get("dropped", 0)) + int(kv.get("nic_drops", 0)),
            "overlap": run.get("overlap_windows", 0),
            "windows": run.get("windows", 0)}


def elsewhere(r):
    """A sender's lost frames that the switch port did not drop (at its
    qdisc, its NIC, on the way to the receiver's recorder), or None
    without the counts."""
    if r["lost"] is None or r["collisions"] is None:
        return None
    return r["lost"] - r["collisions"] - r["self_drops"]


def span_s(run):
    """The seconds over which the run's frames reached the receiver: from
    the start of the first one on the wire (its arrival less a frame
    time) to the arrival of the last, over all senders; tdmgen's duration
    without the arrival times.  A gate that queues what does not fit
    delivers its backlog after tdmgen stopped: over tdmgen's duration the
    goodput would come out above the line rate."""
    sw = run["switch"]
    s = [r for r in run["senders"].values()
         if r["start"] is not None and r["end"] is not None and r["received"]]
    if not s:
        return float(sw["duration_s"])
    frame_ns = sw["frame_bytes"] * 8 * 1000.0 / sw["mbit"]
    return (max(r["end"] for r in s) - min(r["start"] for r in s)
            + frame_ns) / 1e9


def goodput_bps(run, r):
    """Bits per second on the receiver's wire of what the sender got
    through: its frames received, whole frames on the wire, over the span
    in which the run's frames arrived (span_s)."""
    sw = run["switch"]
    return r["received"] * sw["frame_bytes"] * 8 / span_s(run)


def departures(pre, sender, early_ns, late_ns):
    """(judged, outside, no window) departures of one sender's tap, or
    (None, None, None) without its analysis."""
    try:
        wins = load_csv(pre + "-windows.csv")
        f = open(pre + "-packets.csv", newline="")
    except OSError:
        return None, None, None
    span = {(w["plan_version"], w["window"]): (int(w["win_start_ns"]),
                                              int(w["win_end_ns"]))
            for w in wins}
    n = out = nowin = 0
    with f:
        for p in csv.DictReader(f):
            if int(p["sender"]) != sender or p["duplicate"] == "1":
                continue
            sp = span.get((p["plan_version"], p["window"]))
            if sp is None:
                nowin += 1
                continue
            n += 1
            t = int(p["rx_ns"])
            if t < sp[0] - early_ns or t >= sp[1] + late_ns:
                out += 1
    return n, out, nowin


def accounting(run):
    """Arrivals inside, outside and of no window, and whether they add up
    to the packets received; None without the per-packet file."""
    if not run["have_packets"]:
        return None
    s = run["senders"].values()
    a = {k: sum(r[k] for r in s) for k in ("inside", "outside_tol",
                                            "no_window", "received")}
    a["other"] = run["other"]
    a["bad"] = [r["name"] for r in s
                if r["inside"] + r["outside_tol"] + r["no_window"]
                != r["received"]]
    if run["other"]:
        a["bad"].append("%d packets of senders not in the summary"
                        % run["other"])
    return a


def us(v):
    return "-" if v is None else "%.0f" % (v / 1000.0)


def window_table(folder, count):
    rows = load_csv(os.path.join(folder, "gated-windows.csv"))
    cols = [("window", "window", None), ("name", "sender", None),
            ("packets", "packets", None), ("missing", "missing", None),
            ("first_rx_offset_ns", "first_rx(us)", us),
            ("last_rx_offset_ns", "last_rx-end(us)", us),
            ("dead_rx_ns", "dead(us)", us),
            ("transit_avg_ns", "transit(us)", us),
            ("overlap_front", "ovl_front", None),
            ("overlap_back", "ovl_back", None)]
    print("\nfirst %d windows of the gated run (all in gated-windows.csv):"
          % min(count, len(rows)))
    print("  " + " ".join("%15s" % h for _, h, _ in cols))
    for w in rows[:count]:
        vals = []
        for key, _, fmt in cols:
            v = w.get(key, "")
            vals.append(fmt(num(v)) if fmt else (v or "-"))
        print("  " + " ".join("%15s" % v for v in vals))


# The runs of a demo, in the order shown, and what each one is.
RUNS = {"gated": "gated by tdmwin",
        "free": "free-running, no TDM (pfifo)",
        "usertdm": "user-space TDM, the original method (pfifo)"}

# The per-sender table: heading, and its explanation below the table.
HEADS = [("windows", None), ("packets", "received"),
         ("goodput", "Mbit/s on the receiver's wire, from the run's first "
          "arrival to its last"),
         ("lost", None),
         ("coll/self/else", "where: collisions at the switch port, the "
          "emulator's bunching there, elsewhere"),
         ("left_out", "departures outside the sender's windows / all, from "
          "a tap on the sender (where the gate acts)"),
         ("nic_out", "the same after the sender's NIC, at the switch port's "
          "input (carries netem's timer latency)"),
         ("arrived_out", "at the receiver, beyond the timing tolerances"),
         ("overlaps", "the sender's windows overlapping another sender's "
          "at the receiver (arrival times: they carry emulator delay)"),
         ("no_window", "arrivals whose window has no row, not judged"),
         ("ideal", "the ideal port: frames lost / windows overlapping, "
          "from the sender's taps on perfect wires into the same port"),
         ("min_dead", "smallest gap (us) observed at the receiver before "
          "the sender's windows, negative = overlap"),
         ("open_lat", "the qdisc's gate-open latency (us), mean/max")]


def frac(a, b):
    return "-" if a is None or b is None else "%d/%d" % (a, b)


def cells(run, r):
    if r is None:
        return ["-"] * len(HEADS)
    where = "-" if r["collisions"] is None else "%d/%d/%s" % (
        r["collisions"], r["self_drops"],
        "-" if elsewhere(r) is None else elsewhere(r))
    return [str(r["windows"]), str(r["received"]),
            "-" if run["switch"] is None else "%.2f" % (goodput_bps(run, r) / 1e6),
            "-" if r["lost"] is None else str(r["lost"]), where,
            frac(r["dep_out"], r["departures"]), frac(r["nic_out"], r["nic_judged"]),
            str(r["outside_tol"]), str(r["overlaps"]), str(r["no_window"]),
            frac(r["ideal_lost"], r["ideal_overlaps"]), us(r["dead_min"]),
            "-" if r["lat_mean"] is None else
            "%s/%s" % (us(r["lat_mean"]), us(r["lat_max"]))]


def summary_table(runs, senders):
    names = [n for n in RUNS if runs.get(n)]
    width = [max(9, len(h) + 1) for h, _ in HEADS]
    print("\nper sender and run: " + "; ".join(
        "%s = %s" % (n, RUNS[n]) for n in names))
    print("  %-6s %-8s" % ("sender", "run") +
          "".join(" %*s" % (w, h) for w, (h, _) in zip(width, HEADS)))
    for i in range(senders):
        label = runs["gated"]["senders"].get(i, {}).get("name", str(i)) \
            if runs.get("gated") else str(i)
        for name in names:
            run = runs[name]
            print("  %-6s %-8s" % (label, name) + "".join(
                " %*s" % (w, c) for w, c in zip(width, cells(
                    run, run["senders"].get(i)))))
            label = ""
    for h, why in HEADS:
        if why:
            print("   %s: %s" % (h, why))


def load_line(run):
    """Offered load, goodput and utilization of the run, and the plan's
    slot utilization, from the switch testbed's figures."""
    sw = run["switch"]
    if sw is None:
        return "no switch counts (NAME-switch.json)"
    s = run["senders"].values()
    line = sw["mbit"] * 1e6
    sent = sum(r["sent"] or 0 for r in s)
    good = sum(goodput_bps(run, r) for r in s)
    offered = sent * sw["frame_bytes"] * 8 / float(sw["duration_s"])
    slot = wire_sweep.slot_utilization(sw["window_ns"], sw["guard_ns"],
                                       sw["dead_ns"])
    return ("offered %.1f Mbit/s (%.0f %% of the %d Mbit/s line), goodput "
            "%.1f Mbit/s: utilization %.1f %% of the line; the plan's windows "
            "less their guard are %.1f %% of the cycle"
            % (offered / 1e6, 100 * offered / line, sw["mbit"], good / 1e6,
               100 * good / line, 100 * slot))


def port_line(run):
    """The switch port's drops: tdmgen's told apart, and the rest."""
    sw = run["switch"]
    if sw is None:
        return None
    t = sw.get("taps")
    if t is None:
        return ("switch port (buffer %d frames): %d frames out, %d dropped; "
                "no port drops told apart (NAME-port-drops.txt)"
                % (sw["buffer"], sw["port_sent"], sw["port_drops"]))
    return ("switch port (buffer %d frames): %d frames out, %d dropped: "
            "%d collisions + %d the emulator's bunching (tdmgen's, by the "
            "taps) + %d others (PTP, tdmd, end markers)"
            % (sw["buffer"], sw["port_sent"], sw["port_drops"], t["collision"],
               t["self"], sw["port_drops"] - t["dropped"]))


def verdict(name, run, a):
    s = run["senders"].values()
    lost = sum(r["lost"] or 0 for r in s)
    unknown = [r["name"] for r in s if r["sent"] is None]
    out = sum(r["outside_tol"] for r in s)
    ovl = run["run"].get("overlap_windows", 0)
    n = sum(r["received"] for r in s)
    dep = [r for r in s if r["departures"] is not None]
    dep_n = sum(r["departures"] for r in dep)
    dep_out = sum(r["dep_out"] for r in dep)
    dep_nowin = sum(r["dep_nowin"] for r in dep)
    print("%s: %d packets, %d lost%s; outside their window (%d us early, "
          "%d us late allowed): %s left, %d arrived; %s windows "
          "overlapping another sender's at the receiver; ring drops %s; "
          "stamps %s"
          % (name, n, lost,
             " (no end marker from %s)" % ",".join(unknown) if unknown else "",
             a.early_us, a.late_us,
             "%d of %d" % (dep_out, dep_n) if dep else "not measured", out, ovl,
             run["run"].get("ring_drops", "?"), run["run"].get("ts_source", "?")))
    print("   " + load_line(run))
    if port_line(run):
        print("   " + port_line(run))
    ideal = run["ideal"]
    if ideal:
        print("   ideal port (the senders' taps on perfect wires into the same "
              "port, without the emulator's timing): %d frames lost, %d of %d "
              "windows overlapping another sender's"
              % (ideal["lost"], ideal["overlap"], ideal["windows"]))
    acc = accounting(run)
    if acc is None:
        print("   arrivals: no per-packet file, not counted one by one")
    else:
        print("   arrivals: %d inside + %d outside + %d of no window = %d of "
              "%d received%s"
              % (acc["inside"], acc["outside_tol"], acc["no_window"],
                 acc["inside"] + acc["outside_tol"] + acc["no_window"],
                 acc["received"],
                 "" if not acc["bad"] else
                 "; DO NOT ADD UP for " + ", ".join(acc["bad"])))
    if dep:
        print("   departures: %d inside + %d outside + %d of no window"
              % (dep_n - dep_out, dep_out, dep_nowin))
    bad = [] if acc is None else acc["bad"]
    coll = None if any(r["collisions"] is None for r in s) else \
        sum(r["collisions"] for r in s)
    other = None if any(elsewhere(r) is None for r in s) else \
        sum(elsewhere(r) for r in s)
    return {"lost": lost, "unknown": unknown,
            "dep": (dep_n, dep_out) if len(dep) == len(s) and dep_n else (n, None),
            "dep_nowin": dep_nowin, "bad": bad, "collisions": coll,
            "elsewhere": other, "sent": sum(r["sent"] or 0 for r in s),
            "self": sum(r["self_drops"] or 0 for r in s), "ideal": ideal}


# The headline's methods, tdmwin first: what the others are compared with.
METHODS = [("gated", "tdmwin (kernel gate)"),
           ("usertdm", "user-space TDM"),
           ("free", "free-running (no TDM)")]


def method_figures(run):
    """A run's headline figures: frames sent, lost to collisions and to
    the emulator (self drops) at the switch port, windows and windows
    overlapping another sender's at the receiver, goodput as a share of
    the line, and the ideal port's lost frames and overlapping windows;
    None where a count is missing."""
    s = list(run["senders"].values())
    sw = run["switch"]
    coll = None if any(r["collisions"] is None for r in s) else \
        sum(r["collisions"] for r in s)
    emu = None if any(r["self_drops"] is None for r in s) else \
        sum(r["self_drops"] for r in s)
    share = None
    if sw is not None:
        share = sum(goodput_bps(run, r) for r in s) / (sw["mbit"] * 1e6)
    ideal = run["ideal"]
    return {"sent": sum(r["sent"] or 0 for r in s), "collisions": coll,
            "self": emu, "overlap": run["run"].get("overlap_windows", 0),
            "windows": run["run"].get("windows",
                                      sum(r["windows"] for r in s)),
            "share": share,
            "ideal_lost": None if ideal is None else ideal["lost"],
            "ideal_overlap": None if ideal is None else ideal["overlap"]}


def compare(name, m, t):
    """One line: how method NAME (figures M) fares against tdmwin's (T),
    on frames lost to collisions and windows overlapping at the receiver."""
    if m["collisions"] is None or t["collisions"] is None:
        return "%s: not compared (no switch port counts)" % name
    worse = (m["collisions"] > t["collisions"], m["overlap"] > t["overlap"])
    better = (m["collisions"] < t["collisions"], m["overlap"] < t["overlap"])
    figs = ("%d frames lost to collisions and %d windows overlapping, "
            "against tdmwin's %d and %d"
            % (m["collisions"], m["overlap"], t["collisions"], t["overlap"]))
    if not any(worse) and not any(better):
        return ("%s TIES with tdmwin at this point: %s.  Here the kernel "
                "gate shows no advantage." % (name, figs))
    if not any(worse):
        return ("%s does BETTER than tdmwin at this point: %s." % (name, figs))
    if not any(better):
        return "tdmwin wins over %s: %s." % (name, figs)
    return ("%s and tdmwin are mixed at this point: %s." % (name, figs))


def headline(runs):
    """The demo's headline: per method, frames lost to collisions at the
    switch port, windows overlapping, goodput as a share of the line; the
    emulator's own drops apart; and each method against tdmwin."""
    g = runs.get("gated")
    sw = g["switch"] if g else None
    if sw is None:
        return
    ts = sw.get("timescale", 1)
    print("\n== headline: %d senders, windows of %d us, %d us of dead time, "
          "a guard of %d us, on a %d Mbit/s line%s"
          % (len(g["senders"]), sw["window_ns"] // 1000, sw["dead_ns"] // 1000,
             sw["guard_ns"] // 1000, sw["mbit"], "" if ts == 1 else
             "\n   (time scale %d: %d us, %d us and %d us on the undilated "
             "testbed's %d Mbit/s)"
             % (ts, sw["window_ns"] // 1000 // ts, sw["dead_ns"] // 1000 // ts,
                sw["guard_ns"] // 1000 // ts, sw["mbit"] * ts)))
    heads = ("method", "lost to collisions", "windows overlapping",
             "goodput", "emulator's drops", "ideal port")
    rows = []
    fig = {}
    for key, label in METHODS:
        run = runs.get(key)
        if not run:
            continue
        m = fig[key] = method_figures(run)
        rows.append((label,
                     "-" if m["collisions"] is None else
                     "%d of %d" % (m["collisions"], m["sent"]),
                     "%d of %d" % (m["overlap"], m["windows"]),
                     "-" if m["share"] is None else
                     "%.1f %% of the line" % (100 * m["share"]),
                     "-" if m["self"] is None else "%d" % m["self"],
                     "-" if m["ideal_lost"] is None else
                     "%d lost, %d overlapping" % (m["ideal_lost"],
                                                  m["ideal_overlap"])))
    width = [max(len(h), *(len(r[k]) for r in rows)) for k, h in enumerate(heads)]
    for r in [heads] + rows:
        print("  " + "  ".join("%-*s" % (w, c) for w, c in zip(width, r)).rstrip())
    print("  lost to collisions: tdmgen's frames the emulated switch port "
          "dropped while another\n"
          "    sender's frame was in its buffer, of the frames sent; the "
          "emulator's drops (self\n"
          "    drops, its bunching) apart; windows overlapping another "
          "sender's at the receiver;\n"
          "    goodput: frames received, whole on the wire, from the "
          "run's first arrival to its\n"
          "    last; ideal port: the senders' taps on perfect wires into "
          "the same port")
    for key, label in METHODS[1:]:
        if key in fig:
            print("  " + compare(label, fig[key], fig["gated"]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("folder")
    ap.add_argument("--senders", type=int, required=True)
    ap.add_argument("--early-us", type=int, default=1000)
    ap.add_argument("--late-us", type=int, default=1500)
    ap.add_argument("--outlier-permille", type=int, default=5)
    ap.add_argument("--windows", type=int, default=12)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--host-loaded", default="",
                    help="why the host was not quiet during the gated run: "
                    "its departures are then reported, not judged")
    a = ap.parse_args()
    runs = {n: load_run(a.folder, n, a.senders, a.early_us * 1000,
                        a.late_us * 1000) for n in RUNS}
    if runs["gated"] is None:
        print("demo: the gated run left no results", file=sys.stderr)
        return 1
    window_table(a.folder, a.windows)
    summary_table(runs, a.senders)
    print()
    g = verdict("gated", runs["gated"], a)
    fbad = []
    for other in ("free", "usertdm"):
        if runs[other]:
            fbad += verdict(other, runs[other], a)["bad"]
    headline(runs)
    if not a.check:
        return 0
    n, dep_out = g["dep"]
    allowed = n * a.outlier_permille // 1000
    coll_allowed = g["sent"] * a.outlier_permille // 1000
    bad = []
    # Timing checks: judged on a quiet host, else reported.
    timing = []
    if g["bad"] or fbad:
        bad.append("the counts do not add up to the packets received "
                   "(%s)" % ", ".join(g["bad"] + fbad))
    if g["dep_nowin"]:
        bad.append("%d departures of the gated run have no window "
                   "(not judged)" % g["dep_nowin"])
    if g["unknown"]:
        bad.append("the gated run lacks a sent count (%s)"
                   % ", ".join(g["unknown"]))
    if dep_out is None:
        bad.append("no departure tap for every sender")
    elif dep_out > allowed:
        timing.append("%d of %d packets of the gated run left outside "
                      "their windows (%d allowed)" % (dep_out, n, allowed))
    if g["collisions"] is None or g["elsewhere"] is None:
        bad.append("no switch port counts for every sender")
    else:
        if g["collisions"] > coll_allowed:
            timing.append("the gated run lost %d of %d frames to collisions "
                          "at the switch port (%d allowed)"
                          % (g["collisions"], g["sent"], coll_allowed))
        if g["elsewhere"]:
            timing.append("the gated run lost %d frames elsewhere than at "
                          "the switch port" % g["elsewhere"])
    ideal = g["ideal"]
    if ideal is None:
        bad.append("no ideal port for the gated run (its taps)")
    else:
        if ideal["lost"] > coll_allowed:
            timing.append("the gated run lost %d frames at the ideal port "
                          "(%d allowed)" % (ideal["lost"], coll_allowed))
        ovl_allowed = ideal["windows"] * a.outlier_permille // 1000
        if ideal["overlap"] > ovl_allowed:
            timing.append("%d of %d windows of the gated run overlapped "
                          "another sender's at the ideal port (%d allowed)"
                          % (ideal["overlap"], ideal["windows"], ovl_allowed))
    if not n:
        bad.append("the gated run received nothing")
    if timing and a.host_loaded:
        print("demo: not judged, reported (%s): %s"
              % (a.host_loaded, "; ".join(timing)))
    else:
        bad += timing
    if bad:
        print("demo check FAILED: " + "; ".join(bad))
        return 1
    print("demo check passed: the gated run lost %d frames: %d to collisions "
          "at the switch port (%d allowed), %d to the emulator's bunching "
          "there, %d elsewhere; at the ideal port %d lost, %d windows "
          "overlapping; %d of %d packets left outside their sender's "
          "windows, %d allowed%s" %
          (g["lost"], g["collisions"], coll_allowed, g["self"], g["elsewhere"],
           ideal["lost"], ideal["overlap"], dep_out, n, allowed,
           " (not judged: host loaded)" if a.host_loaded else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
