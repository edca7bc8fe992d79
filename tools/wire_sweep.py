#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The figure of merit of the dead-time sweep on the switch testbed
(Documentation/benchmarks.rst): per method, the smallest dead time at
which the receiver saw no overlap between senders and the switch port
lost no frame to a collision of senders, and the utilization there.

A point is one run: {"method", "dead_ns", "cycles", "overlap", "loss",
"collisions", "self_drops", "goodput_bps", "ideal_overlap", "ideal_loss",
"ideal_goodput_bps", ...}.  Each point has two ports: the emulated one
(overlap, collisions, goodput_bps: the switch testbed's netem port and
the tap after it) and the ideal one (ideal_*: the same NICs, wires and
port computed from the taps where the frames left the senders' devices,
without the emulator's timing: the devices' own taps, or for senders
past the qdisc their veth peers', ideal_tap; testbed/tdmtb/idealport.py).  The figure is
judged at the ideal port by default; headline() gives it at both ports,
strict, with dead times also in frame times (a frame's time on the
testbed's wire: the figure carries over to other line rates), and
targets() says which targets it meets.  Pure functions;
tools/test_wire_sweep.py tests them on synthetic points with known
answers.
"""
import sys

# Per port: the point's keys of overlapping windows, frames lost to
# collisions, and goodput.
PORTS = {"ideal": ("ideal_overlap", "ideal_loss", "ideal_goodput_bps"),
         "emulated": ("overlap", "collisions", "goodput_bps")}


def tap_ok(p):
    """Did point P's frames leave where its ideal port was fed from?  A
    point fed from another tap than the senders' own (ideal_tap: a sender
    past the qdisc, whose frames the device's tap never sees) is its
    method's only if that tap saw none of them (sender_tap_frames): a
    frame there took the qdisc's path, and the qdisc, not the method,
    gated it."""
    return p.get("ideal_tap", "sender") == "sender" or p.get("sender_tap_frames") == 0


def clean(p, min_cycles, port="ideal", permille=0):
    """A point is clean when it ran at least MIN_CYCLES cycles (fewer judge
    nothing) and saw no overlap and no frame lost to a collision at PORT;
    with PERMILLE, at most that share of its windows overlapping and of
    its frames lost (the selftests' departure allowance: the ideal port
    still carries the senders' taps' stamps, which a stalled vCPU
    delays).  At the emulated port, self drops (one sender's frames
    bunched by the emulator, testbed/tdmtb/portdrops.py) are
    reported, not judged: no wire can make them; the ideal port has
    none.  A point whose frames took another path than its method's
    (tap_ok) is clean nowhere."""
    ovl, coll, _ = PORTS[port]
    o, c = p.get(ovl), p.get(coll)
    if p.get("cycles", 0) < min_cycles or o is None or c is None or not tap_ok(p):
        return False
    return (o <= p.get("windows", 0) * permille // 1000
            and c <= p.get("sent", 0) * permille // 1000)


def smallest_clean(points, method, min_cycles, port="ideal", permille=0,
                   ok=None):
    """The smallest dead time D of METHOD's points such that the point at D
    and every point of a larger dead time are clean: a clean point below a
    dirty one is luck, not a setting to deploy.  None if the point of the
    largest dead time is not clean (or there are none).  Points of the
    same dead time (repeats) must all be clean.  OK(point) says what
    clean is, when not clean() at PORT."""
    if ok is None:
        ok = lambda p: clean(p, min_cycles, port, permille)
    pts = sorted((p for p in points if p.get("method") == method),
                 key=lambda p: p["dead_ns"])
    best = None
    for d in sorted({p["dead_ns"] for p in pts}, reverse=True):
        if not all(ok(p) for p in pts if p["dead_ns"] == d):
            break
        best = d
    return best


def slot_utilization(window_ns, guard_ns, dead_ns):
    """Sum over the senders of (window - guard) over the cycle, for the
    automatic plan of equal windows each followed by DEAD_NS:
    N (W - G) / (N (W + D))."""
    return (window_ns - guard_ns) / float(window_ns + dead_ns)


# The bytes a frame adds on the wire to its UDP payload: Ethernet, IP and
# UDP headers, FCS, preamble and gap (testbed/wire.sh, WIRE_FRAME_EXTRA).
FRAME_EXTRA = 66


def frame_time_ns(run):
    """A frame's time on the testbed's wire (ns) for a sweep RUN (the JSON
    of tools/bench-wire-guest): its frame_ns, or, in a run from before
    it was written, from its payload and its wire's rate (mbit, already
    divided by the time scale).  None without either."""
    if run.get("frame_ns"):
        return run["frame_ns"]
    if run.get("payload") and run.get("mbit"):
        return (run["payload"] + FRAME_EXTRA) * 8000 // run["mbit"]
    return None


def in_frames(dead_ns, frame_ns):
    """DEAD_NS in frame times (two decimals), or None."""
    if dead_ns is None or not frame_ns:
        return None
    return round(dead_ns / float(frame_ns), 2)


def figure(points, methods, window_ns, guard_ns, line_bps, min_cycles,
           port="ideal", permille=0, frame_ns=None):
    """Per method: dead_ns (smallest clean at PORT with PERMILLE, or
    None), in frame times (dead_frames, with FRAME_NS), the slot
    utilization there and the goodput there (at PORT) over the line rate
    (the mean of the points at that dead time)."""
    good = PORTS[port][2]
    out = {}
    for m in methods:
        d = smallest_clean(points, m, min_cycles, port, permille)
        row = {"dead_ns": d, "utilization": None, "goodput_ratio": None}
        if frame_ns:
            row["dead_frames"] = in_frames(d, frame_ns)
        if d is not None:
            at = [p for p in points if p.get("method") == m and p["dead_ns"] == d]
            row["utilization"] = round(slot_utilization(window_ns, guard_ns, d), 4)
            row["goodput_ratio"] = round(
                sum(p.get(good) or 0 for p in at) / len(at) / line_bps, 4)
        out[m] = row
    return out


# The utilization target at tdmwin's smallest clean dead time, by senders.
UTILIZATION_TARGET = {3: 0.95, 8: 0.90}


def at_most(a, b, factor, largest):
    """Is dead time A <= FACTOR x B, where None means "clean nowhere up to
    LARGEST" (the largest dead time swept), so larger than it?  True,
    False, or None when the sweep cannot tell."""
    if a is None:
        return None if b is None else False
    if b is not None:
        return a <= factor * b
    # B is beyond LARGEST: A <= FACTOR x LARGEST is enough.
    return True if largest is not None and a <= factor * largest else None


def targets(fig, senders, largest):
    """The targets for tdmwin in FIG (figure()'s answer at one port), with
    SENDERS senders and LARGEST the largest dead time swept: a list of
    (name, measured, met), met True, False or None (the sweep cannot
    tell)."""
    t = fig.get("tdmwin", {})
    d, u = t.get("dead_ns"), t.get("utilization")
    out = []
    for m, factor, name in (("usertdm", 0.2, "tdmwin's dead time <= 1/5 of usertdm's"),
                            ("taprio", 1, "tdmwin's dead time <= taprio's")):
        if m not in fig:
            continue
        o = fig[m].get("dead_ns")
        # Both clean down to the same dead time: met, but only as a tie
        # that the sweep cannot break (a smaller dead time or guard can).
        tie = ", a tie" if d is not None and d == o else ""
        out.append((name, "%s vs %s%s" % (_us(d), _us(o), tie),
                    at_most(d, o, factor, largest)))
    goal = UTILIZATION_TARGET.get(senders)
    if goal is not None:
        out.append(("utilization at tdmwin's dead time >= %.0f %%" % (goal * 100),
                    "-" if u is None else "%.1f %%" % (u * 100),
                    None if u is None else u >= goal))
    return out


def _us(d):
    return "none" if d is None else "%.0f us" % (d / 1e3)


def verdict(met):
    """A target's verdict in words."""
    return {True: "met", False: "not met", None: "undecided"}[met]


def headline(run, senders, methods, permille):
    """The sweep's headline for SENDERS senders of RUN (the JSON of
    tools/bench-wire-guest): per port ("ideal", "emulated", both strict,
    and "ideal_allowance", with PERMILLE), figure() with dead times in
    frame times, and the targets met at each strict port."""
    pts = [p for p in run.get("points", []) if p.get("senders") == senders]
    fr = frame_time_ns(run)
    args = (pts, methods, run.get("window_ns", 0), run.get("guard_ns", 0),
            run.get("mbit", 0) * 1e6, run.get("min_cycles", 0))
    largest = max((p["dead_ns"] for p in pts), default=None)
    out = {"frame_ns": fr,
           "ideal": figure(*args, port="ideal", frame_ns=fr),
           "emulated": figure(*args, port="emulated", frame_ns=fr),
           "ideal_allowance": figure(*args, port="ideal", permille=permille,
                                     frame_ns=fr)}
    out["targets"] = {port: targets(out[port], senders, largest)
                      for port in ("ideal", "emulated")}
    return out


def ratio(a, b):
    """A over B, or None when either is missing or B is 0."""
    if a is None or b is None or b == 0:
        return None
    return round(a / float(b), 3)


# The corner turn (N senders to M receivers, WIRE_CORNER): a point has
# "corner" ("3x3"), the ideal ports' losses summed (ideal_loss: every
# frame a receiver's port dropped, collisions among them), the ideal NICs'
# drops, the senders' qdiscs' drops, and "ports": each receiver's link
# (utilization: its frames out of its ideal port within the run over the
# line rate; planned: its windows' share of the cycle).
CORNER_METHODS = ("free", "free_rr", "usertdm_barrel", "tdmwin_barrel")
CORNER_BASE = "tdmwin_barrel"
# The target: each receiver's link at least this utilized at zero loss
# with the tdmwin barrel shifter (issue 25).
CORNER_UTILIZATION_TARGET = 0.90


def corner_losses(p):
    """The frames corner point P lost: at its ideal ports, at its ideal
    NICs and in its senders' qdiscs; None when any of them is unknown, or
    the taps missed frames (untapped: sent, neither tapped nor dropped by
    a qdisc), whose fate the ideal ports cannot tell."""
    ks = ("ideal_loss", "ideal_nic_drops", "qdisc_drops")
    if any(p.get(k) is None for k in ks) or p.get("untapped"):
        return None
    return sum(p[k] for k in ks)


def corner_clean(p, min_cycles, permille=0):
    """A corner point is clean when it ran at least MIN_CYCLES cycles, sent
    frames (none sent judges nothing) and lost no frame (corner_losses; with PERMILLE, at most that share of
    the frames sent: the selftests' departure allowance)."""
    lost = corner_losses(p)
    if p.get("cycles", 0) < min_cycles or lost is None or p.get("sent", 0) <= 0:
        return False
    return lost <= p.get("sent", 0) * permille // 1000


def _mean(xs):
    xs = [x for x in xs if x is not None]
    return round(sum(xs) / len(xs), 4) if xs else None


def corner_at(points, method, dead_ns):
    """METHOD's points at DEAD_NS, summed up: per receiver (in order) the
    mean utilization, payload utilization and planned share over the
    repeats, the least utilization of any receiver, and the frames lost
    and sent over the repeats.  None without such a point."""
    at = [p for p in points if p.get("method") == method and p["dead_ns"] == dead_ns]
    if not at:
        return None
    m = min(len(p.get("ports", [])) for p in at)
    per = lambda k: [_mean(p["ports"][j].get(k) for p in at) for j in range(m)]
    util = per("utilization")
    losses = [corner_losses(p) for p in at]
    return {"dead_ns": dead_ns, "utilization": util,
            "payload_utilization": per("payload_utilization"),
            "planned": per("planned"),
            "min_utilization": min((u for u in util if u is not None), default=None),
            "lost": None if None in losses else sum(losses),
            "collisions": sum(p.get("ideal_collisions") or 0 for p in at),
            "sent": sum(p.get("sent", 0) for p in at)}


def corner_figure(points, methods, min_cycles, permille=0, frame_ns=None):
    """Per method: its smallest clean dead time (corner_clean, with
    PERMILLE), in frame times with FRAME_NS, and corner_at() there."""
    ok = lambda p: corner_clean(p, min_cycles, permille)
    out = {}
    for m in methods:
        d = smallest_clean(points, m, min_cycles, ok=ok)
        row = {"dead_ns": d, "dead_frames": in_frames(d, frame_ns),
               "at": None if d is None else corner_at(points, m, d)}
        out[m] = row
    return out


def corner_ratios(fig, base=CORNER_BASE):
    """Per method other than BASE: per receiver, BASE's utilization at its
    smallest clean dead time over the method's at its own (None where
    either is clean nowhere)."""
    b = (fig.get(base) or {}).get("at")
    out = {}
    for m, row in fig.items():
        if m == base:
            continue
        o = row.get("at")
        if not b or not o:
            out[m] = None
            continue
        out[m] = [ratio(x, y) for x, y in zip(b["utilization"], o["utilization"])]
    return out


def corner_targets(fig, points, base=CORNER_BASE, free="free",
                   goal=CORNER_UTILIZATION_TARGET):
    """The target of the corner turn: at BASE's smallest clean dead time
    every receiver's link at least GOAL utilized, in a plan whose
    free-running equivalent (FREE at that dead time) loses frames.  A
    list of (name, measured, met), met True, False or None (the sweep
    cannot tell)."""
    b = (fig.get(base) or {}).get("at")
    u = None if not b else b["min_utilization"]
    out = [("every receiver's link >= %.0f %% utilized at zero loss with %s"
            % (goal * 100, base),
            "none clean" if b is None else "least %.1f %%" % (u * 100),
            False if b is None else u >= goal)]
    f = None if b is None else corner_at(points, free, b["dead_ns"])
    out.append(("%s loses frames at that dead time" % free,
                "-" if f is None or f["lost"] is None else
                "%d of %d lost" % (f["lost"], f["sent"]),
                None if f is None or f["lost"] is None else f["lost"] > 0))
    return out


def corner_headline(run, corner, methods, permille):
    """The corner turn's headline for CORNER ("3x3") of RUN: figure()'s
    corner form, strict and with PERMILLE, the ratios to tdmwin's barrel
    shifter and the target."""
    pts = [p for p in run.get("points", []) if p.get("corner") == corner]
    fr = frame_time_ns(run)
    mc = run.get("min_cycles", 0)
    strict = corner_figure(pts, methods, mc, frame_ns=fr)
    return {"frame_ns": fr, "strict": strict,
            "allowance": corner_figure(pts, methods, mc, permille, fr),
            "ratios": corner_ratios(strict),
            "targets": corner_targets(strict, pts)}


def main(argv):
    """wire_sweep.py clean --min-cycles N [--permille P] [--port PORT]:
    exit 0 if the point (JSON on stdin) is clean, 1 if not, 2 on bad
    input.  tools/bench-wire-guest asks it when it sweeps downwards
    (WIRE_DESCEND), to stop a method at its first point that is not."""
    import argparse
    import json
    ap = argparse.ArgumentParser(prog="wire_sweep.py")
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("clean", help="is the point on stdin clean?")
    c.add_argument("--min-cycles", type=int, required=True)
    c.add_argument("--permille", type=int, default=0)
    c.add_argument("--port", choices=sorted(PORTS), default="ideal")
    a = ap.parse_args(argv)
    try:
        p = json.load(sys.stdin)
    except ValueError as e:
        print("wire_sweep.py: the point is not JSON: %s" % e, file=sys.stderr)
        return 2
    if not isinstance(p, dict):
        print("wire_sweep.py: the point is not a JSON object", file=sys.stderr)
        return 2
    return 0 if clean(p, a.min_cycles, a.port, a.permille) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
