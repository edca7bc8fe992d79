# SPDX-License-Identifier: GPL-2.0
"""tdmtb.portdrops: a drop is a collision only if another sender's frame
was in the buffer."""
import os
import tempfile
import unittest

import helpers
from tdmtb import portdrops

FT = 100


class PortDrops(unittest.TestCase):
    def test_self_drop_and_collisions(self):
        arr, dep = [], {}
        for k in range(3):		# sender 0 at line rate: never held
            arr.append((k * FT, 0, k))
            dep[(0, k)] = (k + 1) * FT
        for k in range(3, 9):		# sender 0 bunched: 6 at once, 5 fit
            arr.append((1000, 0, k))
            if k < 8:
                dep[(0, k)] = 1000 + (k - 2) * FT
        arr.append((1050, 1, 0))	# sender 1 while 0 fills it: collision
        arr.append((1600, 1, 1))	# after the buffer drained: left
        dep[(1, 1)] = 1700
        arr.append((1650, 2, 0))	# sender 1's frame still in: collision
        res, first, by = portdrops.port_drops(list(reversed(arr)), dep)
        self.assertEqual(res, {"arrived": 12, "departed": 9, "dropped": 3,
                               "collision": 2, "self": 1},
                         "whatever the input order")
        self.assertEqual(first, [(1050, 1, [0]), (1650, 2, [1])])
        self.assertEqual(by, {0: [0, 1], 1: [1, 0], 2: [1, 0]})

    def test_left_at_the_instant_of_an_arrival(self):
        res, _, _ = portdrops.port_drops([(0, 0, 0), (0, 0, 1)], {(0, 0): 0})
        self.assertEqual((res["collision"], res["self"]), (0, 1))

    def test_lines(self):
        res, first, by = portdrops.port_drops(
            [(0, 0, 0), (5, 1, 0)], {(0, 0): 10})
        self.assertEqual(portdrops.drop_lines(res, by),
                         ["arrived=2", "collision=1", "departed=1",
                          "dropped=1", "self=0", "collision.1=1", "self.1=0"])
        self.assertEqual(portdrops.collision_lines(first),
                         ["# collision: t=0.000000005 sender 1, buffer held "
                          "senders [0]"])

    def test_from_taps(self):
        with tempfile.TemporaryDirectory() as d:
            i0, i1, o = (os.path.join(d, n) for n in ("i0", "i1", "o"))
            helpers.write(i0, [(0, helpers.tdm_frame(0, 0)),
                               (10, helpers.tdm_frame(0, 1))])
            helpers.write(i1, [(5, helpers.tdm_frame(1, 0))])
            helpers.write(o, [(20, helpers.tdm_frame(0, 0)),
                              (30, helpers.tdm_frame(0, 1))])
            res, _, by = portdrops.from_taps([i0, i1], o)
        self.assertEqual((res["dropped"], res["collision"], by),
                         (1, 1, {1: [1, 0]}))

    def test_taps_incomplete(self):
        res, _, _ = portdrops.port_drops([(0, 0, 0), (5, 1, 0)], {(0, 0): 10})
        self.assertIsNone(portdrops.taps_incomplete(res, 2, 1))
        self.assertEqual(portdrops.taps_incomplete(res, 3, 1),
                         "the taps saw 2 of the 3 frames that reached the "
                         "switch port and 1 of the 1 it dropped")
        self.assertIsNotNone(portdrops.taps_incomplete(res, 2, 2))
        self.assertIn("saw no of the 4", portdrops.taps_incomplete({}, 4, 0))


if __name__ == "__main__":
    unittest.main()
