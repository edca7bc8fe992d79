#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""make bench's report: every benchmark's JSON in build/bench/, one
Markdown and one JSON report (build/bench/report.md, report.json).

Inputs (whichever exist; each benchmark measured its own baseline in the
same run, so only the ratios carry meaning under QEMU TCG):
  qdisc-<kernel>.json    tools/bench-guest: tdmwin vs pfifo and taprio
  tdmd-<kernel>.json     tools/bench-tdmd-guest: plan push for N members
  rx-<kernel>.json       tools/bench-rx-guest: the recorders (tdmrx, BPF,
                         XDP, producer ring, tcpdump), hook cost
  tdmstat-host.json      tools/bench: tdmstat records/s against senders
  wire-<kernel>.json     tools/bench-wire-guest: the dead-time sweep on the
                         switch testbed, per method (tools/wire_sweep.py)
"""
import glob
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import wire_sweep  # noqa: E402


def load(pattern):
    out = {}
    for path in sorted(glob.glob(pattern)):
        try:
            with open(path) as f:
                out[os.path.basename(path)] = json.load(f)
        except (OSError, ValueError) as e:
            print("bench_report: %s: %s" % (path, e), file=sys.stderr)
    return out


def table(head, rows):
    lines = ["| " + " | ".join(head) + " |",
             "|" + "|".join("---" for _ in head) + "|"]
    for r in rows:
        lines.append("| " + " | ".join("-" if v is None else str(v)
                                       for v in r) + " |")
    return "\n".join(lines)


def observe_latency(folder, runs):
    """The gate-open latency each qdisc run's captures show (tools/
    bench-guest keeps them, open_latency_capture): read here, on the host,
    through tools/cycle_offsets.py, into open_latency_observed and back
    into the run's JSON."""
    import cycle_offsets
    for name, r in runs.items():
        path = os.path.join(folder, name)
        cap = r.get("open_latency_capture")
        if not cap or r.get("open_latency_observed"):
            continue
        win = cycle_offsets.parse_window(cap["window"])
        obs = {}
        for q, name in cap["pcaps"].items():
            try:
                times = cycle_offsets.capture_times(
                    os.path.join(folder, name), cap["clock_shift_ns"])
            except (OSError, ValueError) as e:
                obs[q] = {"error": str(e)}
                continue
            obs[q] = cycle_offsets.open_latency(
                times, cap["base_ns"], cap["cycle_ns"], [win],
                cap["tolerance_ns"])
        r["open_latency_observed"] = obs
        with open(path, "w") as f:
            json.dump(r, f, indent=2)


def qdisc_section(runs):
    out = []
    for name, r in runs.items():
        pps = r.get("pps", {})
        out.append("### Qdisc cost, kernel %s (%s)\n" % (r.get("kernel"), name))
        out.append("pktgen, 1000 B frames, %s rounds of %s s, queue_xmit "
                   "through the qdisc of a veth.\n" % (r.get("rounds"),
                                                       r.get("seconds")))
        out.append(table(["qdisc", "pps (median of rounds)"], [(k, v) for k, v in pps.items()]))
        out.append("")
        out.append(table(["ratio", "measured", "target"],
                         [(k, v, r.get("targets", {}).get(k))
                          for k, v in r.get("ratios", {}).items()]))
        axis = r.get("windows_axis")
        if axis:
            out.append("\nAgainst windows per cycle: 50 % duty over an 8 ms "
                       "cycle in N windows (taprio: the same schedule as 2N "
                       "entries).\n")
            out.append(table(["windows", "tdmwin pps", "taprio pps",
                              "ratio tdmwin/taprio"],
                             [(x.get("windows"), x.get("tdmwin_pps"),
                               x.get("taprio_pps"), x.get("ratio_tdmwin_to_taprio"))
                              for x in axis]))
        lat = r.get("open_latency_observed") or {}
        xs = r.get("open_latency_tdmwin_xstats", {})
        out.append("\nGate-open latency at 50 %% duty, 10 kpps: the first packet "
                   "of each window seen by tcpdump on the peer (us); tdmwin's "
                   "own counter: mean %s ns, max %s ns.\n"
                   % (xs.get("open_latency_mean"), xs.get("open_latency_max")))
        keys = ("windows", "min_ns", "median_ns", "p99_ns", "max_ns")
        out.append(table(["qdisc", "windows", "min", "median", "p99", "max"],
                         [[q] + [(v.get(k) if k == "windows" else
                                  "%.1f" % (v[k] / 1000) if v.get(k) is not None
                                  else None) for k in keys]
                          for q, v in lat.items() if isinstance(v, dict)]))
        out.append("")
    return out


