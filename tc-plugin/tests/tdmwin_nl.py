#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Netlink messages for the q_tdmwin.so tests, built from the uapi header.

  tdmwin_nl.py request CAPTURE EXPECTED
      Decode the last RTM_NEWQDISC request in CAPTURE (written by nlfake.so)
      and compare its tdmwin options with EXPECTED, a JSON object of
      attribute name (cycle_time, windows, ...) to value.  Attributes not in
      EXPECTED must be absent.  A value "now+NS@CLOCK" matches a base time
      read from CLOCK (TAI, REALTIME, MONOTONIC, BOOTTIME) plus NS within the
      last 10 s.  Also checks sizes and NLA_F_NESTED on every nest.
  tdmwin_nl.py reply SPEC OUT
      Write an RTM_NEWQDISC dump message for "tc qdisc show" to OUT, from
      SPEC: {"options": {...}, "pending": {...}, "xstats": {...},
      "xstats_len": N}; options and pending use the names above, a value
      {"raw": HEX} gives an attribute's payload as is, and a window of one
      number has no length, of three numbers a class (TCA_TDMWIN_WIN_CLASS); options' "slots" is {"version": V, "slots":
      [{"index": 0, "frames": N, ...}]} (TCA_TDMWIN_SLOT_* names).
  tdmwin_nl.py json-subset ACTUAL EXPECTED
      ACTUAL is `tc -j` output (a list of qdiscs); every key of EXPECTED must
      be in its first qdisc with an equal value.

