#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Helpers for the tdmwin selftests (standard library only).

  flat      select one object of `tc -j` output (stdin) and print it as
            key=value lines (nested keys joined with '.')
  send      UDP sender: sequence-numbered datagrams, optional SO_PRIORITY,
            rate, UDP GSO, raw PTP (ethertype 0x88F7) frames
  recv      UDP (and raw ethertype) receiver: counts and sequence checks
  nl        raw RTM_NEWQDISC for kind tdmwin, printing the kernel's extack
            (tests the kernel's validation without the tc plugin)
  clock     save/restore/step CLOCK_REALTIME, TAI offset (adjtimex),
            wait for a phase of the cycle
  wire-check  can a plan work on the switch testbed (testbed/wire.sh)?
            The reason on stderr and exit 2 if not
  serve SOCK  run the others for tdm_pyc.c, a fork each (run.sh)

Captures are not parsed here: the guest leaves them for the host
(lib.sh's tdm_judge; testbed/tb judge), which is not under TCG.
"""

# Python starts slowly under QEMU TCG: import only what a command needs
# (argparse and ctypes.util alone cost ~0.25 s there), run with -S.
import errno
import os
import struct
import sys
import time

NSEC = 1000000000
# The testbed's plan check (wire-check) and JSON flattening live in
# testbed/tdmtb; main() runs wire-check as its own.  The guest sees the
# same tree.
sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                             "..", "testbed"))


def die(msg):
    sys.stderr.write("tdmwin_util: %s\n" % msg)
    sys.exit(2)


# ---- flat -----------------------------------------------------------------

from tdmtb.flat import flatten  # noqa: E402


def norm_handle(h):
    if h is None:
        return None
    h = str(h)
    if h == "root":
        return h
    if ":" not in h:
        h += ":"
    major, minor = h.split(":", 1)
    major = major.lstrip("0") or "0"
    minor = minor.lstrip("0")
    return "%s:%s" % (major, minor)


def cmd_flat(a):
    import json
    text = sys.stdin.read()
    try:
        data = json.loads(text) if text.strip() else []
    except ValueError as e:
        die("bad JSON from tc: %s" % e)
    if isinstance(data, dict):
        data = [data]
    sel = []
    for o in data:
        if a.kind and o.get("kind") != a.kind:
            continue
        if a.handle and norm_handle(o.get("handle")) != norm_handle(a.handle):
            continue
        if a.parent:
            p = o.get("parent")
            if a.parent == "root":
                if not o.get("root") and p != "root":
                    continue
            elif norm_handle(p) != norm_handle(a.parent):
                continue
        sel.append(o)
    out = {"count": str(len(sel))}
    if a.index < len(sel):
        flatten(sel[a.index], [], out)
        o = sel[a.index]
        # Where does tc put the xstats?  Either in an "xstats" object or
        # beside the generic stats.  Publish them under "x." either way.
        xs = o.get("xstats")
        if isinstance(xs, dict):
            for k, v in xs.items():
                flatten(v, ["x", k], out)
        else:
            for k, v in o.items():
                if k not in ("options", "kind", "handle", "parent", "root",
                             "refcnt", "bytes", "packets", "drops",
                             "overlimits", "requeues", "backlog", "qlen",
                             "rate_est", "offloaded"):
                    flatten(v, ["x", k], out)
    # Other qdiscs hanging below a class (children), by parent:
    # child.1:1.kind=pfifo, child.1:1.options.limit=1000
    for o in data:
        if sel and o is sel[a.index if a.index < len(sel) else 0]:
            continue
        if o.get("parent") and not o.get("root"):
            flatten(o, ["child", norm_handle(o["parent"])], out)
    for k in sorted(out):
        print("%s=%s" % (k, out[k]))


def cmd_classes(a):
    """`tc [-s] class show` (text in iproute2 6.1, JSON later) -> key=value.

    Prints count=<classes> and, for the class --handle, leaf, bytes,
    packets, drops and qlen.
    """
    import json
    import re
    text = sys.stdin.read()
    classes = []
    if text.lstrip().startswith("["):
        for o in json.loads(text):
            c = {"handle": norm_handle(o.get("handle")),
                 "kind": o.get("class", o.get("kind"))}
            for k in ("leaf", "bytes", "packets", "drops", "qlen"):
                if k in o:
                    c[k] = o[k]
            if "leaf" in c:
                c["leaf"] = norm_handle(c["leaf"])
            classes.append(c)
    else:
        cur = None
        for line in text.splitlines():
            m = re.match(r"class (\S+) (\S+)(.*)", line)
            if m:
                cur = {"kind": m.group(1), "handle": norm_handle(m.group(2))}
                lm = re.search(r"leaf (\S+)", m.group(3))
                if lm:
                    cur["leaf"] = norm_handle(lm.group(1))
                classes.append(cur)
                continue
            if cur is None:
                continue
            m = re.search(r"Sent (\d+) bytes (\d+) pkt \(dropped (\d+)", line)
            if m:
                cur["bytes"], cur["packets"], cur["drops"] = m.groups()
            m = re.search(r"backlog \S+ (\d+)p", line)
            if m:
                cur["qlen"] = m.group(1)
    print("count=%d" % len(classes))
    for c in classes:
        if a.handle and c["handle"] == norm_handle(a.handle):
            for k in sorted(c):
                print("%s=%s" % (k, c[k]))
            break


# ---- send -----------------------------------------------------------------

SO_PRIORITY = 12
UDP_SEGMENT = 103
SOL_UDP = 17
SO_SNDBUFFORCE = 32
SO_RCVBUFFORCE = 33


def mac_of(ifname):
    with open("/sys/class/net/%s/address" % ifname) as f:
        return bytes(int(x, 16) for x in f.read().strip().split(":"))


# struct tdm_pkt_hdr (kmod/uapi/linux/tdmrx.h): 40 bytes, network order.
TDM_PKT_FMT = "!IBBHIIQQQ"
CLOCK_TAI = getattr(time, "CLOCK_TAI", 11)


def tdm_pkt_hdr(k, sender, plan_version, flags, seq, tx_ns, sent):
    """k: tdm_uapi.TDMRX, the header's numbers."""
    return struct.pack(TDM_PKT_FMT, k["TDM_PKT_MAGIC"], k["TDM_PKT_VERSION"],
                       flags, struct.calcsize(TDM_PKT_FMT), sender,
                       plan_version, seq, tx_ns, sent)


def cmd_send(a):
    import socket
    k = None    # the numbers of a struct tdm_pkt_hdr, read when one is sent
    if a.tdm_hdr is not None:
        from tdm_uapi import TDMRX as k
    fam = socket.AF_INET6 if ":" in a.dst else socket.AF_INET
    if a.raw_ptp:
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
        s.bind((a.raw_ptp, 0x88F7))
        src = mac_of(a.raw_ptp)
        dst = bytes(int(x, 16) for x in a.dst.split(":"))
    socks = []
    if a.raw_ptp:
        socks.append(s)
    else:
        for i in range(max(a.flows, 1)):
            s = socket.socket(fam, socket.SOCK_DGRAM)
            if a.sport:
                s.bind(("", a.sport + i))
            socks.append(s)
    for s in socks:
        try:
            s.setsockopt(socket.SOL_SOCKET, SO_SNDBUFFORCE, 64 << 20)
        except OSError:
            pass
        if a.prio is not None:
            s.setsockopt(socket.SOL_SOCKET, SO_PRIORITY, a.prio)
        if a.gso:
            s.setsockopt(SOL_UDP, UDP_SEGMENT, a.size)
    if a.at_phase:
        # Start when CLOCK_REALTIME mod CYCLE == AT (ns).
        cycle, at = [int(x) for x in a.at_phase.split(":")]
        time.sleep(((at - time.time_ns()) % cycle) / NSEC)
    interval = 1.0 / a.rate if a.rate else 0.0
    t0 = time.monotonic()
    end = t0 + a.duration if a.duration else None
    sent = errs = 0
    seq = 0
    # SIGTERM/SIGINT end the run cleanly, with the summary line.
    import signal
    signal.signal(signal.SIGINT, _on_signal)
    signal.signal(signal.SIGTERM, _on_signal)
    while not _stop:
        if a.count and seq >= a.count:
            break
        if end is not None and time.monotonic() >= end:
            break
        if interval:
            due = t0 + seq * interval
            d = due - time.monotonic()
            if d > 0:
                time.sleep(d)
        if a.tdm_hdr is not None:
            hdr = tdm_pkt_hdr(k, a.tdm_hdr, a.plan_version, 0, seq,
                              time.clock_gettime_ns(CLOCK_TAI), 0)
        else:
            hdr = struct.pack("!IIQ", 0x7464_6d77, seq, time.time_ns())
        if a.gso:
            payload = b"".join(hdr + bytes(a.size - len(hdr))
                               for _ in range(a.gso))
        else:
            payload = hdr + bytes(max(a.size - len(hdr), 0))
        s = socks[seq % len(socks)]
        try:
            if a.raw_ptp:
                # PTP over Ethernet: a sync message header padded to size.
                s.send(dst + src + struct.pack("!H", 0x88F7) + payload)
            else:
                s.sendto(payload, (a.dst, a.port))
            sent += 1
        except OSError as e:
            errs += 1
            if e.errno not in (errno.ENOBUFS, errno.EAGAIN):
                die("send: %s" % e)
        seq += 1
    if a.tdm_hdr is not None and not a.raw_ptp:
        # END markers (the same, several times: one may be lost) carry
        # the number of data packets sent.
        for _ in range(a.tdm_end):
            hdr = tdm_pkt_hdr(k, a.tdm_hdr, a.plan_version,
                              k["TDM_PKT_F_END"], 0,
                              time.clock_gettime_ns(CLOCK_TAI), sent)
            try:
                socks[0].sendto(hdr + bytes(max(a.size - len(hdr), 0)),
                                (a.dst, a.port))
            except OSError:
                pass
            time.sleep(0.01)
    print("sent=%d errors=%d secs=%.3f" % (sent, errs, time.monotonic() - t0))
    sys.stdout.flush()
    if a.then_step:
        clock_step(a.then_step)
    if a.then_tai is not None:
        adjtimex(ADJ_TAI, a.then_tai)


# ---- recv -----------------------------------------------------------------

_stop = False


def _on_signal(sig, frm):
    global _stop
    _stop = True


def cmd_recv(a):
    import select
    import signal
    import socket
    signal.signal(signal.SIGINT, _on_signal)
    signal.signal(signal.SIGTERM, _on_signal)
    socks = {}
    fam = socket.AF_INET6 if ":" in a.bind else socket.AF_INET
    for p in [int(x) for x in a.ports.split(",") if x]:
        s = socket.socket(fam, socket.SOCK_DGRAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 64 << 20)
        except OSError:
            pass
        s.bind((a.bind, p))
        s.setblocking(False)
        socks[s.fileno()] = (s, "udp%d" % p)
    if a.eth:
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                          socket.htons(0x88F7))
        s.bind((a.eth, 0x88F7))
        s.setblocking(False)
        socks[s.fileno()] = (s, "ptp_eth")
    stats = {name: {"n": 0, "bytes": 0, "lost": 0, "reorder": 0, "dup": 0,
                    "last": -1, "seen": set(), "t_last": None,
                    "max_gap_ms": 0} for s, name in socks.values()}
    if a.ready:
        with open(a.ready, "w") as f:
            f.write("ready\n")
    t_end = time.monotonic() + a.duration if a.duration else None
    poller = select.poll()
    for fd in socks:
        poller.register(fd, select.POLLIN)

    def drain(fd):
        s, name = socks[fd]
        while True:
            try:
                data = s.recv(65536)
            except BlockingIOError:
                break
            except InterruptedError:
                continue
            st = stats[name]
            now = time.monotonic()
            if st["t_last"] is not None:
                st["max_gap_ms"] = max(st["max_gap_ms"],
                                       int((now - st["t_last"]) * 1000))
            st["t_last"] = now
            if name == "ptp_eth":
                data = data[14:]
            st["n"] += 1
            st["bytes"] += len(data)
            if len(data) >= 8:
                magic, seq = struct.unpack("!II", data[:8])
                if magic == 0x7464_6d77:
                    if seq in st["seen"]:
                        st["dup"] += 1
                    elif seq < st["last"]:
                        st["reorder"] += 1
                    st["seen"].add(seq)
                    st["last"] = max(st["last"], seq)

    # --count-file: the number received so far, for tests that wait for it.
    counted = -1
    while not _stop:
        if t_end is not None and time.monotonic() >= t_end:
            break
        for fd, ev in poller.poll(100):
            drain(fd)
        total = sum(st["n"] for st in stats.values())
        if a.count_file and total != counted:
            with open(a.count_file + ".tmp", "w") as f:
                f.write("%d\n" % total)
            os.rename(a.count_file + ".tmp", a.count_file)
            counted = total
    # What already reached the sockets when we were stopped counts too.
    for fd in socks:
        drain(fd)
    out = {}
    for name, st in stats.items():
        seen = st.pop("seen")
        st.pop("t_last")
        st["max_seq"] = st.pop("last")
        st["first_seq"] = min(seen) if seen else -1
        # Holes below the highest sequence number received.
        st["lost"] = (st["max_seq"] + 1 - len(seen)) if seen else 0
        out[name] = st
    text = "".join("%s.%s=%s\n" % (n, k, v) for n in sorted(out)
                   for k, v in sorted(out[n].items()))
    if a.out:
        with open(a.out + ".tmp", "w") as f:
            f.write(text)
        os.rename(a.out + ".tmp", a.out)
    else:
        sys.stdout.write(text)


# ---- nl: raw netlink qdisc requests ---------------------------------------

NETLINK_ROUTE = 0
RTM_NEWQDISC = 36
NLM_F_REQUEST, NLM_F_ACK, NLM_F_REPLACE, NLM_F_EXCL, NLM_F_CREATE = \
    0x1, 0x4, 0x100, 0x200, 0x400
NLM_F_ACK_TLVS = 0x200
NLMSG_ERROR = 2
NLA_F_NESTED = 0x8000
SOL_NETLINK = 270
NETLINK_CAP_ACK, NETLINK_EXT_ACK = 10, 11
TCA_KIND, TCA_OPTIONS = 1, 2
# The spec's keys: the names of tdm_uapi.ATTR, cycle and base short for
# cycle_time and base_time.
SHORT = {"cycle": "cycle_time", "base": "base_time"}


def nla(t, payload):
    n = 4 + len(payload)
    return struct.pack("=HH", n, t) + payload + bytes((4 - n % 4) % 4)


def build_opts(spec):
    import tdm_uapi as u
    out = b""
    for k, v in spec.items():
        name = SHORT.get(k, k)
        if name not in u.FORMATS and name not in ("windows", "pending"):
            die("nl: unknown key %s" % k)
        t = u.ATTR[name]
        if name == "windows":
            inner = b""
            for w in v:
                sub = b""
                if w[0] is not None:
                    sub += nla(u.WIN_OFFSET, struct.pack("=Q", w[0]))
                if len(w) > 1 and w[1] is not None:
                    sub += nla(u.WIN_LENGTH, struct.pack("=Q", w[1]))
                inner += nla(u.WINDOW | NLA_F_NESTED, sub)
            out += nla(t | NLA_F_NESTED, inner)
        elif name == "pending":
            out += nla(t, struct.pack("=I", v))	# dump-only: must be refused
        else:
            out += nla(t, struct.pack("=" + u.FORMATS[name], v))
    return out


def parse_handle(h):
    if h == "root":
        return 0xFFFFFFFF
    major, minor = (h.split(":") + [""])[:2]
    return (int(major or "0", 16) << 16) | int(minor or "0", 16)


def cmd_nl(a):
    import json
    import socket
    spec = json.loads(a.spec) if a.spec else None
    flags = NLM_F_REQUEST | NLM_F_ACK
    if a.op == "add":
        flags |= NLM_F_CREATE | NLM_F_EXCL
    elif a.op == "replace":
        flags |= NLM_F_CREATE | NLM_F_REPLACE
    ifindex = socket.if_nametoindex(a.dev)
    tcm = struct.pack("=BBHiIII", socket.AF_UNSPEC, 0, 0, ifindex,
                      parse_handle(a.handle), parse_handle(a.parent), 0)
    body = tcm + nla(TCA_KIND, b"tdmwin\0")
    if spec is not None:
        body += nla(TCA_OPTIONS | NLA_F_NESTED, build_opts(spec))
    msg = struct.pack("=IHHII", 16 + len(body), RTM_NEWQDISC, flags, 1, 0) + body
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_ROUTE)
    s.setsockopt(SOL_NETLINK, NETLINK_EXT_ACK, 1)
    s.setsockopt(SOL_NETLINK, NETLINK_CAP_ACK, 1)
    s.bind((0, 0))
    s.send(msg)
    while True:
        data = s.recv(65536)
        off = 0
        while off + 16 <= len(data):
            ln, typ, fl, seq, pid = struct.unpack("=IHHII", data[off:off + 16])
            if typ == NLMSG_ERROR:
                err = struct.unpack("=i", data[off + 16:off + 20])[0]
                # With NETLINK_CAP_ACK only the request's header follows.
                p = off + 20 + 16
                msgtxt = ""
                if fl & NLM_F_ACK_TLVS:
                    while p + 4 <= off + ln:
                        alen, atype = struct.unpack("=HH", data[p:p + 4])
                        if alen < 4:
                            break
                        if atype == 1:
                            msgtxt = data[p + 4:p + alen].split(b"\0")[0] \
                                .decode(errors="replace")
                        p += (alen + 3) & ~3
                if err == 0:
                    print("OK")
                    return 0
                print("ERR %s: %s" % (errno.errorcode.get(-err, str(-err)),
                                      msgtxt))
                return 1
            off += (ln + 3) & ~3