def tdmd_section(runs):
    out = []
    for name, r in runs.items():
        out.append("### Plan push against members, kernel %s (%s)\n"
                   % (r.get("kernel"), name))
        out.append("From `tdmctl plan push` to every member's answer to "
                   "the commit (prepare, then commit); baseline: the same "
                   "change made with `tc qdisc change` in each member's "
                   "namespace one after the other.\n")
        rows = []
        for x in r.get("results", []):
            rows.append((x.get("members"),
                         "%.1f" % (x.get("push_us_median", 0) / 1000),
                         "%.1f" % (x.get("prepared_us_median", 0) / 1000),
                         "%.1f" % (x.get("coordinator_us_median", 0) / 1000),
                         "%.1f" % (x.get("sequential_tc_us_median", 0) / 1000),
                         x.get("ratio_push_to_tc")))
        out.append(table(["members", "push to all commits (ms)",
                          "all prepared (ms)", "all committed (ms)",
                          "sequential tc (ms)", "ratio push/tc"], rows))
        out.append("")
    return out


def rx_ladder_rows(run):
    """One row per offered rate: what each recorder got, and its CPU."""
    by_rate = {}
    for rec, v in run.items():
        for x in v.get("ladder", []):
            by_rate.setdefault(x["offered_pps"], {})[rec] = x
    rows = []
    for rate in sorted(by_rate):
        row = [rate]
        for rec in run:
            x = by_rate[rate].get(rec)
            row += (["%s/%s%s%s" % (x["recorded"], x["received"],
                                    ", %d dropped" % x["dropped"]
                                    if x["dropped"] else "",
                                    ", %d missed by the receiver"
                                    % x["receiver_missed"]
                                    if x.get("receiver_missed") else ""),
                     x.get("cpu_ns_per_record")] if x else [None, None])
        rows.append(row)
    return rows


def rx_ladder(out, title, run):
    head = ["offered pps"]
    for rec in run:
        head += ["%s recorded/received" % rec, "%s CPU ns/record" % rec]
    out.append(title + "\n")
    out.append(table(["recorder", "loss-free records/s", "CPU ns/record",
                      "of it the receiver's", "BPF program ns/packet",
                      "lost at some rate"],
                     [(rec, v.get("loss_free_records_per_s"),
                       v.get("cpu_ns_per_record"),
                       v.get("receiver_cpu_ns_per_record"),
                       v.get("bpf_ns_per_packet"),
                       "yes" if v.get("loss_seen")
                       else "no (a lower bound: the traffic was the limit)")
                      for rec, v in run.items()]))
    out.append("")
    out.append(table(head, rx_ladder_rows(run)))
    out.append("")


def rx_section(runs):
    out = []
    for name, r in runs.items():
        out.append("### Receiver: the recorders, kernel %s (%s)\n"
                   % (r.get("kernel"), name))
        out.append("%s; recorders on CPU %s.\n"
                   % (r.get("generator"), r.get("recorders_pinned_to_cpu") or "any"))
        if r.get("ring_receiver"):
            out.append("Producer ring: %s.\n" % r["ring_receiver"])
        if isinstance(r.get("loss_free"), dict):
            rx_ladder(out, "Loss-free rate, rate doubling per step:",
                      r["loss_free"])
            eq = r.get("equal_cpu", {})
            if eq.get("loss_free"):
                rx_ladder(out, "The same with each recorder held to %s %% of "
                          "one CPU (cgroup cpu.max):" % eq.get("cpu_quota_percent"),
                          eq["loss_free"])
            elif eq.get("skipped"):
                out.append("Equal-CPU ladder skipped: %s.\n" % eq["skipped"])
        out.append(table(["recorder attached", "receive pps"],
                         list(r.get("receive_pps", {}).items())))
        out.append("")
        out.append(table(["ratio", "measured", "target"],
                         [(k, v, {"loss_free tdmrx/tcpdump": ">= 2",
                                  "loss_free at equal CPU tdmrx/tcpdump": ">= 2"}
                           .get(k)) for k, v in r.get("ratios", {}).items()]))
        hook = r.get("hook_overhead_percent", {})
        out.append("\ntdmrx hook overhead (target <= 5 %%): %s %% while recording, "
                   "%s %% for packets it does not record.\n"
                   % (hook.get("recording"), hook.get("not_matching")))
        rows = [(what, hook.get(k + "_recording"), hook.get(k + "_not_matching"))
                for what, k in (("BPF recorder", "bpf"), ("XDP recorder", "xdp"),
                                ("producer ring (pushing; the receiver alone)",
                                 "ring"))
                if hook.get(k + "_recording") is not None
                or hook.get(k + "_not_matching") is not None]
        if rows:
            out.append(table(["recorder", "receive rate lost recording (%)",
                              "for packets it does not record (%)"], rows))
            out.append("")
    return out


