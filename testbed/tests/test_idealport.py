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



class IdealPorts(unittest.TestCase):
    """Many receivers (a corner turn): each frame at its receiver's port."""

    @staticmethod
    def barrel(n, m, slot, per_slot, shift=None):
        """N senders, M receivers, L = max(N, M) slots: in slot k sender i
        sends PER_SLOT frames back to back to (i + k) mod L (none if that
        is not a receiver), seq counted per receiver.  SHIFT(i, k) moves
        the receiver of a slot (free-running senders)."""
        dep, seq = [], {}
        ll = max(n, m)
        for k in range(ll * 2):
            for i in range(n):
                r = (i + k) % ll if shift is None else shift(i, k)
                if r >= m:
                    continue
                for f in range(per_slot):
                    q = seq.get((i, r), 0)
                    seq[(i, r)] = q + 1
                    dep.append((k * slot + f * FT, i, q, r))
        return dep

    def totals(self, dep, buffer=5):
        ports, nic = idealport.ideal_ports(dep, FT, buffer, 64)
        tot = {"dropped": 0, "collision": 0, "arrived": 0}
        for a, out in ports.values():
            res, _, _ = port_drops(a, out)
            for k in tot:
                tot[k] += res[k]
        return ports, nic, tot

    def test_barrel_no_drop(self):
        for n, m in ((3, 3), (4, 2), (2, 5), (6, 6)):
            dep = self.barrel(n, m, 12 * FT, 10)
            ports, nic, tot = self.totals(dep)
            self.assertEqual((tot["dropped"], nic, tot["arrived"]),
                             (0, {}, len(dep)), "%d x %d" % (n, m))
            self.assertEqual(len(ports), m, "every receiver's port was used")

    def test_two_senders_at_one_receiver(self):
        # Sender 1 targets sender 0's receiver: 10-frame bursts meet.
        dep = self.barrel(3, 3, 12 * FT, 10,
                          lambda i, k: k % 3 if i < 2 else (i + k) % 3)
        ports, _, tot = self.totals(dep)
        self.assertGreater(tot["collision"], 0)
        # ... and only where they met: the third sender's ports are clean
        # unless it shares one.
        self.assertEqual(tot["dropped"], tot["collision"])

    def test_ports_apart(self):
        # Two senders at once, but to different receivers: no drop; the
        # same to one receiver: drops, as ideal_port says.
        apart = [(0, s, k, s) for s in (0, 1) for k in range(10)]
        _, _, tot = self.totals(apart)
        self.assertEqual(tot["dropped"], 0)
        one = [(0, s, k, 0) for s in (0, 1) for k in range(10)]
        _, _, tot = self.totals(one)
        res, _, _ = port_drops(*idealport.ideal_port(
            [(t, s, k) for t, s, k, _ in one], FT, 5, 64)[:2])
        self.assertEqual(tot["dropped"], res["dropped"])

    def test_from_taps_by_dest(self):
        size, mbit = 1200, 100
        ft = wirecheck.frame_ns(size, mbit)
        with tempfile.TemporaryDirectory() as d:
            taps = [os.path.join(d, "t%d" % s) for s in range(2)]
            # Slot 0: sender 0 to .101, 1 to .102; slot 1 both to .101.
            for s, path in enumerate(taps):
                fr = [(k * ft, helpers.tdm_frame(s, k, size,
                                                 dst="198.18.2.%d" % (101 + s)))
                      for k in range(8)]
                fr += [(20 * ft + k * ft, helpers.tdm_frame(
                    s, 8 + k if s == 0 else k, size, dst="198.18.2.101"))
                    for k in range(8)]
                helpers.write(path, fr)
            tot, by, per = idealport.from_taps_by_dest(taps, size, mbit, 2, 64)
        self.assertEqual([a for a, _ in per], ["198.18.2.101", "198.18.2.102"])
        self.assertEqual((tot["ports"], tot["arrived"], tot["nic_drops"]),
                         (2, 32, 0))
        self.assertEqual(per[1][1]["dropped"], 0, "slot 0 alone at .102")
        self.assertGreater(per[0][1]["collision"], 0, "slot 1 meets at .101")
        self.assertEqual(tot["collision"], per[0][1]["collision"])
        self.assertEqual(sum(c for c, _ in by.values()), tot["collision"])


if __name__ == "__main__":
    unittest.main()
