#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The dead-time sweep's judge on the host (issue 23: the guest captures,
the host judges).  tools/bench-wire-guest, in the TCG guest, only runs
each point and leaves its raw artifacts in a point directory of the run
directory (WIRE_RUN, under build/bench/, which the guest shares with the
host):

    head.json           the sweep's settings, the JSON's head (the guest)
    NNN-<n>s-<method>-<dead>us/
      meta              key=value: the point's settings, the switch's and
                        NICs' counters (count.*), the host's load, and
                        ideal_tap, the tap that feeds the ideal port
                        (IDEAL_TAPS: sender, or peer for the senders
                        past the qdisc)
      plan.conf         the shared plan of the point
      tx<i>.pcap        taps on the senders' devices, where the gates act
      peer<i>.pcap      with ideal_tap=peer: taps on the far end of each
                        sender's device (its veth peer, before its NIC),
                        where frames that skip the device's own taps
                        (AF_XDP, DPDK's net_af_packet) are seen leaving;
                        and sender_sched, the senders' scheduling
      in<i>.pcap        taps on the switch port's inputs
      out.pcap          the tap on its output (the receiver's device)
      gen-<i>.json      tdmgen's report
      qdisc-<i>.json    tc -s -j qdisc show of each sender's device
      complete          written last: the point is all there
    NNN-<N>x<M>-<method>-<dead>us/
                        a point of the corner turn (WIRE_CORNER): N senders
                        to M receivers on the corner testbed
      meta              as above, with receivers=M, slot_ns, addr.<j>
                        (receiver j's address) and count.sw.<j>.* (port j)
      plan.conf         the barrel shifter of the point ([barrel]; free
                        also plan-<i>.conf, each sender's own)
      tx<i>.pcap        taps on the senders' devices
      gen-<i>.json, qdisc-<i>.json, class-<i>.json (tc -s -j class show)
      complete
    done                the guest's sweep is over

Here, on the host's CPU: the ideal port on the senders' taps
(tdmtb.idealport), the switch port's drops told apart (tdmtb.portdrops),
tdmstat analyze of the port's tap and of the ideal port's output, and
the point's JSON object (the fields tools/bench_report.py and tdmplot
read; for the corner turn the ideal ports by destination and each
receiver's link, judge_corner), written to point.json in the point's directory, then the verdict
(tools/wire_sweep.py clean) in "verdict":

    ideal_allowance=0|1   clean at the ideal port with the allowance
    emulated=0|1          strictly clean at the emulated port

  wire_judge.py point DIR       judge one point directory
  wire_judge.py follow RUN [--parent PID] [--poll S]
                                judge each point of RUN as soon as the
                                guest marks it complete, until RUN/done
                                is there and every point is judged, or
                                PID is gone.  tools/bench runs it beside
                                the guest when it sweeps downwards
                                (WIRE_DESCEND=1): the guest waits for each
                                point's verdict, so the host works only
                                while the guest waits
  wire_judge.py assemble RUN [-o OUT]
                                judge what is not judged yet and write the
                                sweep's JSON (head.json and the points in
                                their order) to OUT (default
                                build/bench/wire-<kernel>.json beside RUN)
"""
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.normpath(os.path.join(HERE, ".."))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(TOP, "testbed"))
import wire_sweep  # noqa: E402

# tdmstat on the host (the guest ran the same build); WIRE_TDMSTAT
# replaces it (the host tests give a stand-in).
TDMSTAT = os.environ.get("WIRE_TDMSTAT", os.path.join(TOP, "build", "us", "tdmstat"))
# tdmctl plan check gives each receiver's planned share (WIRE_TDMCTL
# replaces it).
TDMCTL = os.environ.get("WIRE_TDMCTL", os.path.join(TOP, "build", "us", "tdmctl"))
POINT = "point.json"
VERDICT = "verdict"
COMPLETE = "complete"


# The taps that can feed a point's ideal port (its meta's ideal_tap): the
# name of its pcaps, one a sender.  "sender": each sender's device, where a
# qdisc lets its frames go; "peer": the far end of that device's veth, for
# senders whose frames leave through __dev_direct_xmit(), which the
# device's own tap never sees.
IDEAL_TAPS = {"sender": "tx", "peer": "peer"}


def count_frames(paths, port):
    """The frames of PATHS' pcaps to PORT, or None when one is missing or
    not a pcap."""
    from tdmtb.pcap import PcapError, tdm_frames
    try:
        return sum(sum(1 for _ in tdm_frames(p, port)) for p in paths)
    except (OSError, PcapError):
        return None


def read_meta(path):
    """key=value lines as a dict of strings."""
    from tdmtb.flat import parse_kv
    with open(path) as f:
        return parse_kv(f.read())


def gen_sent(path):
    """The frames tdmgen says it sent ("sent" in its JSON, which shares the
    file with its stderr); 0 if it says nothing."""
    try:
        with open(path) as f:
            m = re.search(r'"sent":\s*(\d+)', f.read())
    except OSError:
        return 0
    return int(m.group(1)) if m else 0


def open_latency(paths):
    """tdmwin's mean open latency (ns, truncated) over every tdmwin qdisc
    in the tc -s -j dumps PATHS (mq: one per TX queue), or None when no
    qdisc counted a window."""
    s = n = 0
    for p in paths:
        try:
            with open(p) as f:
                text = f.read()
        except OSError:
            continue
        for k, v in re.findall(r'"open_latency_(sum|count)":(\d+)', text):
            if k == "sum":
                s += int(v)
            else:
                n += int(v)
    return s // n if n else None


def analyze(plan, pcap, prefix, port):
    """tdmstat analyze of PCAP against PLAN: its "run" object, or {} when
    it fails (its stderr in PREFIX.log)."""
    with open(prefix + ".log", "w") as log:
        r = subprocess.run([TDMSTAT, "analyze", "-q", "-j", "-p", plan,
                            "--rt-offset", "0", "-u", str(port), pcap,
                            "-o", prefix], stdout=subprocess.PIPE,
                           stderr=log, text=True)
    try:
        j = json.loads(r.stdout)
    except ValueError:
        return {}
    return j.get("run", {}) if isinstance(j, dict) else {}


def goodput(times, secs, frame_bytes):
    """The goodput (bit/s) of a port whose frames left it at TIMES (ns):
    the frames that left within SECS of its first, over SECS.  Not the
    frames it ever sent over SECS: above 100 % offered load a gate holds
    its excess for its next windows and the port goes on sending it after
    the senders stop, which would count more than the line carries."""
    if not times:
        return 0
    end = min(times) + secs * 1000000000
    return sum(1 for t in times if t < end) * frame_bytes * 8 // secs


def steady_goodput(times, secs, cycle_ns, frame_bytes):
    """The goodput (bit/s) of a port whose frames left it at TIMES (ns) in
    the steady state of a run of SECS: over the whole cycles of CYCLE_NS
    from one cycle after its first frame, less one at the end, so that
    neither the first cycle (a gate's queues filling, a sender's first
    window partly past) nor the last (what a gate still holds) counts;
    the run's goodput() when it has fewer than three cycles.  Returns
    (bit/s, the cycles counted)."""
    k = secs * 1000000000 // cycle_ns - 2
    if not times or k < 1:
        return goodput(times, secs, frame_bytes), 0
    start = min(times) + cycle_ns
    end = start + k * cycle_ns
    n = sum(1 for t in times if start <= t < end)
    return n * frame_bytes * 8 * 1000000000 // (k * cycle_ns), k


def planned_shares(plan):
    """Each receiver's planned share of its link, by address: its windows'
    open time per cycle over the cycle (tdmctl -j plan check), {} when
    tdmctl cannot say."""
    r = subprocess.run([TDMCTL, "-j", "plan", "check", plan],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        j = json.loads(r.stdout)
        return {x["address"]: x["open_ns"] / j["cycle_ns"] for x in j["receivers"]}
    except (ValueError, KeyError, TypeError, ZeroDivisionError):
        return {}


def qdisc_drops(paths):
    """The frames the senders' root qdiscs dropped (tc -s -j qdisc show:
    the root's "drops"), or None when a dump is missing."""
    n = 0
    for p in paths:
        try:
            with open(p) as f:
                qs = json.load(f)
        except (OSError, ValueError):
            return None
        n += sum(q.get("drops", 0) for q in qs if q.get("root"))
    return n


def judge_corner(d, m):
    """The corner turn's point of directory D (meta M): the senders' taps
    on their perfect wires into the port of each frame's receiver
    (tdmtb.idealport.ports_by_dest), each port's drops told apart, and
    each receiver's link: its frames out of its ideal port in the steady
    state (steady_goodput: whole cycles, the first and last left out)
    over the line rate (utilization: wire bytes, framing included;
    payload_utilization: UDP payload), and within the run's seconds of
    its first frame (run_utilization, the ramps included)."""
    from tdmtb import idealport, portdrops
    num = lambda k: int(m[k])
    n, recv, secs = num("senders"), num("receivers"), num("secs")
    fb, payload, line = num("frame_bytes"), num("payload"), num("line_mbit") * 1e6
    f = lambda name: os.path.join(d, name)
    senders = range(1, n + 1)
    cnt = {k[len("count."):]: int(v) for k, v in m.items()
           if k.startswith("count.")}
    addr = {m["addr.%d" % j]: j for j in range(1, recv + 1)}
    ports, nic = idealport.ports_by_dest([f("tx%d.pcap" % i) for i in senders],
                                         payload, num("line_mbit"), num("buffer"),
                                         num("ring"), num("port"))
    share = planned_shares(f("plan.conf"))
    got = dict(ports)
    rows = []
    for a in sorted(addr, key=addr.get):
        arr, dep = got.get(a, ([], {}))
        res, _, _ = portdrops.port_drops(arr, dep)
        times = list(dep.values())
        gp, k = steady_goodput(times, secs, num("cycle_ns"), fb)
        run = goodput(times, secs, fb)
        j = addr[a]
        rows.append({"receiver": j, "address": a, "planned": share.get(a),
                     "arrived": res["arrived"], "departed": res["departed"],
                     "dropped": res["dropped"], "collisions": res["collision"],
                     "self_drops": res["self"], "goodput_bps": gp,
                     "steady_cycles": k,
                     "utilization": round(gp / line, 4),
                     "payload_utilization": round(gp * payload / fb / line, 4),
                     "run_utilization": round(run / line, 4),
                     "emulated_sent": cnt.get("sw.%d.sent" % j),
                     "emulated_drops": cnt.get("sw.%d.drops" % j),
                     "received": cnt.get("rx.%d" % j)})
    stray = sorted(a for a in got if a not in addr)
    load = lambda k: float(m[k]) if m.get(k) else None
    c = num("cycle_ns")
    sent = sum(gen_sent(f("gen-%d.json" % i)) for i in senders)
    tapped = sum(len(a) for _, (a, _) in ports) + sum(nic.values())
    qd = qdisc_drops([f("qdisc-%d.json" % i) for i in senders])
    return {
        "corner": "%dx%d" % (n, recv), "method": m["method"], "senders": n,
        "receivers": recv, "dead_ns": num("dead_ns"), "window_ns": num("window_ns"),
        "slot_ns": num("slot_ns"), "guard_ns": num("guard_ns"), "cycle_ns": c,
        "cycles": secs * 1000000000 // c, "offered_pps": num("offered_pps"),
        "sent": sent, "tapped": tapped, "qdisc_drops": qd,
        # frames sent that neither the taps saw nor a qdisc dropped: a
        # tap that missed frames, which the ideal ports cannot judge
        "untapped": None if qd is None else sent - tapped - qd,
        "ideal_loss": sum(r["dropped"] for r in rows),
        "ideal_collisions": sum(r["collisions"] for r in rows),
        "ideal_nic_drops": sum(nic.values()),
        # frames to an address that is no receiver's: none, or the taps
        # caught something else
        "stray": sum(len(got[a][0]) for a in stray),
        "loss": cnt.get("sw.drops"), "received": cnt.get("rx"),
        "ports": rows,
        "open_latency_mean_ns": open_latency([f("qdisc-%d.json" % i) for i in senders]),
        "host_load_cpus": load("host_load_cpus"),
        "host_load_max_cpus": load("host_load_max_cpus"),
        "host_loaded": m.get("host_loaded", ""),
    }


def judge_point(d):
    """The point of directory D as the dict tools/bench-wire-guest printed
    before the judge moved to the host (the same keys, in the same
    order); a corner turn's point (receivers in its meta) as
    judge_corner gives it."""
    from tdmtb import idealport, portdrops
    from tdmtb.pcap import PcapError, tdm_frames
    m = read_meta(os.path.join(d, "meta"))
    if "receivers" in m:
        return judge_corner(d, m)
    num = lambda k: int(m[k])
    n, c, secs = num("senders"), num("cycle_ns"), num("secs")
    port, frame_bytes = num("port"), num("frame_bytes")
    cnt = {k[len("count."):]: int(v) for k, v in m.items()
           if k.startswith("count.")}
    plan = os.path.join(d, "plan.conf")
    f = lambda name: os.path.join(d, name)
    senders = range(1, n + 1)
    tap = m.get("ideal_tap", "sender")
    if tap not in IDEAL_TAPS:
        raise ValueError("ideal_tap=%s: not a tap of the sweep's (%s)"
                         % (tap, ", ".join(sorted(IDEAL_TAPS))))
    sent = sum(gen_sent(f("gen-%d.json" % i)) for i in senders)
    # The switch port's drops told apart, if its taps saw every frame.
    # A tap that is missing or not a pcap counts nothing: null, not clean.
    try:
        pd, _, _ = portdrops.from_taps([f("in%d.pcap" % i) for i in senders],
                                       f("out.pcap"), port)
        why = portdrops.taps_incomplete(pd, cnt["nic.sent"], cnt["sw.drops"])
    except (OSError, PcapError) as e:
        why = str(e)
    if why:
        with open(f("port-drops.log"), "w") as log:
            log.write(why + "\n")
        pd = {}
    s = analyze(plan, f("out.pcap"), f("an"), port)
    try:
        gp = goodput([t for t, _, _ in tdm_frames(f("out.pcap"), port)],
                     secs, frame_bytes)
    except (OSError, PcapError):
        gp = None
    # The ideal wire and port on the taps where the frames left the
    # senders' devices (ideal_tap), and its overlaps.
    try:
        ip, _ = idealport.from_taps([f("%s%d.pcap" % (IDEAL_TAPS[tap], i))
                                     for i in senders],
                                    num("payload"), num("line_mbit"),
                                    num("buffer"), num("ring"), port,
                                    f("ideal.pcap"))
        ids = analyze(plan, f("ideal.pcap"), f("ian"), port)
        igp = goodput([t for t, _, _ in tdm_frames(f("ideal.pcap"), port)],
                      secs, frame_bytes)
    except (OSError, PcapError) as e:
        with open(f("ideal.log"), "w") as log:
            log.write("%s\n" % e)
        ip, ids, igp = {}, {}, None
    fpc = num("fpc")
    load = lambda k: float(m[k]) if m.get(k) else None
    return {
        "method": m["method"], "senders": n, "dead_ns": num("dead_ns"),
        "window_ns": num("window_ns"), "guard_ns": num("guard_ns"),
        "cycle_ns": c, "cycles": secs * 1000000000 // c,
        "offered_pps": num("offered_pps"), "sent": sent,
        # before_nic: frames tdmgen sent that never reached a NIC, what
        # the senders' qdiscs dropped (etf's late frames among them).
        "before_nic": sent - cnt["nic.sent"] - cnt["nic.drops"],
        "nic_drops": cnt["nic.drops"], "loss": cnt["sw.drops"],
        "collisions": pd.get("collision"), "self_drops": pd.get("self"),
        "received": cnt["rx"], "overlap": s.get("overlap_windows"),
        "windows": s.get("windows"), "rx_outside": s.get("rx_outside"),
        "ideal_loss": ip.get("dropped"), "ideal_nic_drops": ip.get("nic_drops"),
        "ideal_overlap": ids.get("overlap_windows"),
        "ideal_goodput_bps": igp,
        "capacity": n * fpc * secs * 1000000000 // c,
        "tapped": None if "arrived" not in ip else ip["arrived"] + ip["nic_drops"],
        "ideal_tap": tap,
        # fed from another tap: the frames the senders' own taps saw, which
        # took the qdisc's path (none for a sender past it; null when a
        # tap is missing)
        "sender_tap_frames": None if tap == "sender" else
        count_frames([f("tx%d.pcap" % i) for i in senders], port),
        # the senders' scheduling: "fifo50" (chrt -f 50) or "other"
        "sender_sched": m.get("sender_sched"),
        "open_latency_mean_ns": open_latency([f("qdisc-%d.json" % i) for i in senders]),
        "goodput_bps": gp,
        "host_load_cpus": load("host_load_cpus"),
        "host_load_max_cpus": load("host_load_max_cpus"),
        "host_loaded": m.get("host_loaded", ""),
    }


def write_atomic(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def judge_dir(d, min_cycles):
    """Judge point directory D: point.json, then the verdict for the
    downward sweep (written last: the guest waits for it).  A point that
    cannot be judged gets a verdict of "error=..." and no point.json."""
    try:
        p = judge_point(d)
    except Exception as e:  # noqa: BLE001 - any failure is the point's
        why = "%s: %s" % (type(e).__name__, e)
        write_atomic(os.path.join(d, VERDICT), "error=%s\n" % why.replace("\n", " "))
        return None
    m = read_meta(os.path.join(d, "meta"))
    permille = int(m.get("permille", 0))
    write_atomic(os.path.join(d, POINT), json.dumps(p) + "\n")
    if "corner" in p:
        v = {"ideal_allowance": wire_sweep.corner_clean(p, min_cycles, permille),
             "ideal": wire_sweep.corner_clean(p, min_cycles)}
    else:
        v = {"ideal_allowance": wire_sweep.clean(p, min_cycles, "ideal", permille),
             "emulated": wire_sweep.clean(p, min_cycles, "emulated")}
    write_atomic(os.path.join(d, VERDICT),
                 "".join("%s=%d\n" % (k, v[k]) for k in sorted(v)))
    return p


def head(run):
    with open(os.path.join(run, "head.json")) as f:
        return json.load(f)


def points(run):
    """RUN's point directories, in the guest's order."""
    return sorted(os.path.join(run, e) for e in os.listdir(run)
                  if re.match(r"\d+-", e) and os.path.isdir(os.path.join(run, e)))


def pending(run):
    """The complete point directories of RUN without a verdict."""
    return [d for d in points(run)
            if os.path.exists(os.path.join(d, COMPLETE))
            and not os.path.exists(os.path.join(d, VERDICT))]


def follow(run, parent=None, poll=0.2, out=sys.stdout):
    """Judge RUN's points as the guest completes them, until RUN/done and
    none pending, or PARENT is gone.  Returns 0."""
    while True:
        done = os.path.exists(os.path.join(run, "done"))
        try:
            todo, h = pending(run), head(run)
        except (OSError, ValueError):
            todo = []		# the guest has not begun the run yet
        for d in todo:
            p = judge_dir(d, h.get("min_cycles", 0))
            out.write("wire_judge: %s: %s\n" % (os.path.basename(d),
                      "judged" if p else "could not be judged"))
            out.flush()
        if done and not todo:
            return 0
        if parent and not _alive(parent):
            return 0
        if not todo:
            time.sleep(poll)


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


def assemble(run, out=None):
    """Judge what is left of RUN and write the sweep's JSON.  Returns its
    path and the number of points that could not be judged."""
    h = head(run)
    pts, bad = [], 0
    for d in points(run):
        if not os.path.exists(os.path.join(d, COMPLETE)):
            continue
        if not os.path.exists(os.path.join(d, VERDICT)):
            judge_dir(d, h.get("min_cycles", 0))
        try:
            with open(os.path.join(d, POINT)) as f:
                pts.append(json.load(f))
        except (OSError, ValueError):
            bad += 1
    out = out or os.path.join(os.path.dirname(os.path.abspath(run)),
                              "wire-%s.json" % h.get("kernel", "unknown"))
    if os.path.dirname(out):
        os.makedirs(os.path.dirname(out), exist_ok=True)
    body = ",\n".join(json.dumps(p) for p in pts)
    hd = json.dumps(h)
    write_atomic(out, '%s, "points": [\n%s\n]}\n' % (hd[:-1], body))
    return out, bad


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(prog="wire_judge.py", description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("point")
    p.add_argument("dir")
    p.add_argument("--min-cycles", type=int, default=0)
    f = sub.add_parser("follow")
    f.add_argument("run")
    f.add_argument("--parent", type=int)
    f.add_argument("--poll", type=float, default=0.2)
    a = sub.add_parser("assemble")
    a.add_argument("run")
    a.add_argument("-o", dest="out")
    o = ap.parse_args(argv)
    if o.cmd == "point":
        pt = judge_dir(o.dir, o.min_cycles)
        if pt is None:
            with open(os.path.join(o.dir, VERDICT)) as v:
                sys.stderr.write("wire_judge: %s: %s" % (o.dir, v.read()))
            return 1
        print(json.dumps(pt))
        return 0
    if o.cmd == "follow":
        return follow(o.run, o.parent, o.poll)
    path, bad = assemble(o.run, o.out)
    print("wire_judge: %s" % path)
    if bad:
        sys.stderr.write("wire_judge: %d points of %s could not be judged "
                         "(their verdict files say why)\n" % (bad, o.run))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