def tdmstat_section(runs):
    out = []
    for name, r in runs.items():
        out.append("### tdmstat engine against senders, host (%s)\n" % name)
        out.append(table(["senders", "records", "records/s"],
                         [(x.get("senders"), x.get("records"),
                           "%.1f M" % (x.get("records_per_s", 0) / 1e6))
                          for x in r.get("results", [])]))
        out.append("\nTarget: >= 10 M records/s on one core.\n")
    return out


def outlier_permille():
    """The selftests' departure allowance, as selftests/tolerance.sh sets
    it (OUTLIER_PERMILLE), written once there."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                        "selftests", "tolerance.sh")
    with open(path) as f:
        m = re.search(r"^OUTLIER_PERMILLE=\$\{TDM_OUTLIER_PERMILLE:-(\d+)\}$",
                      f.read(), re.M)
    return int(m.group(1))


def sweep_settings(r):
    """The settings of sweep R (the JSON's head) its sections print: time
    scale, wire (Mbit/s), frame time (us), bytes on the wire, switch port
    and NIC FIFO (frames), window (ms), guard (us), cycles a point, load
    (%)."""
    fr = wire_sweep.frame_time_ns(r)
    return (r.get("timescale", 1), r.get("mbit"),
            "-" if fr is None else "%.0f" % (fr / 1e3),
            r.get("frame_bytes", r.get("payload", 0) + wire_sweep.FRAME_EXTRA),
            r.get("switch_buffer"), r.get("nic_ring"),
            r.get("window_ns", 0) / 1e6, r.get("guard_ns", 0) / 1e3,
            r.get("min_cycles"), r.get("load_pct", 100))


WIRE_METHODS = ("free", "usertdm", "taprio", "taprio_txtime", "tdmwin",
                "tdmwin_txtime", "tdmwin_nowire", "afxdp", "dpdk")


def ideal_taps(points, method):
    """The taps that fed METHOD's ideal port in POINTS (ideal_tap, "sender"
    where a point predates it), and the frames the senders' own taps saw
    where another fed it, and the senders' scheduling where it was not
    the default (sender_sched): "sender", or "peer (sender's tap: 0);
    senders fifo50"."""
    taps = sorted({p.get("ideal_tap", "sender") for p in points
                   if p["method"] == method})
    seen = [p.get("sender_tap_frames") for p in points
            if p["method"] == method and p.get("ideal_tap", "sender") != "sender"]
    sched = sorted({p["sender_sched"] for p in points if p["method"] == method
                    and p.get("sender_sched") not in (None, "other")})
    rt = "; senders %s" % ", ".join(sched) if sched else ""
    if not seen:
        return ", ".join(taps) + rt
    return "%s (sender's tap: %s)%s" % (", ".join(taps), "?" if None in seen
                                         else sum(seen), rt)


