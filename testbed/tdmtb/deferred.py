# SPDX-License-Identifier: GPL-2.0
"""Checks a selftest left for the host: the guest captures, the host judges.

Parsing captures, modelling ports and counting statistics under TCG takes
the guest's slow emulated CPU and its timing, for work that needs no
kernel.  So a selftest (selftests/lib.sh's tdm_judge, tdm_judge_check)
copies what it captured into its judge directory and writes there, in
judge.tsv, what to run on it and what must hold of the results; after the
guest, `testbed/tb judge ROOT` (tools/check) runs them here.

judge.tsv, one record per line, fields separated by tabs:

    permille  N                  outliers allowed per 1000 judged
                                 (lib.sh's OUTLIER_PERMILLE, for allowed())
    judge     KEY TOOL ARG...    KEY's fields are TOOL's key=value lines
    check     KEY TIMING DESC EXPR
                                 EXPR over KEY's fields must be true;
                                 TIMING: "-" (not a timing check), "judge"
                                 or "report" (TDM_TIMING: a miss is a TODO)

TOOL is one of TOOLS: the testbed's commands (tb), the tdmstat selftests'
checks (tdmstat-check), or tdmstat itself, whose first argument is the
build the guest ran (a path under build/us: the sanitizer build reports
there as it would have in the guest).  An argument "@NAME" is NAME in the
judge directory (a file, or the prefix of tdmstat's outputs), and so is
"LABEL=@NAME" (LABEL= kept).  tdmplot draws (no fields).  A tool's
output is key=value lines, or one JSON document, flattened
(tdmtb.flat: nested keys joined with '.').  EXPR is a
Python expression of names (a field, its non-identifier characters as
"_"), integers, strings, arithmetic, comparisons, "and", "or", "not",
and the functions allowed(n) (outliers allowed among n) and f("key")
(any field by its name); another judgement's fields are OTHER.field (a
KEY judged before, an identifier).  Nothing else: a check is data, not
code.

ROOT holds one directory per test, NN-name (selftests/run.sh); each is
one TAP result here, its judgements (a tool that fails is a failure) and
checks indented as '#' lines, then the closing
"N passed, N failed" that tools/check counts.
"""
import ast
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.normpath(os.path.join(HERE, "..", ".."))
TOOLS = {
    "tb": [sys.executable, os.path.join(TOP, "testbed", "tb")],
    "tdmstat-check": [sys.executable, "-S",
                      os.path.join(TOP, "selftests", "tdmstat_check.py")],
    "tdmstat": [],
    "tdmplot": [sys.executable, os.path.join(TOP, "userspace", "tdmplot",
                                             "tdmplot")],
}
BUILDS = os.path.join(TOP, "build", "us")
# A sanitizer's report in a tool's stderr fails it, whatever its exit
# status (selftests/lib.sh's tdm_san_reports looks for the same).
SANITIZER = re.compile(r"ERROR: (Address|Leak)Sanitizer|runtime error:")
TIMINGS = ("-", "judge", "report")


class SpecError(Exception):
    """A judge.tsv that cannot be read."""


def read_spec(path):
    """The records of a judge.tsv: a list of tuples (line number, kind,
    fields).  Raises SpecError with the line for a malformed one."""
    recs = []
    with open(path, encoding="utf-8") as f:
        for no, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line:
                continue
            fields = line.split("\t")
            kind, rest = fields[0], fields[1:]
            if kind == "permille" and len(rest) == 1 and rest[0].isdigit():
                pass
            elif kind == "judge" and len(rest) >= 2 and rest[1] in TOOLS:
                pass
            elif kind == "check" and len(rest) == 4 and rest[1] in TIMINGS:
                pass
            else:
                raise SpecError("%s:%d: bad record %r" % (path, no, line))
            recs.append((no, kind, rest))
    return recs


def parse_kv(text):
    """key=value lines (others ignored), or a JSON document flattened, as
    a dict; integers as int."""
    from .flat import kv_lines, parse_kv as kv_strings
    out = {}
    if text.lstrip().startswith("{"):
        import json
        try:
            text = "\n".join(kv_lines(json.loads(text)))
        except ValueError:
            pass
    for k, v in kv_strings(text).items():
        try:
            out[k] = int(v)
        except ValueError:
            try:
                out[k] = float(v)
            except ValueError:
                out[k] = v
    return out


