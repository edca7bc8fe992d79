# SPDX-License-Identifier: GPL-2.0
"""Synthetic captures for the testbed's host tests."""
import os
import struct
import sys

TESTBED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
ROOT = os.path.join(TESTBED, "..")
sys.path.insert(0, TESTBED)

from tdmtb.pcap import SEND_MAGIC, write_pcap  # noqa: E402

TDM_MAGIC = 0x54444d47		# TDM_PKT_MAGIC (kmod/uapi/linux/tdmrx.h)


def udp_frame(dport, payload, v6=False, vlan=False, cooked=False, dst=None):
    """An Ethernet (or Linux cooked) frame of UDP to DPORT (at DST, an
    address as text; all zeros if None)."""
    import socket
    udp = struct.pack("!HHHH", 40000, dport, 8 + len(payload), 0) + payload
    if v6:
        ip = struct.pack("!IHBB16s16s", 0x60000000, len(udp), 17, 64,
                         bytes(16), socket.inet_pton(socket.AF_INET6, dst)
                         if dst else bytes(16))
        et = 0x86dd
    else:
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0, 64,
                         17, 0, bytes(4), socket.inet_pton(socket.AF_INET, dst)
                         if dst else bytes(4))
        et = 0x0800
    if cooked:
        return bytes(14) + struct.pack("!H", et) + ip + udp
    tag = struct.pack("!HH", 0x8100, 5) if vlan else b""
    return bytes(12) + tag + struct.pack("!H", et) + ip + udp


def send_frame(seq, size=200, port=5001, **kw):
    """A frame of the selftests' sender (tdmwin_util.py send)."""
    return udp_frame(port, struct.pack("!II", SEND_MAGIC, seq) +
                     bytes(size - 8), **kw)


def tdm_frame(sender, seq, size=1200, port=8081, dst=None, v6=False):
    """A frame of tdmgen: struct tdm_pkt_hdr, then padding."""
    hdr = struct.pack("!IBBHIIQQQ", TDM_MAGIC, 1, 0, 40, sender, 0, seq, 0, 0)
    return udp_frame(port, hdr + bytes(size - 40), dst=dst, v6=v6)


def write(path, stamped, linktype=1):
    """STAMPED: (t_ns, frame)."""
    write_pcap(path, ((t, fr, None) for t, fr in stamped), linktype)
