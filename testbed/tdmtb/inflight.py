# SPDX-License-Identifier: GPL-2.0
"""Where a departure was decided: each frame handed to the driver against
the batch of the qdisc it left in, from the kernel's own trace events
(`tb inflight`).

A root qdisc's frames leave in batches: dequeue_skb() (net/sched/
sch_generic.c) calls the qdisc's ->dequeue up to 9 times on a device with
more than one TX queue (try_bulk_dequeue_skb_slow) before the first frame
of the batch is transmitted; the qdisc_dequeue trace event marks the end
of that loop (its "packets" is the batch's size), and net_dev_start_xmit
each frame handed to the driver, right after a tap (dev_queue_xmit_nit,
tcpdump -Q out) would stamp it: the event is the sender's tap, one that
drops nothing (tcpdump under TCG drops most of a flood).  So a frame
that leaves outside its window was either
decided outside (the gate's fault) or decided inside and held in flight
until its batch went on (a stall of the CPU between the two: the
emulator's, under TCG).

The trace is ftrace's text output (trace_clock mono), shifted by SHIFT
ns (the plan's clock - CLOCK_MONOTONIC, taken in the guest).
"""
import re

from .judge import parse_windows

_LINE = re.compile(r"^\s*.+?-\d+\s+\[(\d+)\]\s+\S+\s+(\d+)\.(\d+): "
                   r"(\w+): (.*)$")
_LOST = re.compile(r"^# entries-in-buffer/entries-written: (\d+)/(\d+)")


def read_trace(path, shift, dev, ifindex, decide=None):
    """(events, lost): events are (t_ns, cpu, kind, packets) of DEV's
    transmissions ("x"), IFINDEX's non-empty batches ("d") and, with
    DECIDE (the name of a return probe on the qdisc's ->dequeue), each
    frame the qdisc handed out ("q"), in the trace's order; lost, the
    events the ring buffer overwrote."""
    events, lost = [], 0
    want_dev, want_if = "dev=%s " % dev, "ifindex=%d " % ifindex
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = _LOST.match(line)
            if m:
                lost = int(m.group(2)) - int(m.group(1))
                continue
            m = _LINE.match(line)
            if not m:
                continue
            frac = m.group(3)
            t = int(m.group(2)) * 10**9 + int(frac) * 10**(9 - len(frac))
            fields = m.group(5) + " "
            if m.group(4) == "net_dev_start_xmit":
                if want_dev in fields:
                    events.append((t + shift, int(m.group(1)), "x", 1))
            elif m.group(4) == decide:
                if not re.search(r"ret=(0x)?0+ ", fields):
                    events.append((t + shift, int(m.group(1)), "q", 1))
            elif m.group(4) == "qdisc_dequeue" and want_if in fields:
                n = int(re.search(r"packets=(\d+)", fields).group(1))
                if n:
                    events.append((t + shift, int(m.group(1)), "d", n))
    return events, lost


def outside(t, base, cycle, wins):
    """ns from T to the nearest window of the plan (0 inside)."""
    off = (t - base) % cycle
    best = cycle
    for o, ln in wins:
        for s in (o - cycle, o, o + cycle):
            if s <= off < s + ln:
                return 0
            best = min(best, s - off if off < s else off - (s + ln))
    return best


def meets(lo, hi, base, cycle, wins):
    """Does [LO, HI] meet a window of the plan?"""
    if hi - lo >= cycle:
        return True
    k0 = (lo - base) // cycle
    for k in (k0 - 1, k0, k0 + 1):
        for o, ln in wins:
            s = base + k * cycle + o
            if s <= hi and lo < s + ln:
                return True
    return False


def inflight(trace, shift, dev, ifindex, cycle, windows, base=0,
             far=500000, decide=None):
    """The counts (a dict): judged, DEV's departures; far, those more
    than FAR ns outside any window; of them far_inflight, those that may
    have been decided inside, far_decided_outside the rest; decisions,
    the frames the qdisc handed out; decided_outside, those certainly
    decided outside; batches and max_batch; delay_max_us, the longest
    time from a frame's decision to its departure; orphans, departures
    with no decision before them; lost, events the trace's ring
    overwrote.

    A decision lies between the event before it on its CPU (events on one
    CPU are in program order) and the return of the qdisc's ->dequeue
    (DECIDE, a return probe), or without DECIDE the end of its batch
    (qdisc_dequeue).  It is certainly outside if that whole span is: a
    stall of the CPU inside the span, which moves the events and not the
    clock the gate read, cannot make a decision look outside.  Departures
    are paired with decisions in order: one qdisc runs on one CPU at a
    time, and nothing was requeued."""
    from collections import deque
    wins = parse_windows(windows)
    events, lost = read_trace(trace, shift, dev, ifindex, decide)
    prev = {}			# cpu -> time of its last event
    todo = deque()		# decisions (lo, hi) not yet sent
    res = dict.fromkeys(("batches", "max_batch", "decided_outside", "judged",
                         "far", "far_inflight", "far_decided_outside",
                         "delay_max_us", "orphans", "decisions"), 0)
    res["lost"] = lost
    for t, cpu, kind, n in events:
        lo = prev.get(cpu, t - cycle)
        prev[cpu] = t
        if kind == "d":
            res["batches"] += 1
            res["max_batch"] = max(res["max_batch"], n)
        if kind == ("q" if decide else "d"):
            ok = meets(lo, t, base, cycle, wins)
            res["decisions"] += n
            res["decided_outside"] += 0 if ok else n
            todo.extend([(lo, t, ok)] * n)
            continue
        if kind != "x":
            continue
        res["judged"] += 1
        if not todo:
            res["orphans"] += 1
            continue
        lo, hi, ok = todo.popleft()
        res["delay_max_us"] = max(res["delay_max_us"], (t - hi) // 1000)
        if outside(t, base, cycle, wins) <= far:
            continue
        res["far"] += 1
        res["far_inflight" if ok else "far_decided_outside"] += 1
    return res