def wire_section(runs):
    """The figure of merit: per sender count and method, the smallest dead
    time with no overlap and no frame lost to a collision at the switch
    port, strict (no allowance), judged at the ideal port and at the
    emulated one, in us and in frame times, the utilization and goodput
    there, the targets met or not at each port, and beside them the ideal
    port's figure with the selftests' departure allowance."""
    out = []
    allow = outlier_permille()
    for name, r in runs.items():
        pts = [p for p in r.get("points", []) if not p.get("corner")]
        if not pts:
            continue
        fr = wire_sweep.frame_time_ns(r)
        out.append("### Dead-time sweep on the switch testbed, kernel %s (%s)\n"
                   % (r.get("kernel"), name))
        out.append("Time scale %s: wire %s Mbit/s, frame time %s us (%s bytes "
                   "on the wire), switch port buffer %s frames, NIC FIFO %s "
                   "frames, windows %.1f ms, guard %.0f us, at least %s cycles "
                   "per point, each sender offering %s %% of what its window "
                   "carries (Documentation/testbed.rst).\n"
                   % sweep_settings(r))
        for m, why in sorted((r.get("skipped") or {}).items()):
            out.append("Method %s skipped: %s.\n" % (m, why))
        fig = {}
        us = lambda d: None if d is None else "%.0f" % (d / 1e3)
        pct = lambda x: None if x is None else "%.1f %%" % (x * 100)
        for n in sorted({p.get("senders") for p in pts}):
            at = [p for p in pts if p.get("senders") == n]
            methods = [m for m in WIRE_METHODS if any(p["method"] == m for p in at)]
            h = wire_sweep.headline(r, n, methods, allow)
            fig[n] = h
            out.append("%d senders, the figure, strict (no overlap and no frame "
                       "lost to a collision at the port, at this point and "
                       "every larger dead time), at the ideal port (the "
                       "senders' frames, as they left their devices, on "
                       "perfect wires into the same port) and "
                       "at the emulated port (netem):\n" % n)
            rows = []
            for m in methods:
                row = [m]
                for port in ("ideal", "emulated"):
                    f = h[port][m]
                    row += ["none" if f["dead_ns"] is None else us(f["dead_ns"]),
                            f.get("dead_frames"), pct(f["utilization"]),
                            pct(f["goodput_ratio"])]
                fa = h["ideal_allowance"][m]
                row.append("none" if fa["dead_ns"] is None else
                           "%s us (%s)" % (us(fa["dead_ns"]), pct(fa["utilization"])))
                row.append(ideal_taps(at, m))
                rows.append(row)
            out.append(table(["method", "ideal: dead time (us)", "frame times",
                              "sum(W-G)/cycle", "goodput / line",
                              "emulated: dead time (us)", "frame times",
                              "sum(W-G)/cycle", "goodput / line",
                              "ideal, %d per mille allowance" % allow,
                              "ideal port fed from"], rows))
            out.append("")
            out.append("The ideal port is fed from the tap where a method's "
                       "frames leave the sender's device: \"sender\", the "
                       "device's own tap; \"peer\", its veth peer's, for "
                       "senders past the qdisc (AF_XDP, DPDK), whose frames "
                       "the device's tap never sees; a frame that tap saw "
                       "anyway went through the qdisc and spoils its point.\n")
            out.append("")
            for port in ("ideal", "emulated"):
                out.append("Targets at the %s port: %s.\n" % (port, "; ".join(
                    "%s: %s (%s)" % (t, wire_sweep.verdict(ok), v)
                    for t, v, ok in h["targets"][port])))
            differ = [m for m in methods
                     if h["ideal"][m]["dead_ns"] != h["emulated"][m]["dead_ns"]]
            out.append("The two ports %s.\n" % (
                "agree for every method" if not differ else
                "disagree for %s (the per-point table below: collisions "
                "against self drops, overlaps)" % ", ".join(differ)))
            out.append(table(["method", "dead time (us)", "frame times", "sent",
                              "dropped before the NIC (senders' qdiscs)",
                              "lost at switch",
                              "of them collisions", "self drops (emulator)",
                              "NIC drops", "received", "overlapping windows",
                              "ideal port: lost", "ideal: overlapping",
                              "windows", "capacity (frames the windows carry)",
                              "left the senders (taps)",
                              "ideal tap (sender's tap saw)",
                              "tdmwin's mean open latency (us)",
                              "host's other work (CPUs, mean / max)", "host loaded"],
                             [(p["method"], "%.0f" % (p["dead_ns"] / 1e3),
                               wire_sweep.in_frames(p["dead_ns"], fr), p.get("sent"),
                               p.get("before_nic"), p.get("loss"), p.get("collisions"), p.get("self_drops"),
                               p.get("nic_drops"), p.get("received"),
                               p.get("overlap"), p.get("ideal_loss"),
                               p.get("ideal_overlap"), p.get("windows"),
                               p.get("capacity"), p.get("tapped"),
                               p.get("ideal_tap", "sender") if p.get("ideal_tap", "sender") == "sender"
                               else "%s (%s)" % (p["ideal_tap"], p.get("sender_tap_frames")),
                               None if p.get("open_latency_mean_ns") is None
                               else "%.0f" % (p["open_latency_mean_ns"] / 1e3),
                               None if p.get("host_load_cpus") is None else
                               "%.2f / %.2f" % (p["host_load_cpus"],
                                                p.get("host_load_max_cpus") or 0),
                               "yes" if p.get("host_loaded") else "no")
                              for p in sorted(at, key=lambda p: (p["method"], p["dead_ns"]))]))
            out.append("")
            # Where no method is clean, the counts still compare them.
            deads = sorted({p["dead_ns"] for p in at})
            for key, what in (("ideal_loss", "Frames lost at the ideal port"),
                              ("collisions", "Frames lost to collisions at the "
                               "emulated port")):
                crow = []
                for m in methods:
                    row = [m]
                    for d in deads:
                        c = [p.get(key) for p in at
                             if p["method"] == m and p["dead_ns"] == d]
                        t = [p.get(key) for p in at
                             if p["method"] == "tdmwin" and p["dead_ns"] == d]
                        x = c[0] if c else None
                        q = wire_sweep.ratio(x, t[0] if t else None)
                        row.append("-" if x is None else "%d (%s)" % (
                            x, "-" if q is None else q))
                    crow.append(row)
                out.append("%s, and in brackets their ratio to tdmwin's "
                           "(- where tdmwin lost none or did not run), per "
                           "dead time (us):\n" % what)
                out.append(table(["method"] + ["%.0f" % (d / 1e3) for d in deads], crow))
                out.append("")
        out.append("Targets: tdmwin's smallest clean dead time <= 1/5 of "
                   "usertdm's and <= taprio's; utilization there >= 95 % with "
                   "3 senders, >= 90 % with 8 (undecided: a method clean "
                   "nowhere in the sweep, against which the sweep cannot "
                   "tell).\n")
        r["figure"] = {str(k): v for k, v in fig.items()}
    return out


