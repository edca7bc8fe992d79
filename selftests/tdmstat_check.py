#!/usr/bin/python3 -S
# SPDX-License-Identifier: GPL-2.0
"""Checks of tdmstat's outputs for the tdmstat selftests (standard library only).

  tdmstat_check.py inwin PREFIX [--early NS] [--late NS]
      every data packet of PREFIX-packets.csv: is its RX time inside one of
      its sender's windows of the plan in PREFIX.json, widened by the
      tolerances?  If not: late= if its TX time (when it was handed to the
      qdisc) was before the end of the window it arrived after (the gate
      could have sent it in time: a late receive path), else outside= (a
      gate violation).  Prints judged=, inside=, late=, outside=, per
      sender, and a histogram of the RX offsets in the cycle (1 ms bins).
  tdmstat_check.py compare PREFIX_A PREFIX_B
      the window rows and sender rows of two runs of tdmstat on the same
      traffic (capture and analyze): the same windows with the same counts,
      and the largest difference of the RX times.
  tdmstat_check.py sweep LABEL=PREFIX...
      the overlap-vs-dead-time table of a sweep (one prefix per run).
"""
import csv
import json
import sys


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(r for r in f if not r.startswith("#")))


def plan_of(prefix):
    with open(prefix + ".json") as f:
        return json.load(f)["plans"][-1]


def num(v):
    return None if v in ("", None) else int(v)


def opt(args, name, default):
    if name in args:
        i = args.index(name)
        v = args[i + 1]
        del args[i:i + 2]
        return int(v)
    return default


