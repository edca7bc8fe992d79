# SPDX-License-Identifier: GPL-2.0
"""Frames of a capture against the windows of one or two plans (what
`tb pcap` prints), and departures around an instant (span)."""
from .pcap import NSEC, read_pcap, udp_info


def parse_windows(text):
    """"off:len,..." (ns) -> [(off, len), ...]"""
    wins = []
    for w in text.split(","):
        if w:
            o, l = w.split(":")
            wins.append((int(o), int(l)))
    return wins


def frames(path, port=0, wire_mbit=0, wire_overhead=24, serialize=False):
    """(start on the wire, seq, time on the wire) of each frame to PORT (0:
    any) in a capture.  With WIRE_MBIT the stamp is when the frame's last
    bit left a serializer at that rate; with SERIALIZE as well it is when
    the qdisc let it go, and a perfect wire starts it when it has sent the
    frames before it."""
    out = []
    serial_end = 0
    for t, frame, lt in read_pcap(path):
        dport, seq = udp_info(frame, lt)
        if port and dport != port:
            continue
        wire = 0
        if wire_mbit:
            wire = -(-(len(frame) + wire_overhead) * 8000 // wire_mbit)
        if serialize:
            start = max(t, serial_end)
            serial_end = start + wire
            out.append((start, seq, wire))
        else:
            out.append((t - wire, seq, wire))
    return out


class Judgement:
    """What judge() found: RES, the counts by name; PLANS, [(base, cycle,
    windows)]; HIST, per plan the frames in each of BINS bins of the
    cycle; BAD, (t, offset, plan) of the frames outside."""

    def __init__(self, res, plans, hist, bad, switch, tol_early, tol_late):
        self.res = res
        self.plans = plans
        self.hist = hist
        self.bad = bad
        self.switch = switch
        self.tol_early = tol_early
        self.tol_late = tol_late

    def lines(self):
        """Key=value lines, then a histogram and the first frames outside
        (lines starting with '#')."""
        res = self.res
        out = ["%s=%d" % (k, res[k]) for k in sorted(res)]
        for i, (base, cycle, wins) in enumerate(self.plans):
            if self.switch is None and i:
                break
            hist = self.hist[i]
            bins = len(hist)
            width = cycle / bins
            out.append("# plan %d: cycle %d ns, windows %s (ns); tol -%d/+%d ns"
                       % (i + 1, cycle, wins, self.tol_early, self.tol_late))
            top = max(hist) or 1
            for b in range(bins):
                lo = b * width
                mark = " "
                for wo, wl in wins:
                    if wo <= lo + width / 2 < wo + wl:
                        mark = "W"
                out.append("#  %8.3f ms %s %6d %s"
                           % (lo / 1e6, mark, hist[b], "*" * (hist[b] * 50 // top)))
        for t, off, ph in self.bad[:10]:
            out.append("# outside: t=%d.%09d plan %d offset %.3f ms"
                       % (t // NSEC, t % NSEC, ph, off / 1e6))
        return out


def judge(path, cycle, windows, base=0, port=0, switch=None, base2=0,
          cycle2=0, windows2="", tol_early=1000000, tol_late=1500000,
          bins=20, wire_mbit=0, wire_overhead=24, serialize=False,
          far=500000, ref=None, nic_late=0):
    """Check that the frames of the capture PATH fall inside the windows
    of one or two plans; returns a Judgement.

    Plan 1 (BASE, CYCLE, WINDOWS "off:len,..." in ns) applies to frames
    before SWITCH (or all of them), plan 2 (BASE2, CYCLE2 or CYCLE,
    WINDOWS2) to frames after it; frames within TOL_LATE of the switch are
    not judged.  A frame is inside if offset in [off - TOL_EARLY, off + len
    + TOL_LATE) for some window (offsets taken modulo the cycle, both
    directions).  With WIRE_MBIT the capture is a tap after a serializer
    (netem rate) that stamps a frame when its last bit has left: the frame
    occupied the wire for (length + WIRE_OVERHEAD) * 8 / rate before its
    stamp, and that whole interval must lie inside the window, widened by
    the same tolerances.  With SERIALIZE as well, the capture is a tap on
    the sender's device, which stamps a frame when the qdisc lets it go,
    and a perfect wire at that rate sends the frames back to back in that
    order: each starts at max(its stamp, the end of the one before).
    max_out_ns is the farthest a frame lay outside its nearest window (no
    tolerance), far the frames beyond FAR ns.  window_N counts the judged
    frames of plan 1 that its window N (by offset, as the qdisc numbers its
    window slots) was the last to open before, TOL_EARLY included: a tap
    on the sender stamps a frame after the qdisc let it go, late by up to
    a host's preemption but never more than TOL_EARLY (the vCPUs' skew)
    early.  plan2_window_N counts those of plan 2.  What the qdisc's
    counters per slot must match.  With REF (a tap after a
    serializer, and the sender's tap as REF): each frame is matched by its
    sequence number to the end it has on a perfect wire from REF (as
    SERIALIZE computes it), and the lateness of the serializer is its
    stamp less that end (nic_late_p50_ns, nic_late_p99_ns,
    nic_late_max_ns).  The plan budgets NIC_LATE of it (the guard);
    outside_gate counts the frames still outside when the lateness beyond
    that is taken back, the frames the serializer's own delays do not
    explain; unmatched the frames not in REF (judged as they are)."""
    plans = [(base, cycle, parse_windows(windows))]
    if switch is not None:
        plans.append((base2, cycle2 or cycle, parse_windows(windows2)))

    pkts = frames(path, port, wire_mbit, wire_overhead, serialize)
    ideal = {}
    if ref:
        ideal = {seq: start + wire for start, seq, wire
                 in frames(ref, port, wire_mbit, wire_overhead, True)
                 if seq is not None}
    res = {"total": len(pkts), "judged": 0, "inside": 0, "outside": 0,
           "skipped": 0, "phase1": 0, "phase2": 0, "first_ns": 0,
           "last_ns": 0, "reorder": 0, "max_out_ns": 0, "far": 0}
    for i, (_, _, wins) in enumerate(plans):
        for n in range(len(wins)):
            res["%swindow_%d" % ("plan2_" if i else "", n)] = 0
    if ref:
        res.update(outside_gate=0, unmatched=0, nic_late_p50_ns=0,
                   nic_late_p99_ns=0, nic_late_max_ns=0)
    lates = []
    if pkts:
        res["first_ns"] = pkts[0][0]
        res["last_ns"] = pkts[-1][0]
    last_seq = -1
    for _, seq, _ in pkts:
        if seq is not None:
            if seq < last_seq:
                res["reorder"] += 1
            last_seq = max(last_seq, seq)
    hist = [[0] * bins for _ in plans]
    bad = []

    def place(t, wire, wins, cycle):
        """(inside, distance outside, index of the window that opened
        last before it) of a frame starting at offset t."""
        ok = False
        dist, last, since = cycle, 0, None
        for n, (wo, wl) in enumerate(wins):
            for shift in (-cycle, 0, cycle):
                lo = wo + shift - tol_early
                hi = wo + wl + shift + tol_late
                if lo <= t and t + wire < hi:
                    ok = True
                dist = min(dist, max(wo + shift - t,
                                     t + wire - (wo + wl + shift), 0))
                if lo <= t and (since is None or t - lo < since):
                    last, since = n, t - lo
        return ok, dist, last

    for t, seq, wire in pkts:
        if switch is not None and abs(t - switch) < tol_late:
            res["skipped"] += 1
            continue
        idx = 1 if (switch is not None and t >= switch) else 0
        pbase, pcycle, wins = plans[idx]
        res["phase%d" % (idx + 1)] += 1
        off = (t - pbase) % pcycle
        hist[idx][min(off * bins // pcycle, bins - 1)] += 1
        ok, dist, last = place(off, wire, wins, pcycle)
        res["%swindow_%d" % ("plan2_" if idx else "", last)] += 1
        res["judged"] += 1
        if ok:
            res["inside"] += 1
        else:
            res["outside"] += 1
            bad.append((t, off, idx + 1))
        res["max_out_ns"] = max(res["max_out_ns"], dist)
        if dist > far:
            res["far"] += 1
        if ref:
            end = ideal.get(seq)
            if end is None:
                res["unmatched"] += 1
                res["outside_gate"] += not ok
                continue
            late = t + wire - end
            lates.append(late)
            if not ok:
                # Take back what the serializer was late beyond its budget.
                back = max(late - nic_late, 0)
                res["outside_gate"] += not place(off - back, wire, wins,
                                                 pcycle)[0]
    if lates:
        lates.sort()
        res["nic_late_p50_ns"] = lates[len(lates) // 2]
        res["nic_late_p99_ns"] = lates[len(lates) * 99 // 100]
        res["nic_late_max_ns"] = lates[-1]
    return Judgement(res, plans, hist, bad, switch, tol_early, tol_late)


def span(path, to, start=0, port=0):
    """Departures of a capture around an instant: how many lie in [START,
    TO), the last one before TO and the first one at or after it (0 if
    none), in ns on the capture's clock: {in_span, last_before,
    first_after}."""
    n, last, first = 0, 0, 0
    for t, frame, lt in read_pcap(path):
        if port and udp_info(frame, lt)[0] != port:
            continue
        if start <= t < to:
            n += 1
        if t < to:
            last = max(last, t)
        elif not first or t < first:
            first = t
    return {"in_span": n, "last_before": last, "first_after": first}
