# SPDX-License-Identifier: GPL-2.0
"""Pcap files: reading (micro- or nanosecond, either byte order), writing
(nanosecond), and the UDP payloads inside (Ethernet with VLAN tags, or
Linux cooked; IPv4 or IPv6)."""
import os
import struct
import sys

NSEC = 1000000000
# The selftests' sender (tdmwin_util.py send): a payload starting with
# this magic and a 32-bit sequence number.
SEND_MAGIC = 0x7464_6d77
LINKTYPE_ETHERNET = 1
LINKTYPE_LINUX_SLL = 113


class PcapError(ValueError):
    """A file that is not a pcap file."""


def read_pcap(path):
    """Yield (t_ns, frame, linktype) from a pcap file (micro- or
    nanosecond).  Raises PcapError if PATH is not a pcap file."""
    with open(path, "rb") as f:
        hdr = f.read(24)
        if len(hdr) < 24:
            return
        magic = struct.unpack("<I", hdr[:4])[0]
        if magic in (0xa1b2c3d4, 0xa1b23c4d):
            endian = "<"
        else:
            magic = struct.unpack(">I", hdr[:4])[0]
            endian = ">"
        if magic == 0xa1b23c4d:
            mult = 1
        elif magic == 0xa1b2c3d4:
            mult = 1000
        else:
            raise PcapError("%s: not a pcap file" % path)
        linktype = struct.unpack(endian + "I", hdr[20:24])[0]
        while True:
            rh = f.read(16)
            if len(rh) < 16:
                return
            sec, frac, incl, orig = struct.unpack(endian + "IIII", rh)
            data = f.read(incl)
            yield sec * NSEC + frac * mult, data, linktype


def write_pcap(path, records, linktype=LINKTYPE_ETHERNET, snaplen=65535):
    """Write RECORDS, (t_ns, frame, orig_len or None), to a nanosecond
    pcap file (little-endian)."""
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xa1b23c4d, 2, 4, 0, 0, snaplen,
                            linktype))
        for t, frame, orig in records:
            f.write(struct.pack("<IIII", t // NSEC, t % NSEC, len(frame),
                                len(frame) if orig is None else orig))
            f.write(frame)


def l3(frame, linktype):
    """(ethertype, offset of the network header) of a frame, or (None,
    None) for a link type we do not read."""
    if linktype == LINKTYPE_ETHERNET:
        off = 12
        et = struct.unpack("!H", frame[off:off + 2])[0]
        off += 2
        while et in (0x8100, 0x88a8):
            et = struct.unpack("!H", frame[off + 2:off + 4])[0]
            off += 4
        return et, off
    if linktype == LINKTYPE_LINUX_SLL:
        return struct.unpack("!H", frame[14:16])[0], 16
    return None, None


def udp_payload(frame, linktype):
    """(dport, offset of the UDP payload) of an IPv4/IPv6 UDP frame, or
    (None, None)."""
    et, off = l3(frame, linktype)
    if et == 0x0800:
        ihl = (frame[off] & 0xf) * 4
        if frame[off + 9] != 17:
            return None, None
        off += ihl
    elif et == 0x86dd:
        if frame[off + 6] != 17:
            return None, None
        off += 40
    else:
        return None, None
    return struct.unpack("!H", frame[off + 2:off + 4])[0], off + 8


def ip_dst(frame, linktype):
    """The destination address (text) of an IPv4/IPv6 frame, or None."""
    import socket
    et, off = l3(frame, linktype)
    if et == 0x0800 and len(frame) >= off + 20:
        return socket.inet_ntop(socket.AF_INET, frame[off + 16:off + 20])
    if et == 0x86dd and len(frame) >= off + 40:
        return socket.inet_ntop(socket.AF_INET6, frame[off + 24:off + 40])
    return None


def udp_info(frame, linktype):
    """(dport, seq or None) of an IPv4/IPv6 UDP frame; seq is the
    selftests' sender's sequence number."""
    dport, off = udp_payload(frame, linktype)
    if dport is None:
        return None, None
    seq = None
    p = frame[off:off + 8]
    if len(p) == 8:
        magic, s = struct.unpack("!II", p)
        if magic == SEND_MAGIC:
            seq = s
    return dport, seq


def tdm_magic():
    """TDM_PKT_MAGIC of kmod/uapi/linux/tdmrx.h (selftests/tdm_uapi.py
    reads it from the header)."""
    try:
        from tdm_uapi import TDMRX
    except ImportError:
        sys.path.append(os.path.join(os.path.dirname(os.path.abspath(
            __file__)), "..", "..", "selftests"))
        from tdm_uapi import TDMRX
    return TDMRX["TDM_PKT_MAGIC"]


def tdm_records(path, port, magic=None):
    """Yield (t_ns, sender, seq, frame, linktype) of the tdmgen frames
    (struct tdm_pkt_hdr) to PORT in a pcap."""
    if magic is None:
        magic = tdm_magic()
    for t, frame, lt in read_pcap(path):
        dport, off = udp_payload(frame, lt)
        if dport != port or len(frame) < off + 24:
            continue
        m, _, _, _, snd, _, seq = struct.unpack("!IBBHIIQ", frame[off:off + 24])
        if m == magic:
            yield t, snd, seq, frame, lt


def tdm_frames(path, port, magic=None):
    """(t_ns, sender, seq) of the tdmgen frames to PORT in a pcap."""
    return [r[:3] for r in tdm_records(path, port, magic)]
