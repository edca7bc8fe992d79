# SPDX-License-Identifier: GPL-2.0
"""The switch testbed without the emulator's timing: each sender's NIC
ring and perfect wire, into a switch port of BUFFER frames."""
from .pcap import tdm_records, write_pcap
from .portdrops import port_drops
from .wirecheck import frame_ns as wire_frame_ns


def ideal_port(departures, frame_ns, buffer, ring):
    """DEPARTURES: (t_ns, sender, seq) of every frame as its sender's
    qdisc let it go (a tap on the sender's device, where the gate acts).
    Each sender's NIC holds RING frames (the one on the wire included; one
    beyond is dropped there) and puts them on a perfect wire of its own,
    back to back in that order: a frame starts at max(its departure, the
    end of the one before) and reaches the switch port when its last bit
    has, FRAME_NS later.  The port drains at the same rate and holds
    BUFFER frames, the one it is sending included (as netem's limit
    counts).  Returns (arrivals, departures, nic_drops) in port_drops's
    form: (t_ns, sender, seq) at the port's input, {(sender, seq): t_ns}
    when each frame's last bit left the port, and the frames each NIC
    dropped {sender: n}.  One sender alone never fills the port: its
    frames reach it no faster than it drains."""
    import heapq
    wire_end = {}
    nic = {}
    arr = []
    for t, snd, seq in sorted(departures):
        end = max(t, wire_end.get(snd, t))
        if -(-(end - t) // frame_ns) >= ring:
            nic[snd] = nic.get(snd, 0) + 1
            continue
        wire_end[snd] = end + frame_ns
        arr.append((end + frame_ns, snd, seq))
    arr.sort()
    out = {}
    queue = []			# when the frames in the port leave it
    last = 0
    for t, snd, seq in arr:
        while queue and queue[0] <= t:
            heapq.heappop(queue)
        if len(queue) >= buffer:
            continue
        last = max(t, last) + frame_ns
        heapq.heappush(queue, last)
        out[(snd, seq)] = last
    return arr, out, nic


def from_taps(inputs, size, mbit, buffer, ring, port=8081, pcap=None):
    """ideal_port on the senders' taps (INPUTS, pcaps of the tdmgen frames
    of SIZE bytes of UDP payload to PORT), on wires of MBIT Mbit/s: the
    port's drops told apart (port_drops's counts and by-sender drops, and
    nic_drops).  With PCAP, writes there the frames that left the port,
    stamped when they did, for tdmstat analyze."""
    dep, raw = [], {}
    for f in inputs:
        for t, snd, seq, frame, lt in tdm_records(f, port):
            dep.append((t, snd, seq))
            raw[(snd, seq)] = (frame, lt)
    arr, out, nic = ideal_port(dep, wire_frame_ns(size, mbit), buffer, ring)
    res, _, by = port_drops(arr, out)
    res["nic_drops"] = sum(nic.values())
    if pcap:
        lt = next(iter(raw.values()))[1] if raw else 1
        write_pcap(pcap, ((t, raw[k][0], size + 42) for k, t in
                          sorted(out.items(), key=lambda x: x[1])), lt)
    return res, by