def cmd_inwin(args):
    early = opt(args, "--early", 1000000)
    late_tol = opt(args, "--late", 1500000)
    prefix = args[0]
    plan = plan_of(prefix)
    cyc, base = plan["cycle_ns"], plan.get("base_time", 0) or 0
    wins = {s["sender"]: [(w["offset_ns"], w["length_ns"]) for w in s["windows"]]
            for s in plan["senders"]}
    judged = outside = late = 0
    per = {}
    hist = {}
    for r in rows(prefix + "-packets.csv"):
        s = int(r["sender"])
        rx, tx = int(r["rx_ns"]) - base, int(r["tx_ns"]) - base
        off = rx % cyc
        hist[off // 1000000] = hist.get(off // 1000000, 0) + 1
        inside = False
        last_end = None     # end of the sender's last window before rx
        for o, ln in wins.get(s, []):
            # the window and its neighbours one cycle away, widened
            for k in (-1, 0, 1):
                a = o + k * cyc
                if a - early <= off < a + ln + late_tol:
                    inside = True
                if a + ln <= off and (last_end is None or a + ln > last_end):
                    last_end = a + ln
        judged += 1
        p = per.setdefault(s, [0, 0, 0])
        p[0] += 1
        if inside:
            continue
        # Outside: handed to the qdisc before its window closed, so the
        # gate may have sent it in time and the receive path was late
        # (a vCPU preempted by the host); or after, which only a gate
        # open in the closed time (or an early clock) explains.
        if last_end is not None and tx - (rx - off) < last_end:
            late += 1
            p[2] += 1
        else:
            outside += 1
            p[1] += 1
    print("judged=%d" % judged)
    print("inside=%d" % (judged - outside - late))
    print("late=%d" % late)
    print("outside=%d" % outside)
    for s in sorted(per):
        print("sender%d.judged=%d" % (s, per[s][0]))
        print("sender%d.outside=%d" % (s, per[s][1]))
        print("sender%d.late=%d" % (s, per[s][2]))
    print("# RX offset in the cycle (ms): " +
          " ".join("%d:%d" % (k, hist[k]) for k in sorted(hist)))
    return 0


WKEY = ("sender", "sender_window", "plan_version")
WCOUNT = ("packets", "bytes", "missing", "missing_before", "duplicates",
          "reordered", "tx_outside")
WTIME = ("start_rx_ns", "end_rx_ns")
SCOUNT = ("sent", "received", "lost", "duplicates", "reordered", "tx_outside")


def cmd_compare(args):
    a, b = args[0], args[1]
    wa = {tuple(r[k] for k in WKEY): r for r in rows(a + "-windows.csv")}
    wb = {tuple(r[k] for k in WKEY): r for r in rows(b + "-windows.csv")}
    print("windows_a=%d" % len(wa))
    print("windows_b=%d" % len(wb))
    print("windows_only_in_one=%d" % len(set(wa) ^ set(wb)))
    bad = []
    dmax = 0
    ovl = 0
    rxo = 0
    for k in sorted(set(wa) & set(wb), key=lambda k: tuple(int(x) for x in k)):
        ra, rb = wa[k], wb[k]
        for c in WCOUNT:
            if ra[c] != rb[c]:
                bad.append("window %s %s: %s != %s" % ("/".join(k), c, ra[c], rb[c]))
        for c in WTIME:
            # a correction row (late packets) has no RX times: equal if
            # both have none
            x, y = num(ra[c]), num(rb[c])
            if x is None or y is None:
                if (x is None) != (y is None):
                    bad.append("window %s %s: %s != %s" % ("/".join(k), c, ra[c], rb[c]))
                continue
            dmax = max(dmax, abs(x - y))
        if (ra["overlap_front"], ra["overlap_back"]) != (rb["overlap_front"], rb["overlap_back"]):
            ovl += 1
        if ra["rx_outside"] != rb["rx_outside"]:
            rxo += 1
    sa = {r["sender"]: r for r in rows(a + "-senders.csv")}
    sb = {r["sender"]: r for r in rows(b + "-senders.csv")}
    if set(sa) != set(sb):
        bad.append("senders differ: %s != %s" % (sorted(sa), sorted(sb)))
    for s in sorted(set(sa) & set(sb)):
        for c in SCOUNT:
            if sa[s][c] != sb[s][c]:
                bad.append("sender %s %s: %s != %s" % (s, c, sa[s][c], sb[s][c]))
    print("count_mismatches=%d" % len(bad))
    print("max_rx_diff_ns=%d" % dmax)
    print("overlap_mismatch_windows=%d" % ovl)
    print("rx_outside_mismatch_windows=%d" % rxo)
    for m in bad[:10]:
        print("# mismatch: " + m)
    return 0


def dead_time_of(plan):
    wins = sorted((w["offset_ns"], w["length_ns"]) for s in plan["senders"]
                  for w in s["windows"])
    n = len(wins)
    return min(wins[(i + 1) % n][0] + (plan["cycle_ns"] if i + 1 == n else 0) - (o + ln)
               for i, (o, ln) in enumerate(wins))


def cmd_sweep(args):
    print("# %-6s %8s %9s %9s %9s %8s %9s" % ("mode", "dead_us", "packets", "overlap",
                                              "ovl_win", "windows", "lost"))
    for i, a in enumerate(args):
        label, prefix = a.split("=", 1)
        with open(prefix + ".json") as f:
            js = json.load(f)
        ws = rows(prefix + "-windows.csv")
        ov = sum(num(r["overlap_front"]) for r in ws)
        pk = sum(num(r["packets"]) for r in ws)
        owin = sum(1 for r in ws if num(r["overlap_front"]) or num(r["overlap_back"]))
        dead = dead_time_of(js["plans"][-1])
        print("# %-6s %8d %9d %9d %9d %8d %9s" % (label, dead // 1000, pk, ov, owin, len(ws),
                                                  js["run"]["lost"]))
        print("run%d.label=%s" % (i, label))
        print("run%d.dead_ns=%d" % (i, dead))
        print("run%d.packets=%d" % (i, pk))
        print("run%d.overlap=%d" % (i, ov))
        print("run%d.overlap_windows=%d" % (i, owin))
        print("run%d.windows=%d" % (i, len(ws)))
        print("run%d.lost=%s" % (i, js["run"]["lost"]))
        print("run%d.ring_drops=%s" % (i, js["run"]["ring_drops"]))
    return 0


def main():
    if len(sys.argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    cmd, args = sys.argv[1], sys.argv[2:]
    return {"inwin": cmd_inwin, "compare": cmd_compare, "sweep": cmd_sweep}[cmd](args)


if __name__ == "__main__":
    sys.exit(main())