def corner_section(runs):
    """The corner turn's sweep (N senders to M receivers): per size and
    method the smallest dead time with no frame lost (at the ideal ports,
    the ideal NICs and the senders' qdiscs), each receiver's link's
    utilization there, the ratios of tdmwin's barrel shifter to the other
    methods, per receiver, and the target; then every point."""
    out = []
    allow = outlier_permille()
    pct = lambda x: None if x is None else "%.1f %%" % (x * 100)
    us = lambda d: "none" if d is None else "%.0f" % (d / 1e3)
    for name, r in runs.items():
        pts = [p for p in r.get("points", []) if p.get("corner")]
        if not pts:
            continue
        fr = wire_sweep.frame_time_ns(r)
        out.append("### The corner turn, kernel %s (%s)\n" % (r.get("kernel"), name))
        out.append("Time scale %s: wires %s Mbit/s, frame time %s us (%s "
                   "bytes on the wire), each receiver's switch port %s frames, "
                   "NIC FIFO %s frames, windows %.1f ms (a slot is the window "
                   "and the dead time), guard %.0f us, at least %s cycles a "
                   "point, each sender offering %s %% of what its windows "
                   "carry.  Judged at the ideal ports (the senders' taps on "
                   "perfect wires, each frame into its receiver's port); "
                   "utilization: a receiver's frames out of its port in the steady "
                   "state (whole cycles, the first and last left out) over the "
                   "line rate, framing included (payload only in brackets).\n" % sweep_settings(r))
        figs = {}
        for c in sorted({p["corner"] for p in pts},
                        key=lambda c: tuple(int(x) for x in c.split("x"))):
            at = [p for p in pts if p["corner"] == c]
            methods = [m for m in wire_sweep.CORNER_METHODS
                       if any(p["method"] == m for p in at)]
            h = wire_sweep.corner_headline(r, c, methods, allow)
            figs[c] = h
            nrecv = max(len(p.get("ports", [])) for p in at)
            rows = []
            for m in methods:
                f = h["strict"][m]
                a = f["at"] or {}
                util = a.get("utilization") or [None] * nrecv
                pay = a.get("payload_utilization") or [None] * nrecv
                fa = h["allowance"][m]
                rows.append([m, us(f["dead_ns"]), f.get("dead_frames"),
                             pct((a.get("planned") or [None])[0])]
                            + ["%s (%s)" % (pct(u), pct(q)) if u is not None else None
                               for u, q in zip(util, pay)]
                            + [us(fa["dead_ns"])])
            out.append("%s: per method the smallest clean dead time (no frame "
                       "lost, at that point and every larger dead time), the "
                       "planned share of a receiver's link there and each "
                       "receiver's measured utilization:\n" % c)
            out.append(table(["method", "dead time (us)", "frame times",
                              "planned (receiver 1)"]
                             + ["receiver %d" % (j + 1) for j in range(nrecv)]
                             + ["with %d per mille allowance (us)" % allow], rows))
            out.append("")
            rr = [[m] + (["-"] * nrecv if q is None else q)
                  for m, q in h["ratios"].items()]
            if rr:
                out.append("Ratios, %s's utilization at its smallest clean dead "
                           "time over each method's at its own, per receiver "
                           "(- where one is clean nowhere):\n" % wire_sweep.CORNER_BASE)
                out.append(table(["method"] + ["receiver %d" % (j + 1)
                                               for j in range(nrecv)], rr))
                out.append("")
            out.append("Target: %s.\n" % "; ".join(
                "%s: %s (%s)" % (t, wire_sweep.verdict(ok), v)
                for t, v, ok in h["targets"]))
            out.append(table(["method", "dead time (us)", "sent", "left the senders (taps)",
                              "qdisc drops", "ideal NIC drops", "lost at the ideal ports",
                              "of them collisions", "least utilized link",
                              "emulated ports: lost", "host's other work (CPUs, mean / max)"],
                             [(p["method"], "%.0f" % (p["dead_ns"] / 1e3), p.get("sent"),
                               p.get("tapped"), p.get("qdisc_drops"), p.get("ideal_nic_drops"),
                               p.get("ideal_loss"), p.get("ideal_collisions"),
                               pct(min((x.get("utilization") or 0 for x in p.get("ports", [])),
                                       default=None)),
                               p.get("loss"),
                               None if p.get("host_load_cpus") is None else
                               "%.2f / %.2f" % (p["host_load_cpus"],
                                                p.get("host_load_max_cpus") or 0))
                              for p in sorted(at, key=lambda p: (p["method"], p["dead_ns"]))]))
            out.append("")
        r["corner_figure"] = figs
    return out