# ---- clock ----------------------------------------------------------------

def timex_type():
    import ctypes
    class Timex(ctypes.Structure):
        _fields_ = [("modes", ctypes.c_uint), ("offset", ctypes.c_long),
                    ("freq", ctypes.c_long), ("maxerror", ctypes.c_long),
                    ("esterror", ctypes.c_long), ("status", ctypes.c_int),
                    ("constant", ctypes.c_long),
                    ("precision", ctypes.c_long),
                    ("tolerance", ctypes.c_long), ("tv_sec", ctypes.c_long),
                    ("tv_usec", ctypes.c_long), ("tick", ctypes.c_long),
                    ("ppsfreq", ctypes.c_long), ("jitter", ctypes.c_long),
                    ("shift", ctypes.c_int), ("stabil", ctypes.c_long),
                    ("jitcnt", ctypes.c_long), ("calcnt", ctypes.c_long),
                    ("errcnt", ctypes.c_long), ("stbcnt", ctypes.c_long),
                    ("tai", ctypes.c_int), ("pad", ctypes.c_int * 11)]
    return Timex


ADJ_TAI = 0x0080
ADJ_FREQUENCY = 0x0002


def adjtimex(modes=0, constant=0, freq=0):
    import ctypes
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    tx = timex_type()()
    tx.modes = modes
    tx.constant = constant
    tx.freq = freq
    if libc.adjtimex(ctypes.byref(tx)) < 0:
        die("adjtimex: %s" % os.strerror(ctypes.get_errno()))
    return tx


