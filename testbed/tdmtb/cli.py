# SPDX-License-Identifier: GPL-2.0
"""The testbed's commands, one definition for both places they run:

  testbed/tb COMMAND ...              on the host (tools/bench, tools/demo)
  selftests/tdmwin_util.py COMMAND    in the guest, through its python server

  pcap        where in the cycle captured frames fall (tdmtb.judge)
  span        departures of a capture around an instant (tdmtb.judge)
  wire-check  can a plan work on the switch testbed (tdmtb.wirecheck)?
              The reason on stderr and exit 2 if not
  ideal-port  the ideal wire and port on the senders' taps
              (tdmtb.idealport), its drops told apart
  port-drops  the switch port's drops from taps at its inputs and output
              (tdmtb.portdrops)
  inflight    tap outliers: decided outside, or held in flight after a
              dequeue inside (tdmtb.inflight)
  judge       the checks selftests left for the host, after the guest
              (tdmtb.deferred): TAP, exit 1 if one failed

add_COMMAND(sub) adds a command's parser to argparse subparsers;
COMMANDS maps each name to the function that runs it on the parsed
arguments.  A file that is not a pcap raises tdmtb.pcap.PcapError.
"""


def add_pcap(sub):
    c = sub.add_parser("pcap")
    c.add_argument("file")
    c.add_argument("--port", type=int, default=0)
    c.add_argument("--cycle", type=int, required=True)
    c.add_argument("--base", type=int, default=0)
    c.add_argument("--windows", required=True, help="off:len,... in ns")
    c.add_argument("--switch", type=int)
    c.add_argument("--base2", type=int, default=0)
    c.add_argument("--cycle2", type=int, default=0)
    c.add_argument("--windows2", default="")
    c.add_argument("--tol-early", type=int, default=1000000)
    c.add_argument("--tol-late", type=int, default=1500000)
    c.add_argument("--bins", type=int, default=20)
    c.add_argument("--wire-mbit", type=int, default=0)
    c.add_argument("--wire-overhead", type=int, default=24)
    c.add_argument("--serialize", action="store_true")
    c.add_argument("--far", type=int, default=500000)
    c.add_argument("--ref", metavar="PCAP",
                   help="the sender's tap, to tell the serializer's delays")
    c.add_argument("--nic-late", type=int, default=0,
                   help="lateness of the serializer the plan budgets, ns")


def add_span(sub):
    sp = sub.add_parser("span")
    sp.add_argument("file")
    sp.add_argument("--port", type=int, default=0)
    sp.add_argument("--from", dest="start", type=int, default=0)
    sp.add_argument("--to", type=int, required=True)


def add_wire_check(sub):
    w = sub.add_parser("wire-check")
    for o in ("senders", "window", "dead", "guard", "size", "mbit"):
        w.add_argument("--" + o, type=int, required=True)
    w.add_argument("--buffer", type=int, default=1, help="switch port, frames")


def add_ideal_port(sub):
    ip = sub.add_parser("ideal-port")
    ip.add_argument("--in", dest="inputs", nargs="+", required=True,
                    help="taps on the senders' devices (pcap)")
    for o in ("size", "mbit", "buffer", "ring"):
        ip.add_argument("--" + o, type=int, required=True)
    ip.add_argument("--port", type=int, default=8081)
    ip.add_argument("--pcap", help="write the port's output here")
    ip.add_argument("--by-dest", action="store_true",
                    help="many receivers (tdmgen --corner): each frame to "
                    "the port of its IP destination, every port of "
                    "--buffer frames; totals over the ports, then "
                    "port<J>.* for each in address order")


def add_port_drops(sub):
    pd = sub.add_parser("port-drops")
    pd.add_argument("--in", dest="inputs", nargs="+", required=True,
                    help="taps on the port's inputs (pcap)")
    pd.add_argument("--out", required=True, help="tap on its output (pcap)")
    pd.add_argument("--port", type=int, default=8081)


def add_inflight(sub):
    f = sub.add_parser("inflight")
    f.add_argument("trace", help="ftrace text: qdisc_dequeue, net_dev_start_xmit")
    f.add_argument("--shift", type=int, default=0,
                   help="the plan's clock - trace clock (mono), ns")
    f.add_argument("--dev", required=True)
    f.add_argument("--ifindex", type=int, required=True)
    f.add_argument("--cycle", type=int, required=True)
    f.add_argument("--base", type=int, default=0)
    f.add_argument("--windows", required=True, help="off:len,... in ns")
    f.add_argument("--far", type=int, default=500000)
    f.add_argument("--decide", metavar="EVENT",
                   help="a return probe on the qdisc's ->dequeue")