Prints what differs and exits 1 on a mismatch.
"""
import ctypes
import json
import os
import struct
import sys
import time

# The uapi numbers, read from kmod/uapi/linux/tdmwin.h by the selftests'
# reader.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..', '..', 'selftests'))
from tdm_uapi import (ATTR, ATTR_NAME, FLAGS, FORMATS, SLOT,  # noqa: E402
                      SLOTS, WINDOW, WIN_CLASS, WIN_LENGTH, WIN_OFFSET,
                      xstats_struct)

NLA_F_NESTED = 1 << 15
NLA_TYPE_MASK = ~((1 << 15) | (1 << 14))
RTM_NEWQDISC = 36
TCA_KIND, TCA_OPTIONS, TCA_STATS2 = 1, 2, 7
TCA_STATS_BASIC, TCA_STATS_QUEUE, TCA_STATS_APP = 1, 3, 4

CLOCKS = {'TAI': time.CLOCK_TAI, 'REALTIME': time.CLOCK_REALTIME,
          'MONOTONIC': time.CLOCK_MONOTONIC, 'BOOTTIME': time.CLOCK_BOOTTIME}
XSTATS = xstats_struct()


def attrs(buf):
    """(type with flags, payload) of each attribute in buf."""
    off = 0
    while off + 4 <= len(buf):
        length, typ = struct.unpack_from('=HH', buf, off)
        if length < 4 or off + length > len(buf):
            raise ValueError('bad attribute length %d at %d' % (length, off))
        yield typ, buf[off + 4:off + length]
        off += (length + 3) & ~3


def attr(typ, payload):
    return struct.pack('=HH', 4 + len(payload), typ) + payload + \
        b'\0' * (-len(payload) % 4)


def last_request(path):
    with open(path, 'rb') as f:
        data = f.read()
    msg, off = None, 0
    while off + 16 <= len(data):
        length, typ = struct.unpack_from('=IH', data, off)
        if typ == RTM_NEWQDISC:
            msg = data[off:off + length]
        off += (length + 3) & ~3
    if msg is None:
        raise SystemExit('no RTM_NEWQDISC request in %s' % path)
    return msg[16 + 20:]        # after nlmsghdr and tcmsg


def decode_windows(payload, errors):
    windows = []
    for typ, w in attrs(payload):
        if typ & NLA_TYPE_MASK != WINDOW:
            errors.append('unexpected attribute %d in windows' % typ)
            continue
        if not typ & NLA_F_NESTED:
            errors.append('TCA_TDMWIN_WINDOW without NLA_F_NESTED')
        fields = {}
        for wtyp, v in attrs(w):
            size = 4 if wtyp == WIN_CLASS else 8
            if len(v) != size:
                errors.append('window attribute %d has %d bytes' %
                              (wtyp, len(v)))
                continue
            fields[wtyp] = struct.unpack('=I' if size == 4 else '=Q', v)[0]
        win = [fields.get(WIN_OFFSET), fields.get(WIN_LENGTH)]
        if WIN_CLASS in fields:     # [offset, length, class]
            win.append(fields[WIN_CLASS])
        windows.append(win)
    return windows


def decode_options(payload, errors):
    opts = {}
    for typ, v in attrs(payload):
        name = ATTR_NAME.get(typ & NLA_TYPE_MASK, str(typ))
        if name in opts:
            errors.append('attribute %s twice' % name)
        if name == 'windows':
            if not typ & NLA_F_NESTED:
                errors.append('TCA_TDMWIN_WINDOWS without NLA_F_NESTED')
            opts[name] = decode_windows(v, errors)
        elif name in FLAGS:
            if v:
                errors.append('%s is a flag: %d bytes of payload' %
                              (name, len(v)))
            opts[name] = True
        elif name in FORMATS:
            fmt = '=' + FORMATS[name]
            if len(v) != struct.calcsize(fmt):
                errors.append('%s has %d bytes, expected %d' %
                              (name, len(v), struct.calcsize(fmt)))
                continue
            opts[name] = struct.unpack(fmt, v)[0]
        else:
            errors.append('unexpected attribute %s' % name)
    return opts


def matches(name, want, got, errors):
    if isinstance(want, str) and want.startswith('now+'):
        offset, clock = want[4:].split('@')
        now = time.clock_gettime_ns(CLOCKS[clock]) + int(offset)
        if not isinstance(got, int) or not now - 10 ** 10 <= got <= now:
            errors.append('%s: %r is not %s (expected about %d)' %
                          (name, got, want, now))
    elif want != got:
        errors.append('%s: got %r, expected %r' % (name, got, want))


def cmd_request(capture, expected):
    errors = []
    payload = last_request(capture)
    found = {}
    for typ, v in attrs(payload):
        if typ & NLA_TYPE_MASK == TCA_KIND:
            found['kind'] = v.rstrip(b'\0').decode()
        elif typ & NLA_TYPE_MASK == TCA_OPTIONS:
            if not typ & NLA_F_NESTED:
                errors.append('TCA_OPTIONS without NLA_F_NESTED')
            found['options'] = decode_options(v, errors)
    if found.get('kind') != 'tdmwin':
        errors.append('kind is %r' % found.get('kind'))
    opts = found.get('options', {})
    want = json.loads(expected)
    for name in sorted(set(want) | set(opts)):
        if name not in opts:
            errors.append('%s: missing' % name)
        elif name not in want:
            errors.append('%s: sent (%r) but not given' % (name, opts[name]))
        else:
            matches(name, want[name], opts[name], errors)
    return errors


def encode_options(opts):
    out = b''
    for name, value in opts.items():
        if name == 'pending':
            out += attr(ATTR['pending'] | NLA_F_NESTED,
                        encode_options(value))
        elif name == 'slots':               # {"version": V, "slots": [{...}]}
            body = attr(SLOTS['version'], struct.pack('=I', value['version']))
            for sl in value['slots']:
                fields = b''.join(
                    attr(SLOT[k], struct.pack('=I' if k == 'index' else '=Q', v))
                    for k, v in sl.items())
                body += attr(SLOTS['slot'] | NLA_F_NESTED, fields)
            out += attr(ATTR['slots'] | NLA_F_NESTED, body)
        elif isinstance(value, dict):       # {"raw": "hex payload"}
            out += attr(ATTR[name], bytes.fromhex(value['raw']))
        elif name == 'windows':             # [[offset, length[, class]], ...]
            wins = b''
            for w in value:
                fields = b''.join(attr(t, struct.pack('=Q', v))
                                  for t, v in zip((WIN_OFFSET, WIN_LENGTH), w))
                if len(w) > 2:
                    fields += attr(WIN_CLASS, struct.pack('=I', w[2]))
                wins += attr(WINDOW | NLA_F_NESTED, fields)
            out += attr(ATTR['windows'] | NLA_F_NESTED, wins)
        else:
            out += attr(ATTR[name], struct.pack('=' + FORMATS[name], value))
    return out


def cmd_reply(spec, out):
    spec = json.loads(spec)
    tcm = struct.pack('=BBHiIII', 0, 0, 0, 1, 0x10000, 0xffffffff, 1)
    body = attr(TCA_KIND, b'tdmwin\0')
    opts = dict(spec.get('options', {}))
    if 'pending' in spec:
        opts['pending'] = spec['pending']
    body += attr(TCA_OPTIONS, encode_options(opts))
    if 'xstats' in spec:
        st = XSTATS(**spec['xstats'])
        raw = bytes(st)[:spec.get('xstats_len', ctypes.sizeof(st))]
        raw += b'\0' * (spec.get('xstats_len', 0) - len(raw))
        stats = attr(TCA_STATS_BASIC, struct.pack('=QI4x', 6543210, 4567))
        stats += attr(TCA_STATS_QUEUE, struct.pack('=5I', 0, 0, 3, 0, 0))
        stats += attr(TCA_STATS_APP, raw)
        body += attr(TCA_STATS2 | NLA_F_NESTED, stats)
    msg = tcm + body
    hdr = struct.pack('=IHHII', 16 + len(msg), RTM_NEWQDISC, 2, 0, 0)
    with open(out, 'wb') as f:
        f.write(hdr + msg)
    return []


def cmd_json_subset(actual, expected):
    with open(actual) as f:
        qdisc = json.load(f)[0]
    errors = []
    for key, want in json.loads(expected).items():
        if key not in qdisc:
            errors.append('%s: missing' % key)
        elif qdisc[key] != want:
            errors.append('%s: got %s\n  expected %s' %
                          (key, json.dumps(qdisc[key], sort_keys=True),
                           json.dumps(want, sort_keys=True)))
    return errors


def main():
    cmds = {'request': cmd_request, 'reply': cmd_reply,
            'json-subset': cmd_json_subset}
    if len(sys.argv) != 4 or sys.argv[1] not in cmds:
        sys.exit(__doc__)
    errors = cmds[sys.argv[1]](sys.argv[2], sys.argv[3])
    for e in errors:
        print(e)
    sys.exit(1 if errors else 0)


if __name__ == '__main__':
    main()
