# SPDX-License-Identifier: GPL-2.0
"""JSON as key=value: nested keys joined with '.', a list's length as
KEY.len, null/true/false spelled as JSON does.  The selftests' `flat`
and `json` commands (selftests/tdmwin_util.py, in the guest) and the
checks judged on the host (tdmtb.deferred) read tc's and tdmstat's JSON
through it; parse_kv() reads key=value lines back (testbed/tb's output,
the sweep's point metadata)."""


def flatten(obj, prefix, out):
    """Add OBJ's leaves to the dict OUT, under the key PREFIX (a list of
    the keys above it), values as strings."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            flatten(v, prefix + [str(k)], out)
    elif isinstance(obj, list):
        out[".".join(prefix) + ".len"] = str(len(obj))
        for i, v in enumerate(obj):
            flatten(v, prefix + [str(i)], out)
    else:
        if obj is None:
            val = "null"
        elif obj is True:
            val = "true"
        elif obj is False:
            val = "false"
        else:
            val = str(obj)
        out[".".join(prefix)] = val.replace("\n", " ")


def parse_kv(text):
    """key=value lines as a dict of strings; '#' lines and lines without
    '=' are passed over."""
    out = {}
    for line in text.splitlines():
        if line.startswith("#") or "=" not in line:
            continue
        k, v = line.split("=", 1)
        out[k.strip()] = v
    return out


def kv_lines(obj):
    """OBJ flattened, as sorted key=value lines."""
    out = {}
    flatten(obj, [], out)
    return ["%s=%s" % (k.lstrip("."), out[k]) for k in sorted(out)]