def add_judge(sub):
    j = sub.add_parser("judge")
    j.add_argument("root", help="a run's judge directory "
                   "(selftests/run.sh's TDM_JUDGE_ROOT)")


def cmd_pcap(a):
    """Check that packets fall inside the windows of one or two plans
    (tdmtb.judge.judge says how).  Prints key=value lines and a histogram
    (lines starting with '#')."""
    from .judge import judge
    opts = {k: v for k, v in vars(a).items() if k not in ("cmd", "file")}
    for line in judge(a.file, **opts).lines():
        print(line)


def cmd_span(a):
    """Departures of a capture around an instant (tdmtb.judge.span):
    key=value lines."""
    from .judge import span
    res = span(a.file, a.to, a.start, a.port)
    for k in ("in_span", "last_before", "first_after"):
        print("%s=%d" % (k, res[k]))


def cmd_wire_check(a):
    """Can the plan work on the switch testbed (tdmtb.wirecheck)?"""
    import sys
    from . import wirecheck
    why = wirecheck.wire_check(a.senders, a.window, a.dead, a.guard, a.size,
                               a.mbit, a.buffer)
    if why:
        sys.stderr.write("%s\n" % why)
        return 2
    print(wirecheck.plan_line(a.senders, a.window, a.dead, a.guard, a.size,
                              a.mbit))
    return 0


def cmd_ideal_port(a):
    """tdmtb.idealport on the senders' taps (--in): the port's drops told
    apart as key=value lines, and with --pcap the frames that left the
    port, stamped when they did, for tdmstat analyze."""
    from . import idealport, portdrops
    if a.by_dest:
        if a.pcap:
            raise SystemExit("tb ideal-port: --pcap is for one port, not --by-dest")
        res, by, per = idealport.from_taps_by_dest(
            a.inputs, a.size, a.mbit, a.buffer, a.ring, a.port)
        for line in portdrops.drop_lines(res, by):
            print(line)
        for j, (dst, r) in enumerate(per, 1):
            print("# port%d: %s" % (j, dst))
            for k in sorted(r):
                print("port%d.%s=%d" % (j, k, r[k]))
        return
    res, by = idealport.from_taps(a.inputs, a.size, a.mbit, a.buffer, a.ring,
                                  a.port, a.pcap)
    for line in portdrops.drop_lines(res, by):
        print(line)


def cmd_port_drops(a):
    """The switch port's drops from taps at its inputs (--in, one per
    sender's wire) and its output (--out): key=value lines
    (tdmtb.portdrops)."""
    from . import portdrops
    res, first, by = portdrops.from_taps(a.inputs, a.out, a.port)
    for line in portdrops.drop_lines(res, by) + portdrops.collision_lines(first):
        print(line)


def cmd_inflight(a):
    """Tap outliers told apart: decided outside, or held in flight
    (tdmtb.inflight): key=value lines."""
    from .inflight import inflight
    res = inflight(a.trace, a.shift, a.dev, a.ifindex, a.cycle,
                   a.windows, a.base, a.far, a.decide)
    for k in sorted(res):
        print("%s=%d" % (k, res[k]))


def cmd_judge(a):
    """The checks of each test under ROOT (tdmtb.deferred)."""
    from . import deferred
    return deferred.judge_root(a.root)


COMMANDS = {"pcap": cmd_pcap, "span": cmd_span, "wire-check": cmd_wire_check,
            "ideal-port": cmd_ideal_port, "port-drops": cmd_port_drops,
            "inflight": cmd_inflight, "judge": cmd_judge}


def main(argv=None):
    """testbed/tb: the commands on the host.  Exit 2 with the reason for a
    file that is not a pcap."""
    import argparse
    import sys
    from .pcap import PcapError
    p = argparse.ArgumentParser(prog="tb", description=__doc__,
                                formatter_class=argparse.RawTextHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    for add in (add_pcap, add_span, add_wire_check, add_ideal_port,
                add_port_drops, add_inflight, add_judge):
        add(sub)
    a = p.parse_args(argv)
    try:
        return COMMANDS[a.cmd](a) or 0
    except PcapError as e:
        sys.stderr.write("tb: %s\n" % e)
        return 2
