# SPDX-License-Identifier: GPL-2.0
"""tdmtb.pcap: reading both resolutions and byte orders, UDP payloads."""
import os
import struct
import tempfile
import unittest

import helpers
from tdmtb import pcap


class Pcap(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)

    def path(self, name):
        return os.path.join(self.dir.name, name)

    def test_round_trip_ns(self):
        fr = [(1_700_000_000_123_456_789 + k, helpers.send_frame(k))
              for k in range(3)]
        helpers.write(self.path("a.pcap"), fr)
        got = list(pcap.read_pcap(self.path("a.pcap")))
        self.assertEqual([(t, f) for t, f, _ in got], fr)
        self.assertEqual({lt for _, _, lt in got}, {1})

    def test_microseconds_big_endian(self):
        fr = helpers.send_frame(7)
        with open(self.path("b.pcap"), "wb") as f:
            f.write(struct.pack(">IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
            f.write(struct.pack(">IIII", 5, 250, len(fr), len(fr)) + fr)
        (t, got, _), = pcap.read_pcap(self.path("b.pcap"))
        self.assertEqual((t, got), (5 * pcap.NSEC + 250_000, fr))

    def test_not_a_pcap(self):
        with open(self.path("c.pcap"), "wb") as f:
            f.write(bytes(40))
        with self.assertRaises(pcap.PcapError):
            list(pcap.read_pcap(self.path("c.pcap")))

    def test_empty_and_short(self):
        with open(self.path("d.pcap"), "wb") as f:
            f.write(bytes(4))
        self.assertEqual(list(pcap.read_pcap(self.path("d.pcap"))), [])

    def test_udp_info(self):
        for kw in ({}, {"v6": True}, {"vlan": True}):
            self.assertEqual(pcap.udp_info(helpers.send_frame(42, **kw), 1),
                             (5001, 42), kw)
        self.assertEqual(pcap.udp_info(helpers.send_frame(9, cooked=True), 113),
                         (5001, 9))
        other = helpers.udp_frame(6000, b"x" * 20)
        self.assertEqual(pcap.udp_info(other, 1), (6000, None))
        arp = bytes(12) + b"\x08\x06" + bytes(28)
        self.assertEqual(pcap.udp_info(arp, 1), (None, None))
        self.assertEqual(pcap.udp_info(other, 228), (None, None))

    def test_tdm_records(self):
        fr = [(100, helpers.tdm_frame(2, 5)), (200, helpers.send_frame(1, port=8081)),
              (300, helpers.tdm_frame(3, 6, port=9000))]
        helpers.write(self.path("e.pcap"), fr)
        self.assertEqual(pcap.tdm_frames(self.path("e.pcap"), 8081), [(100, 2, 5)])

    def test_tdm_magic_from_the_header(self):
        self.assertEqual(pcap.tdm_magic(), helpers.TDM_MAGIC)


if __name__ == "__main__":
    unittest.main()