def clock_step(ns):
    """Relative step of CLOCK_REALTIME (and so of CLOCK_TAI) by ns."""
    now = time.clock_gettime_ns(time.CLOCK_REALTIME)
    time.clock_settime_ns(time.CLOCK_REALTIME, now + ns)


CLOCKS = {"CLOCK_REALTIME": time.CLOCK_REALTIME, "CLOCK_TAI": time.CLOCK_TAI,
          "CLOCK_MONOTONIC": time.CLOCK_MONOTONIC,
          "CLOCK_BOOTTIME": time.CLOCK_BOOTTIME}


def cmd_clock(a):
    if a.op == "now":
        print(time.clock_gettime_ns(CLOCKS[a.arg or "CLOCK_REALTIME"]))
    elif a.op == "save":
        # Realtime minus boottime: restoring adds the time elapsed since.
        off = time.clock_gettime_ns(time.CLOCK_REALTIME) - \
            time.clock_gettime_ns(time.CLOCK_BOOTTIME)
        tx = adjtimex()
        with open(a.arg, "w") as f:
            f.write("%d %d %d\n" % (off, tx.tai, tx.freq))
    elif a.op == "restore":
        with open(a.arg) as f:
            off, tai, freq = [int(x) for x in f.read().split()]
        now = time.clock_gettime_ns(time.CLOCK_BOOTTIME) + off
        time.clock_settime_ns(time.CLOCK_REALTIME, now)
        adjtimex(ADJ_TAI, tai)
        # ptp4l in a test may have left its frequency correction.
        adjtimex(ADJ_FREQUENCY, freq=freq)
    elif a.op == "step":
        clock_step(int(a.arg))
    elif a.op == "tai":
        if a.arg is None:
            print(adjtimex().tai)
        else:
            adjtimex(ADJ_TAI, int(a.arg))
    elif a.op == "phase":
        # Sleep until CLOCK (default realtime) mod CYCLE == AT, in ns.
        cycle, at = int(a.cycle), int(a.at)
        clk = CLOCKS[a.arg or "CLOCK_REALTIME"]
        now = time.clock_gettime_ns(clk)
        d = (at - now) % cycle
        time.sleep(d / NSEC)