def run_tool(tool, args, wdir):
    """Run TOOL with ARGS in WDIR ("@NAME": WDIR/NAME).  Returns (fields,
    error or None, stdout)."""
    if tool == "tdmstat":
        prog = os.path.realpath(args[0])
        if not prog.startswith(BUILDS + os.sep) or \
                os.path.basename(prog) != "tdmstat":
            return {}, "tdmstat: %s is not a build under build/us" % args[0], ""
        args = args[1:]
    argv = (TOOLS[tool] or [prog]) + [
        re.sub(r"^(\w+=)?@", lambda m: (m.group(1) or "") + wdir + os.sep, a)
        for a in args]
    env = dict(os.environ)
    # tdmplot: matplotlib's font cache where make tools built it.
    env.setdefault("MPLCONFIGDIR", os.path.join(TOP, "build", "mplconfig"))
    try:
        r = subprocess.run(argv, cwd=wdir, capture_output=True, text=True,
                           timeout=600, env=env)
    except subprocess.TimeoutExpired:
        return {}, "%s %s: no answer in 600 s" % (tool, " ".join(args)), ""
    san = SANITIZER.search(r.stderr)
    if san:
        line = r.stderr[r.stderr.rfind("\n", 0, san.start()) + 1:]
        return parse_kv(r.stdout), "%s: sanitizer report: %s" % (
            tool, line.splitlines()[0]), r.stdout
    if r.returncode != 0:
        why = (r.stderr.strip().splitlines() or ["exit %d" % r.returncode])[-1]
        return parse_kv(r.stdout), "%s %s: %s" % (tool, (args or [""])[0],
                                                   why), r.stdout
    return parse_kv(r.stdout), None, r.stdout


_NODES = (ast.Expression, ast.BoolOp, ast.And, ast.Or, ast.UnaryOp, ast.Not,
          ast.USub, ast.BinOp, ast.Add, ast.Sub, ast.Mult, ast.FloorDiv,
          ast.Mod, ast.Compare, ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt,
          ast.GtE, ast.Name, ast.Load, ast.Constant, ast.Call, ast.Tuple,
          ast.Attribute)


def ident(key):
    """A field's name as an identifier: what is not [A-Za-z0-9_] is "_"."""
    return re.sub(r"\W", "_", key)


class _Judgement:
    """Another judgement's fields, as OTHER.field in a check."""

    def __init__(self, key, fields):
        self._key = key
        self._names = {ident(k): v for k, v in fields.items()}

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        if name not in self._names:
            raise KeyError("%s.%s" % (self._key, name))
        return self._names[name]


def evaluate(expr, fields, permille, others=None):
    """The value of EXPR (see the module's doc) over FIELDS, and OTHERS
    (a dict: key -> fields) as KEY.field.  Raises ValueError for an
    expression outside the language, KeyError for a field that is not
    there."""
    tree = ast.parse(expr, mode="eval")
    for node in ast.walk(tree):
        if not isinstance(node, _NODES):
            raise ValueError("not allowed in a check: %s" % type(node).__name__)
        if isinstance(node, ast.Attribute) and (
                not isinstance(node.value, ast.Name) or
                node.attr.startswith("_")):
            raise ValueError("only KEY.field may be written with a dot")
        if isinstance(node, ast.Call) and (
                not isinstance(node.func, ast.Name) or
                node.func.id not in ("allowed", "f") or node.keywords):
            raise ValueError("only allowed(n) and f(\"key\") may be called")
        if isinstance(node, ast.Constant) and (
                isinstance(node.value, bool) or
                not isinstance(node.value, (int, str))):
            raise ValueError("constants are integers and strings")
    names = {ident(k): v for k, v in fields.items()}

    def field(key):
        return fields[key]

    def allowed(n):
        return int(n) * permille // 1000

    env = {k: _Judgement(k, v) for k, v in (others or {}).items()
           if k.isidentifier()}
    env.update(names, allowed=allowed, f=field)
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id not in env:
            raise KeyError(node.id)
        if isinstance(node, ast.Attribute) and not isinstance(
                env[node.value.id], _Judgement):
            raise ValueError("%s is a field, not a judgement: no %s.%s" % (
                node.value.id, node.value.id, node.attr))
    return eval(compile(tree, "<check>", "eval"), {"__builtins__": {}}, env)


