# SPDX-License-Identifier: GPL-2.0
"""tdmtb: the switch testbed's host-side models and judges (standard
library only; the guest's python -S imports its plan check and JSON
flattening too, so nothing here is imported before a function needs it).

  pcap       read and write pcap files; UDP payloads, the selftests'
             sequence numbers, tdmgen's records
  judge      where captured frames fall against the windows of a plan
             (tb pcap), and departures around an instant (tb span)
  idealport  the switch testbed without the emulator's timing: perfect
             wires into a port of BUFFER frames
  portdrops  the switch port's drops told apart: collisions of senders,
             or one sender's frames bunched by the emulator
  wirecheck  the testbed's limits: can a plan work on it?
  flat       JSON as key=value lines
  deferred   the checks selftests leave for the host (tb judge)
  tap        the one Python TAP writer of the project's host tests

Documentation/testbed.rst describes the testbed; testbed/README the
layout.
"""
