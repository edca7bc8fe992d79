# SPDX-License-Identifier: GPL-2.0
"""tdmtb.inflight: departures paired with the qdisc's decisions."""
import os
import tempfile
import unittest

from tdmtb import inflight

CYCLE = 10_000_000
WINS = "1300000:1700000,6100000:900000"
HDR = ("# tracer: nop\n#\n"
       "# entries-in-buffer/entries-written: %d/%d   #P:2\n#\n")


def line(t_ns, cpu, event, rest):
    return "          tdmgen-381     [%03d] b..1.  %d.%06d: %s: %s\n" % (
        cpu, t_ns // 10**9, t_ns % 10**9 // 1000, event, rest)


def decide(t, cpu=0, ret="0xffff888004a1b200"):
    return line(t, cpu, "decide", "(__qdisc_run+0x9a/0x4d0 <- "
                "tdmwin_dequeue) ret=%s" % ret)


def batch(t, n, cpu=0):
    return line(t, cpu, "qdisc_dequeue", "dequeue ifindex=2 qdisc "
                "handle=0x10000 parent=0xFFFFFFFF txq_state=0x0 packets=%d "
                "skbaddr=00000000c64cae32" % n)


def xmit(t, cpu=0, dev="tdmA"):
    return line(t, cpu, "net_dev_start_xmit", "dev=%s queue_mapping=0 "
                "skbaddr=0000000072821ab0 vlan_tagged=0 len=1066" % dev)


class Inflight(unittest.TestCase):
    def judge(self, lines, written=None, decide_ev="decide"):
        with tempfile.NamedTemporaryFile("w", suffix=".trace",
                                         delete=False) as f:
            n = len(lines)
            f.write(HDR % (n, written or n) + "".join(lines))
        self.addCleanup(os.unlink, f.name)
        return inflight.inflight(f.name, 0, "tdmA", 2, CYCLE, WINS,
                                 decide=decide_ev)

    def test_held_in_flight(self):
        # Three frames decided at 2.990-2.992 ms, one batch, the vCPU
        # stalls: the last two leave 0.8 ms after the window's close.
        base = 5 * CYCLE
        tr = [decide(base + 2_990_000 + k * 1000) for k in range(3)]
        tr += [decide(base + 2_993_000, ret="0x0"), batch(base + 2_994_000, 3),
               xmit(base + 2_996_000), xmit(base + 3_800_000),
               xmit(base + 3_806_000), xmit(base + 3_000_000, dev="tdmB")]
        r = self.judge(tr)
        self.assertEqual((r["judged"], r["decisions"], r["far"],
                          r["far_inflight"], r["far_decided_outside"],
                          r["decided_outside"], r["max_batch"]),
                         (3, 3, 2, 2, 0, 0, 3))
        self.assertEqual(r["delay_max_us"], 814)

    def test_decided_outside(self):
        # The CPU was busy in the closed gap (an event at 3.91 ms) before
        # it decided at 4.0 ms: certainly outside.
        base = 7 * CYCLE
        tr = [decide(base + 3_900_000), xmit(base + 3_910_000),
              decide(base + 4_000_000), batch(base + 4_001_000, 1),
              xmit(base + 4_002_000)]
        r = self.judge(tr)
        self.assertEqual((r["far"], r["far_inflight"],
                          r["far_decided_outside"], r["decided_outside"]),
                         (2, 1, 1, 1))

    def test_stall_before_the_probe(self):
        # The last event before the probe was inside the window: the
        # decision may have been too, and a stall moved the probe.
        base = 2 * CYCLE
        tr = [decide(base + 2_980_000), xmit(base + 2_990_000),
              decide(base + 3_600_000), xmit(base + 3_610_000)]
        r = self.judge(tr)
        self.assertEqual((r["far"], r["far_inflight"], r["decided_outside"]),
                         (1, 1, 0))

    def test_batch_time_without_probe(self):
        # Without the probe the batch's own event bounds its decisions.
        base = 3 * CYCLE
        tr = [batch(base + 6_950_000, 2), xmit(base + 6_960_000),
              xmit(base + 7_700_000)]
        r = self.judge(tr, decide_ev=None)
        self.assertEqual((r["far"], r["far_inflight"], r["decisions"]),
                         (1, 1, 2))

    def test_lost_and_orphans(self):
        r = self.judge([xmit(2_000_000)], written=5)
        self.assertEqual((r["lost"], r["orphans"], r["judged"]), (4, 1, 1))


if __name__ == "__main__":
    unittest.main()