class Result:
    """One test's checks: lines (its '#' lines), failed, todo, passed."""

    def __init__(self):
        self.lines = []
        self.passed = self.failed = self.todo = 0


def judge_test(wdir):
    """Run WDIR's judge.tsv.  Returns a Result."""
    res = Result()
    try:
        recs = read_spec(os.path.join(wdir, "judge.tsv"))
    except (OSError, SpecError) as e:
        res.failed += 1
        res.lines.append("not ok %d - judge.tsv: %s" % (res.failed, e))
        return res
    permille = None
    keys, errors = {}, {}
    n = 0
    for _, kind, rest in recs:
        if kind == "permille":
            permille = int(rest[0])
        elif kind == "judge":
            key, tool, args = rest[0], rest[1], rest[2:]
            keys[key], err, out = run_tool(tool, args, wdir)
            n += 1
            if err:
                errors[key] = err
                res.failed += 1
                res.lines.append("not ok %d - %s: %s" % (n, key, err))
                continue
            shown = " ".join("%s=%s" % kv for kv in list(keys[key].items())[:12])
            if len(keys[key]) > 12:
                shown += " ..."
            res.lines += [line for line in out.splitlines()
                          if line.startswith("# ")][:12]
            res.passed += 1
            res.lines.append("ok %d - %s: %s %s: %s" % (
                n, key, tool, (args or [""])[0], shown or "no fields"))
        else:
            key, timing, desc, expr = rest
            n += 1
            why = None
            if key not in keys:
                why = "no judgement %r before this check" % key
            elif key in errors:
                why = errors[key]
            elif "allowed" in expr and permille is None:
                why = "allowed() without a permille record"
            else:
                try:
                    ok = bool(evaluate(expr, keys[key], permille or 0, keys))
                except KeyError as e:
                    why = "no field %s in %s" % (e, key)
                except (ValueError, SyntaxError, TypeError,
                        ZeroDivisionError) as e:
                    why = "%s: %s" % (expr, e)
            if why is None and ok:
                res.passed += 1
                res.lines.append("ok %d - %s" % (n, desc))
                continue
            detail = why or "false: %s" % _explain(expr, keys[key])
            if why is None and timing == "report":
                res.todo += 1
                res.lines.append("not ok %d - %s # TODO timing "
                                 "(TDM_TIMING=report): %s" % (n, desc, detail))
                continue
            res.failed += 1
            res.lines.append("not ok %d - %s" % (n, desc))
            res.lines.append("  %s" % detail)
    return res


def _explain(expr, fields):
    """EXPR with the values of the fields it names."""
    try:
        used = sorted({node.id for node in ast.walk(ast.parse(expr, mode="eval"))
                       if isinstance(node, ast.Name)})
    except SyntaxError:
        return expr
    names = {ident(k): v for k, v in fields.items()}
    vals = ", ".join("%s=%s" % (u, names[u]) for u in used if u in names)
    return "%s (%s)" % (expr, vals) if vals else expr


def judge_root(root, out=sys.stdout):
    """Judge every test directory under ROOT, in order; TAP on OUT.
    Returns the exit status: 1 if a check failed or ROOT is missing."""
    def say(line):
        out.write(line + "\n")
        out.flush()

    root = os.path.abspath(root)    # the tools run in the test's directory
    if not os.path.isdir(root):
        say("not ok 1 - %s: no such directory (did the guest run?)" % root)
        say("0 passed, 1 failed")
        return 1
    tests = sorted(d for d in os.listdir(root)
                   if os.path.isfile(os.path.join(root, d, "judge.tsv")))
    passed = failed = 0
    for i, d in enumerate(tests, 1):
        name = d.split("-", 1)[1] if re.match(r"\d+-", d) else d
        res = judge_test(os.path.join(root, d))
        for line in res.lines:
            say("#   " + line)
        total = res.passed + res.failed + res.todo
        note = "%d checks judged on the host" % total
        if res.todo:
            note += ", %d timing misses reported only" % res.todo
        if res.failed:
            failed += 1
            say("not ok %d %s # %d of %s" % (i, name, res.failed, note))
        else:
            passed += 1
            say("ok %d %s # %s" % (i, name, note))
    say("1..%d" % len(tests))
    say("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0
