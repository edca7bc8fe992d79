# SPDX-License-Identifier: GPL-2.0
"""The numbers of the project's uapi headers, read from the headers.

kmod/uapi/linux/tdmwin.h and tdmrx.h are the contract with the kernel; the
selftests (tdmwin_util.py) and the tc plugin's tests
(tc-plugin/tests/tdmwin_nl.py) take attribute numbers and constants from
them here instead of copying them.  Standard library only (os; re and ctypes
only for xstats_struct), as tdmwin_util.py runs with python -S in the guest.

  ATTR        {name: number} of TCA_TDMWIN_* (cycle_time, base_time, ...)
  ATTR_NAME   {number: name}
  WINDOW      TCA_TDMWIN_WINDOW, the nest per window in TCA_TDMWIN_WINDOWS
  WIN_OFFSET, WIN_LENGTH, WIN_CLASS   the TCA_TDMWIN_WIN_* inside it
  SLOTS, SLOT {name: number} of TCA_TDMWIN_SLOTS_* (version, slot) and of
              TCA_TDMWIN_SLOT_* (index, frames, ...), the counters per slot
  FORMATS     {name: struct format} of each attribute that carries a number
  TDMRX       {name: number} of tdmrx.h's numeric #defines (TDM_PKT_MAGIC,
              TDM_PKT_VERSION, TDM_PKT_F_END, ...)
  xstats_struct()   struct tc_tdmwin_xstats as a ctypes.Structure
"""
import os

UAPI = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                    "..", "kmod", "uapi", "linux")

# Plain string work, no re: compiling patterns would cost the guest's
# python -S more than the reading.


def header(name):
    """kmod/uapi/linux/NAME.h without its comments."""
    with open(os.path.join(UAPI, name + ".h")) as f:
        text = f.read()
    out, pos = [], 0
    while True:
        start = text.find("/*", pos)
        if start < 0:
            return "".join(out) + text[pos:]
        out.append(text[pos:start])
        pos = text.index("*/", start) + 2


def enums(text):
    """Each enum of text as {name: value} (the headers give no values)."""
    found, pos = [], 0
    while True:
        start = text.find("enum {", pos)
        if start < 0:
            return found
        pos = text.index("};", start)
        names = (n.strip() for n in text[start + 6:pos].split(","))
        found.append({n: i for i, n in enumerate(n for n in names if n)})


def enum_with(text, name):
    return next(e for e in enums(text) if name in e)


def defines(text):
    """Each #define of text whose value is one integer, as {name: value}."""
    found = {}
    for line in text.splitlines():
        words = line.split()
        if len(words) != 3 or words[0] != "#define":
            continue
        try:
            found[words[1]] = int(words[2].rstrip("uUlL"), 0)
        except ValueError:
            pass
    return found


TDMWIN = header("tdmwin")
ATTR = {n[len("TCA_TDMWIN_"):].lower(): v
        for n, v in enum_with(TDMWIN, "TCA_TDMWIN_CYCLE_TIME").items()}
ATTR_NAME = {v: n for n, v in ATTR.items()}
WINDOW = enum_with(TDMWIN, "TCA_TDMWIN_WINDOW")["TCA_TDMWIN_WINDOW"]
WIN_OFFSET = enum_with(TDMWIN, "TCA_TDMWIN_WIN_OFFSET")["TCA_TDMWIN_WIN_OFFSET"]
WIN_LENGTH = enum_with(TDMWIN, "TCA_TDMWIN_WIN_OFFSET")["TCA_TDMWIN_WIN_LENGTH"]
WIN_CLASS = enum_with(TDMWIN, "TCA_TDMWIN_WIN_OFFSET")["TCA_TDMWIN_WIN_CLASS"]

SLOTS = {n[len("TCA_TDMWIN_SLOTS_"):].lower(): v
         for n, v in enum_with(TDMWIN, "TCA_TDMWIN_SLOTS_VERSION").items()}
SLOT = {n[len("TCA_TDMWIN_SLOT_"):].lower(): v
        for n, v in enum_with(TDMWIN, "TCA_TDMWIN_SLOT_FRAMES").items()}

# Payload format of each TCA_TDMWIN_* attribute that carries a number.
FORMATS = {
    "cycle_time": "Q", "base_time": "q", "guard": "I", "link_speed": "I",
    "clockid": "i", "bypass_prios": "I", "bypass_ptp": "B", "hold": "B",
    "plan_version": "I", "limit": "I", "eff_link_speed": "I",
    "wire_clock": "B", "txtime": "B", "lease": "Q", "lease_left": "q",
    "unconfirmed": "B", "confirm": "I", "abort": "I",
}

# Attributes without payload (NLA_FLAG).
FLAGS = ("renew",)

TDMRX = defines(header("tdmrx"))


def xstats_struct():
    import ctypes
    import re
    body = re.search(r"struct tc_tdmwin_xstats\s*\{(.*?)\};", TDMWIN,
                     re.S).group(1)
    ctypes_of = {"__u64": ctypes.c_uint64, "__s64": ctypes.c_int64,
                 "__u32": ctypes.c_uint32, "__s32": ctypes.c_int32}
    fields = [(name, ctypes_of[t])
              for t, name in re.findall(r"(__[us]\d+)\s+(\w+)\s*;", body)]
    return type("tc_tdmwin_xstats", (ctypes.Structure,),
                {"_fields_": fields})
