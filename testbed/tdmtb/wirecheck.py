# SPDX-License-Identifier: GPL-2.0
"""The switch testbed's limits (testbed/wire.sh tdm_switch,
Documentation/testbed.rst): can a plan work on it?"""

# The rate: the guest forwards about 544 Mbit/s of 1400-byte UDP over one
# veth hop under TCG with pfifo (../shared/reference/testbed.md); a frame
# here crosses four hops, two bridges and two serializers, and 8 senders
# with a tap share the guest's two vCPUs: 100 Mbit/s leaves a margin of
# about 1.4 over a quarter of the one-hop figure.
WIRE_MAX_MBIT = 100
# The shortest window: TCG's timer noise is hundreds of microseconds, which
# must stay small against a window: at 2 ms it is already a quarter.
WIRE_MIN_WINDOW_NS = 2000000
WIRE_FRAME_EXTRA = 66           # testbed/wire.sh WIRE_FRAME_EXTRA
WIRE_MAX_SENDERS = 32


def frame_ns(size, mbit):
    """A frame of SIZE bytes of UDP payload on a wire of MBIT Mbit/s, ns."""
    return (size + WIRE_FRAME_EXTRA) * 8000 // mbit


def wire_check(senders, window, dead, guard, size, mbit, buffer):
    """None if a plan of SENDERS windows of WINDOW ns, each followed by
    DEAD ns, with GUARD, for frames of SIZE bytes of UDP payload, can work
    on a testbed wire of MBIT Mbit/s with a switch buffer of BUFFER frames;
    else the reason."""
    if not 1 <= senders <= WIRE_MAX_SENDERS:
        return "senders must be 1..%d, not %d" % (WIRE_MAX_SENDERS, senders)
    if not 1 <= mbit <= WIRE_MAX_MBIT:
        return ("a wire of %d Mbit/s: the emulator sustains at most %d Mbit/s "
                "through the NICs and the switch port (1..%d)"
                % (mbit, WIRE_MAX_MBIT, WIRE_MAX_MBIT))
    if buffer < 1:
        return "the switch port's buffer must hold at least one frame"
    if dead < 0 or guard < 0:
        return "dead time and guard cannot be negative"
    frame = frame_ns(size, mbit)
    if window < WIRE_MIN_WINDOW_NS:
        return ("a window of %d us is too short for this testbed: TCG's timer "
                "noise (hundreds of us) would be a large part of it; at least "
                "%d us" % (window // 1000, WIRE_MIN_WINDOW_NS // 1000))
    if window - guard < frame:
        return ("a window of %d us less the guard of %d us cannot carry one "
                "frame: a frame of %d bytes takes %d us at %d Mbit/s"
                % (window // 1000, guard // 1000, size + WIRE_FRAME_EXTRA,
                   frame // 1000, mbit))
    return None


def plan_line(senders, window, dead, guard, size, mbit):
    """What wire-check prints for a plan that works."""
    frame = frame_ns(size, mbit)
    return ("cycle_ns=%d frame_ns=%d frames_per_window=%d"
            % (senders * (window + dead), frame, (window - guard) // frame))
