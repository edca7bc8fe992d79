# SPDX-License-Identifier: GPL-2.0
"""tdmtb.idealport: the senders' departures on perfect wires into a port
of BUFFER frames.  The sweep's figure and the demo's headline are judged
there: a broken model must turn these red."""
import os
import tempfile
import unittest

import helpers
from tdmtb import idealport, pcap, wirecheck
from tdmtb.portdrops import port_drops

FT = 1000


class IdealPort(unittest.TestCase):
    def test_one_sender_burst_no_drop(self):
        arr, out, nic = idealport.ideal_port([(0, 0, k) for k in range(10)],
                                             FT, 5, 64)
        res, _, _ = port_drops(arr, out)
        self.assertEqual((res["dropped"], nic), (0, {}),
                         "one sender's burst crosses its wire at line rate")

    def test_frame_times(self):
        arr, out, _ = idealport.ideal_port([(0, 0, k) for k in range(10)],
                                           FT, 5, 64)
        self.assertEqual([t for t, _, _ in arr][:3], [FT, 2 * FT, 3 * FT],
                         "frames reach the port whole, back to back")
        self.assertEqual(sorted(out.values())[:3], [2 * FT, 3 * FT, 4 * FT],
                         "a frame leaves a frame time after it arrived whole")

    def test_two_bursts_collide(self):
        burst = [(0, s, k) for s in (0, 1) for k in range(10)]
        res, _, by = port_drops(*idealport.ideal_port(burst, FT, 5, 64)[:2])
        self.assertEqual((res["arrived"], res["dropped"], res["self"], by),
                         (20, 6, 0, {1: [6, 0]}),
                         "the buffer fills by one a frame time: 6 collisions")

    def test_buffer_of_one(self):
        burst = [(0, s, 0) for s in range(3)]
        res, _, _ = port_drops(*idealport.ideal_port(burst, FT, 1, 64)[:2])
        self.assertEqual((res["departed"], res["collision"]), (1, 2))

    def test_nic_ring(self):
        _, _, nic = idealport.ideal_port([(0, 0, k) for k in range(70)],
                                         FT, 5, 64)
        self.assertEqual(nic, {0: 6}, "a ring of 64 frames drops the 65th on")

    def test_back_to_back_senders(self):
        dep = [(0, 0, k) for k in range(10)] + \
              [(10 * FT + 1, 1, k) for k in range(10)]
        res, _, _ = port_drops(*idealport.ideal_port(dep, FT, 5, 64)[:2])
        self.assertEqual(res["dropped"], 0, "a second sender after the "
                         "first's last frame left loses nothing")

    def test_from_taps_and_pcap(self):
        size, mbit = 1200, 100
        ft = wirecheck.frame_ns(size, mbit)
        with tempfile.TemporaryDirectory() as d:
            t0, t1, o = (os.path.join(d, n) for n in ("t0", "t1", "o"))
            helpers.write(t0, [(k * ft, helpers.tdm_frame(0, k, size))
                               for k in range(4)])
            helpers.write(t1, [(k * ft, helpers.tdm_frame(1, k, size))
                               for k in range(4)])
            res, by = idealport.from_taps([t0, t1], size, mbit, 2, 64, pcap=o)
            left = list(pcap.read_pcap(o))
        self.assertEqual((res["arrived"], res["departed"], res["nic_drops"]),
                         (8, len(left), 0))
        self.assertGreater(res["collision"], 0)
        stamps = [t for t, _, _ in left]
        self.assertEqual(stamps, sorted(stamps), "the port's output in order")
        self.assertTrue(all(b - a >= ft for a, b in zip(stamps, stamps[1:])),
                        "the port sends at most at line rate")


if __name__ == "__main__":
    unittest.main()