def main():
    folder = sys.argv[1] if len(sys.argv) > 1 else "build/bench"
    parts = {
        "qdisc": load(os.path.join(folder, "qdisc-*.json")),
        "tdmd": load(os.path.join(folder, "tdmd-*.json")),
        "rx": load(os.path.join(folder, "rx-*.json")),
        "tdmstat": load(os.path.join(folder, "tdmstat-*.json")),
        "wire": load(os.path.join(folder, "wire-*.json")),
    }
    md = ["# tdmwin benchmark report", "",
          "Every figure comes with a baseline measured in the same run; under "
          "QEMU TCG the absolute numbers mean little, the ratios are the "
          "result.", ""]
    observe_latency(folder, parts["qdisc"])
    md += ["## Qdisc"] + qdisc_section(parts["qdisc"])
    md += ["## tdmd"] + tdmd_section(parts["tdmd"])
    md += ["## Receiver"] + rx_section(parts["rx"])
    md += ["## tdmstat"] + tdmstat_section(parts["tdmstat"])
    md += ["## The switch testbed"] + wire_section(parts["wire"])
    md += ["## The corner turn"] + corner_section(parts["wire"])
    missing = [k for k, v in parts.items() if not v]
    if missing:
        md.append("Not measured in this run: %s." % ", ".join(missing))
    with open(os.path.join(folder, "report.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    with open(os.path.join(folder, "report.json"), "w") as f:
        json.dump(parts, f, indent=2)
    print("\n".join(md))
    print("report: %s/report.md, %s/report.json" % (folder, folder))
    return 0


if __name__ == "__main__":
    sys.exit(main())