class Opts:
    """Options of the hot commands (flat, classes) without argparse."""

    def __init__(self, argv, names):
        for n in names:
            setattr(self, n, None)
        self.index = 0
        it = iter(argv)
        for arg in it:
            key = arg.lstrip("-").replace("-", "_")
            if not arg.startswith("--") or key not in names + ["index"]:
                die("unknown option %s" % arg)
            val = next(it, None)
            if val is None:
                die("%s needs a value" % arg)
            setattr(self, key, int(val) if key == "index" else val)


def cmd_json():
    """Flatten any JSON document on stdin into sorted key=value lines."""
    import json
    text = sys.stdin.read()
    try:
        data = json.loads(text)
    except ValueError as e:
        die("bad JSON: %s: %r" % (e, text[:200]))
    from tdmtb.flat import kv_lines
    print("\n".join(kv_lines(data)))
    return 0


def _setns(fd):
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.setns(fd, 0x40000000) != 0:     # CLONE_NEWNET
        raise OSError(ctypes.get_errno(), "setns")


def _serve_one(conn):
    """In the forked child: take the client's fds, run its command."""
    import socket
    code = 1
    try:
        msg, fds, _, _ = socket.recv_fds(conn, 4, 4)
        if len(msg) != 4 or len(fds) != 4:
            return
        n = struct.unpack("=I", msg)[0]
        req = b""
        while len(req) < n:
            more = conn.recv(n - len(req))
            if not more:
                return
            req += more
        for i in range(3):
            os.dup2(fds[i], i)
            os.close(fds[i])
        _setns(fds[3])
        os.close(fds[3])
        parts = [x.decode() for x in req.split(b"\0")[:-1]]
        os.chdir(parts[0])
        sys.argv = [sys.argv[0]] + parts[1:]
        try:
            main()
            code = 0
        except SystemExit as e:
            if e.code is None:
                code = 0
            elif isinstance(e.code, int):
                code = e.code
            else:
                print(e.code, file=sys.stderr)
                code = 1
        except BaseException:
            import traceback
            traceback.print_exc()
            code = 1
        for f in (sys.stdout, sys.stderr):
            try:
                f.flush()
            except OSError:
                pass
        conn.sendall(struct.pack("=i", code))
    finally:
        os._exit(code)


