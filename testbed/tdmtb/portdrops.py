# SPDX-License-Identifier: GPL-2.0
"""The switch port's drops told apart: collisions of senders, or one
sender's frames bunched by the emulator."""
from .pcap import NSEC, tdm_frames


def port_drops(arrivals, departures):
    """Why the switch port dropped what it dropped.

    ARRIVALS: (t_ns, sender, seq) of every frame at the port's input (the
    senders' wires), DEPARTURES: {(sender, seq): t_ns} at its output.  A
    frame that arrived and never left was dropped.  It is a collision drop
    if, when it arrived, the port's buffer held a frame of another sender
    (one that arrived before it and left after it arrived): two senders'
    wires were filling one port.  Otherwise it is a self drop: frames of
    its own sender alone overfilled a port that drains at the rate of that
    sender's wire.  No wire can do that; on the switch testbed it is the
    emulator, which bunches a sender's frames when a timer or the receive
    softirq runs late (Documentation/testbed.rst).  Returns a dict of
    counts, the first collisions as (t_ns, sender, [other senders]) and
    the drops by sender: {sender: [collisions, self drops]}."""
    import heapq
    res = {"arrived": 0, "departed": 0, "dropped": 0, "collision": 0,
           "self": 0}
    first = []
    by = {}
    heap = []			# (departure, sender) of frames in the buffer
    held = {}			# sender -> its frames in the buffer
    for t, snd, seq in sorted(arrivals):
        res["arrived"] += 1
        while heap and heap[0][0] <= t:
            _, s = heapq.heappop(heap)
            held[s] -= 1
        dep = departures.get((snd, seq))
        if dep is not None:
            res["departed"] += 1
            heapq.heappush(heap, (dep, snd))
            held[snd] = held.get(snd, 0) + 1
            continue
        res["dropped"] += 1
        others = sorted(s for s, k in held.items() if k and s != snd)
        mine = by.setdefault(snd, [0, 0])
        if others:
            res["collision"] += 1
            mine[0] += 1
            if len(first) < 10:
                first.append((t, snd, others))
        else:
            res["self"] += 1
            mine[1] += 1
    return res, first, by


def drop_lines(res, by):
    """port_drops's counts as key=value lines: the totals, then each
    sender's collision.S and self.S."""
    out = ["%s=%d" % (k, res[k]) for k in sorted(res)]
    for snd in sorted(by):
        out.append("collision.%d=%d" % (snd, by[snd][0]))
        out.append("self.%d=%d" % (snd, by[snd][1]))
    return out


def collision_lines(first):
    """The first collisions of port_drops as '#' lines."""
    return ["# collision: t=%d.%09d sender %d, buffer held senders %s"
            % (t // NSEC, t % NSEC, snd, others) for t, snd, others in first]


def from_taps(inputs, out, port=8081):
    """port_drops from taps at the port's inputs (INPUTS, one pcap per
    sender's wire) and its output (OUT, a pcap) of the tdmgen frames to
    PORT."""
    arr = []
    for f in inputs:
        arr += tdm_frames(f, port)
    dep = {(s, q): t for t, s, q in tdm_frames(out, port)}
    return port_drops(arr, dep)


def taps_incomplete(res, nic_sent, sw_drops):
    """Did the taps behind RES (port_drops's counts) miss frames, by the
    port's own counters: NIC_SENT frames reached it from the senders'
    NICs, it dropped SW_DROPS?  Then they cannot tell its drops apart:
    says what they missed; None if they saw them all."""
    if res.get("arrived") == nic_sent and res.get("dropped") == sw_drops:
        return None
    return ("the taps saw %s of the %d frames that reached the switch port "
            "and %s of the %d it dropped" % (res.get("arrived", "no"), nic_sent,
                                             res.get("dropped", "no"), sw_drops))
