# SPDX-License-Identifier: GPL-2.0
"""The switch testbed without the emulator's timing: each sender's NIC
ring and perfect wire, into a switch port of BUFFER frames, or with many
receivers (a corner turn) into the port of each frame's receiver."""
from .pcap import ip_dst, tdm_records, write_pcap
from .portdrops import port_drops
from .wirecheck import frame_ns as wire_frame_ns


def nic_wires(departures, frame_ns, ring):
    """DEPARTURES: (t_ns, sender, key) of every frame as its sender's
    qdisc let it go (a tap on the sender's device, where the gate acts).
    Each sender's NIC holds RING frames (the one on the wire included; one
    beyond is dropped there) and puts them on a perfect wire of its own,
    back to back in that order: a frame starts at max(its departure, the
    end of the one before) and reaches the switch when its last bit has,
    FRAME_NS later.  Returns the arrivals (t_ns, sender, key), sorted, and
    the frames each NIC dropped {sender: n}."""
    wire_end = {}
    nic = {}
    arr = []
    for t, snd, key in sorted(departures):
        end = max(t, wire_end.get(snd, t))
        if -(-(end - t) // frame_ns) >= ring:
            nic[snd] = nic.get(snd, 0) + 1
            continue
        wire_end[snd] = end + frame_ns
        arr.append((end + frame_ns, snd, key))
    arr.sort()
    return arr, nic


def port(arrivals, frame_ns, buffer):
    """A switch port that drains at the wires' rate and holds BUFFER
    frames, the one it is sending included (as netem's limit counts):
    {(sender, key): t_ns} when each frame of ARRIVALS (sorted) left it;
    the others it dropped.  One sender alone never fills it: its frames
    reach it no faster than it drains."""
    import heapq
    out = {}
    queue = []			# when the frames in the port leave it
    last = 0
    for t, snd, key in arrivals:
        while queue and queue[0] <= t:
            heapq.heappop(queue)
        if len(queue) >= buffer:
            continue
        last = max(t, last) + frame_ns
        heapq.heappush(queue, last)
        out[(snd, key)] = last
    return out


def ideal_port(departures, frame_ns, buffer, ring):
    """One receiver: DEPARTURES (t_ns, sender, seq) through nic_wires into
    one port.  Returns (arrivals, departures, nic_drops) in port_drops's
    form: (t_ns, sender, seq) at the port's input, {(sender, seq): t_ns}
    when each frame's last bit left the port, and {sender: n} the NICs
    dropped."""
    arr, nic = nic_wires(departures, frame_ns, ring)
    return arr, port(arr, frame_ns, buffer), nic


def ideal_ports(departures, frame_ns, buffer, ring):
    """Many receivers: DEPARTURES (t_ns, sender, seq, receiver), seq
    counted per sender and receiver (tdmgen --corner).  The senders' NICs
    and wires as in ideal_port; the switch hands each frame to the port of
    its receiver, each a port of BUFFER frames.  Returns ({receiver:
    (arrivals, departures)} in ideal_port's form, nic_drops)."""
    arr, nic = nic_wires(((t, snd, (dst, seq)) for t, snd, seq, dst in
                          departures), frame_ns, ring)
    by_dst = {}
    for t, snd, (dst, seq) in arr:
        by_dst.setdefault(dst, []).append((t, snd, seq))
    return {d: (a, port(a, frame_ns, buffer)) for d, a in by_dst.items()}, nic


def _records(inputs, port_no):
    for f in inputs:
        for t, snd, seq, frame, lt in tdm_records(f, port_no):
            yield t, snd, seq, frame, lt


def from_taps(inputs, size, mbit, buffer, ring, port=8081, pcap=None):
    """ideal_port on the senders' taps (INPUTS, pcaps of the tdmgen frames
    of SIZE bytes of UDP payload to PORT), on wires of MBIT Mbit/s: the
    port's drops told apart (port_drops's counts and by-sender drops, and
    nic_drops).  With PCAP, writes there the frames that left the port,
    stamped when they did, for tdmstat analyze."""
    dep, raw = [], {}
    for t, snd, seq, frame, lt in _records(inputs, port):
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


def ports_by_dest(inputs, size, mbit, buffer, ring, port=8081):
    """ideal_ports on the senders' taps (INPUTS, pcaps of the tdmgen
    --corner frames of SIZE bytes of UDP payload to PORT), each frame to
    the port of its IP destination, on wires of MBIT Mbit/s.  Returns
    ([(address, (arrivals, departures))] in address order, in
    ideal_port's form, and the NICs' drops {sender: n})."""
    import ipaddress
    dep = [(t, snd, seq, ip_dst(frame, lt))
           for t, snd, seq, frame, lt in _records(inputs, port)]
    ports, nic = ideal_ports(dep, wire_frame_ns(size, mbit), buffer, ring)
    return [(d, ports[d]) for d in sorted(
        ports, key=lambda a: ipaddress.ip_address(a or "0.0.0.0"))], nic


def from_taps_by_dest(inputs, size, mbit, buffer, ring, port=8081):
    """ports_by_dest's ports with their drops told apart and summed.
    Returns (totals, by-sender drops over all ports, [(address, counts)]
    per port in address order); totals has port_drops's counts, nic_drops
    and ports."""
    ports, nic = ports_by_dest(inputs, size, mbit, buffer, ring, port)
    tot = {"arrived": 0, "departed": 0, "dropped": 0, "collision": 0,
           "self": 0}
    by_all, per = {}, []
    for dst, ad in ports:
        res, _, by = port_drops(*ad)
        per.append((dst, res))
        for k in tot:
            tot[k] += res[k]
        for snd, (c, s) in by.items():
            mine = by_all.setdefault(snd, [0, 0])
            mine[0] += c
            mine[1] += s
    tot["nic_drops"] = sum(nic.values())
    tot["ports"] = len(per)
    return tot, by_all, per