def cmd_serve(path):
    """Run commands for selftests/tdm_pyc.c, each in a forked child: the
    interpreter starts and imports once, not once per command."""
    import argparse  # noqa: F401  (loaded here once, for main())
    import ctypes  # noqa: F401
    import json  # noqa: F401
    import re  # noqa: F401
    import select  # noqa: F401
    import signal
    import socket
    import tdm_uapi  # noqa: F401
    import tdmtb.cli  # noqa: F401
    import tdmtb.wirecheck  # noqa: F401
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)   # no zombies
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    srv.listen(64)
    print("ready", flush=True)
    while True:
        conn, _ = srv.accept()
        if os.fork() == 0:
            srv.close()
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            _serve_one(conn)
        conn.close()


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "serve":
        sys.exit(cmd_serve(sys.argv[2]))
    if len(sys.argv) > 1 and sys.argv[1] == "json":
        sys.exit(cmd_json())
    if len(sys.argv) > 1 and sys.argv[1] == "flat":
        sys.exit(cmd_flat(Opts(sys.argv[2:], ["kind", "handle", "parent"])) or 0)
    if len(sys.argv) > 1 and sys.argv[1] == "classes":
        sys.exit(cmd_classes(Opts(sys.argv[2:], ["handle"])) or 0)
    import argparse
    from tdmtb import cli
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawTextHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)

    f = sub.add_parser("flat")
    f.add_argument("--kind")
    f.add_argument("--handle")
    f.add_argument("--parent")
    f.add_argument("--index", type=int, default=0)

    cl = sub.add_parser("classes")
    cl.add_argument("--handle")

    s = sub.add_parser("send")
    s.add_argument("--dst", required=True)
    s.add_argument("--port", type=int, default=5001)
    s.add_argument("--sport", type=int, default=0)
    s.add_argument("--count", type=int, default=0)
    s.add_argument("--duration", type=float, default=0)
    s.add_argument("--rate", type=float, default=0, help="packets/s")
    s.add_argument("--size", type=int, default=200, help="UDP payload")
    s.add_argument("--prio", type=int)
    s.add_argument("--gso", type=int, default=0, help="segments per send")
    s.add_argument("--raw-ptp", metavar="IFNAME",
                   help="send PTP-over-Ethernet frames; --dst is a MAC")
    s.add_argument("--tdm-hdr", type=int, metavar="SENDER",
                   help="start the payload with a struct tdm_pkt_hdr")
    s.add_argument("--tdm-end", type=int, default=3, metavar="N",
                   help="END markers after the data (with --tdm-hdr)")
    s.add_argument("--plan-version", type=int, default=0)
    s.add_argument("--flows", type=int, default=1,
                   help="sockets (source ports) used in turn")
    s.add_argument("--at-phase", metavar="CYCLE:AT",
                   help="start at this phase of CLOCK_REALTIME (ns)")
    s.add_argument("--then-step", type=int, default=0, metavar="NS",
                   help="afterwards step CLOCK_REALTIME by NS")
    s.add_argument("--then-tai", type=int, metavar="SECONDS",
                   help="afterwards set the TAI offset (adjtimex)")

    r = sub.add_parser("recv")
    r.add_argument("--bind", default="0.0.0.0")
    r.add_argument("--ports", default="")
    r.add_argument("--eth", metavar="IFNAME", help="also count 0x88F7 frames")
    r.add_argument("--duration", type=float, default=0)
    r.add_argument("--ready")
    r.add_argument("--out")
    r.add_argument("--count-file", help="keep the number received so far here")

    n = sub.add_parser("nl")
    n.add_argument("op", choices=("add", "change", "replace"))
    n.add_argument("dev")
    n.add_argument("spec", nargs="?", help="JSON object; omit: no TCA_OPTIONS")
    n.add_argument("--handle", default="1:")
    n.add_argument("--parent", default="root")

    k = sub.add_parser("clock")
    k.add_argument("op", choices=("now", "save", "restore", "step", "tai",
                                  "phase"))
    k.add_argument("arg", nargs="?")
    k.add_argument("--cycle")
    k.add_argument("--at")

    # The testbed's plan check (testbed/tdmtb/cli.py, testbed/tb on the host).
    cli.add_wire_check(sub)

    a = p.parse_args()
    fn = {"wire-check": cli.cmd_wire_check, "flat": cmd_flat,
          "classes": cmd_classes, "send": cmd_send, "recv": cmd_recv,
          "nl": cmd_nl, "clock": cmd_clock}[a.cmd]
    sys.exit(fn(a) or 0)


if __name__ == "__main__":
    main()
