#!/usr/bin/env python3
"""Check the bundled ContractEval sample suite for internal consistency.

Usage::

    specbench contract validate-suite [--root DIR] [--timeout SECONDS] [-v]

For every task it checks the shape of the three data files (fields, ids, the
contract block against ``contracts``, the prompts, the CVT bookkeeping) and then,
in a separate Python process per task with a time limit, that

* the reference with contracts runs without raising on every ``base_input`` and
  ``plus_input`` and returns what the canonical solution returns (``atol``
  respected), also with tuple arguments for the entry points in ``TUPLE_ARGS``;
* the examples in the prompt hold (doctest for HumanEval style, the ``assert``
  line for MBPP style);
* every CVT and every EAS example makes the reference raise the contract's
  ``AssertionError("invalid inputs")``;
* each assert run alone fires exactly on the asserts listed in a CVT's
  ``fired_individually`` (and on the assert an EAS example is filed under).

Problems go to stderr, one per line; the last line on stdout is a one-line
summary.  The exit status is 0 when nothing is wrong, 1 otherwise.
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path
from ....data.bundled import bundled_suite

HERE = Path(__file__).resolve().parent
# The bundled suite these scripts write and check (the repository's benchmarks/contract/).
SUITE = bundled_suite("contract")
CONTRACTEVAL = Path("contracteval") / "contracteval_rebuilt.jsonl"
HUMANEVAL = Path("evalplus") / "HumanEvalPlus.jsonl"
MBPP = Path("evalplus") / "MbppPlus.jsonl"

# Entry points whose arguments EvalPlus would pass as tuples although JSON
# stores lists (argument positions).  Their contracts accept both.
TUPLE_ARGS = {"max_step": (0,)}

CE_FIELDS = [
    "task_id", "entry_point", "original_prompt", "contract", "contracts",
    "reference_with_contracts", "cs_system", "cs_user", "eas_system", "eas_user",
    "contract_aware_description", "eas_examples", "cvts",
]
CVT_FIELDS = ["input", "intended_violated", "fired_individually", "smt_section", "case_index"]
HE_FIELDS = ["task_id", "prompt", "entry_point", "canonical_solution", "test", "contract",
             "base_input", "atol", "plus_input"]
MBPP_FIELDS = ["task_id", "prompt", "entry_point", "canonical_solution", "base_input", "atol",
               "plus_input", "contract", "assertion"]
MARKER = " # $_CONTRACT_$"
CONTRACT_LINE = re.compile(r'^(\s+)(assert .+), "invalid inputs"' + re.escape(MARKER) + r"$")
MIN_CVTS, MAX_CVTS = 3, 8
MIN_PLUS, MAX_PLUS = 10, 30


# --------------------------------------------------------------------------- child

def _probe(job: dict) -> dict:
    """Run one task's programs on its inputs.  Runs in a child process."""
    import copy
    import doctest
    import inspect
    import io
    import signal

    class _Timeout(BaseException):
        pass

    armed = [False]

    def _alarm(signum, frame):
        if armed[0]:
            raise _Timeout()

    signal.signal(signal.SIGALRM, _alarm)
    per_call = job["per_call_timeout"]

    def call(fn, *args, **kwargs):
        """(outcome, value): outcome is "ok", "AssertionError" or another exception name."""
        # The timer keeps firing every 0.1 s after the deadline, so code that
        # swallows the first _Timeout (a bare except, doctest) is still stopped.
        armed[0] = True
        signal.setitimer(signal.ITIMER_REAL, per_call, 0.1)
        try:
            return "ok", fn(*args, **kwargs)
        except AssertionError as exc:
            return "AssertionError", str(exc)
        except _Timeout:
            return "Timeout", None
        except Exception as exc:  # noqa: BLE001 - reported, not handled
            return type(exc).__name__, str(exc)
        finally:
            armed[0] = False
            signal.setitimer(signal.ITIMER_REAL, 0)

    def load(src: str, name: str) -> dict:
        ns: dict = {"__name__": name}
        exec(compile(src, f"<{name}>", "exec"), ns)
        return ns

    ep = job["entry_point"]
    out: dict = {"problems": []}
    problems = out["problems"]
    try:
        ref_ns = load(job["reference_with_contracts"], "reference_with_contracts")
        can_ns = load(job["canonical_program"], "canonical")
        ref, can = ref_ns[ep], can_ns[ep]
    except Exception as exc:  # noqa: BLE001
        problems.append(f"programs do not load: {type(exc).__name__}: {exc}")
        return out
    params = list(inspect.signature(ref).parameters)
    out["params"] = params

    # Each contract assert alone, in a function with the entry point's
    # parameters, defined in the reference program's globals.
    singles = {}
    for key, line in job["assert_lines"].items():
        src = f"def __single__({', '.join(params)}):\n    {line}\n"
        ns = dict(ref_ns)
        exec(compile(src, f"<{key}>", "exec"), ns)
        singles[key] = ns["__single__"]

    def fired(inp: dict) -> list:
        return [k for k, fn in singles.items() if call(fn, **copy.deepcopy(inp))[0] == "AssertionError"]

    def same(a, b, atol) -> bool:
        if isinstance(a, float) or isinstance(b, float):
            if isinstance(a, (int, float)) and isinstance(b, (int, float)):
                return abs(a - b) <= atol if atol else a == b
        if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and type(a) is type(b):
            return len(a) == len(b) and all(same(x, y, atol) for x, y in zip(a, b))
        if isinstance(a, dict) and isinstance(b, dict):
            return a.keys() == b.keys() and all(same(a[k], b[k], atol) for k in a)
        return type(a) is type(b) and a == b

    # Functional inputs: must satisfy the contracts and agree with the canonical solution.
    tuple_pos = job["tuple_args"]
    out["functional"] = 0
    for kind in ("base_input", "plus_input"):
        for i, args in enumerate(job[kind]):
            out["functional"] += 1
            where = f"{kind}[{i}]"
            if not isinstance(args, list) or len(args) != len(params):
                problems.append(f"{where}: expected a list of {len(params)} arguments, got {args!r}")
                continue
            variants = [args]
            if tuple_pos:
                variants.append([tuple(a) if p in tuple_pos else a for p, a in enumerate(args)])
            for v in variants:
                got_kind, got = call(ref, *copy.deepcopy(v))
                exp_kind, exp = call(can, *copy.deepcopy(v))
                if got_kind != "ok":
                    problems.append(f"{where}: reference with contracts raised {got_kind}: {got} on {v!r}")
                elif exp_kind != "ok":
                    problems.append(f"{where}: canonical solution raised {exp_kind}: {exp} on {v!r}")
                elif not same(got, exp, job["atol"]):
                    problems.append(f"{where}: reference gives {got!r}, canonical gives {exp!r}")

    # Examples in the prompt.
    for label, ns in (("canonical", can_ns), ("reference_with_contracts", ref_ns)):
        if job["style"] == "humaneval":
            doc = can_ns[ep].__doc__ or ""  # the prompt's docstring
            test = doctest.DocTestParser().get_doctest(doc, dict(ns), ep, None, 0)
            if not test.examples:
                problems.append("prompt has no >>> example")
            buf = io.StringIO()
            kind, res = call(doctest.DocTestRunner(verbose=False).run, test, out=buf.write)
            if kind != "ok":
                problems.append(f"prompt examples on {label}: {kind}")
            elif res.failed:
                problems.append(f"prompt example fails on {label}: {' '.join(buf.getvalue().split())[:300]}")
        else:
            lines = [ln for ln in job["prompt"].splitlines() if ln.startswith("assert ")]
            if len(lines) != 1:
                problems.append(f"prompt should hold exactly one assert example, has {len(lines)}")
            for ln in lines:
                kind, val = call(exec, ln, dict(ns))
                if kind != "ok":
                    problems.append(f"prompt example {ln!r} fails on {label}: {kind} {val}")

    def rejects(inp) -> str | None:
        if not isinstance(inp, dict) or sorted(inp) != sorted(params):
            return f"input keys {sorted(inp) if isinstance(inp, dict) else inp!r} != parameters {params}"
        kind, val = call(ref, **copy.deepcopy(inp))
        if kind != "AssertionError":
            return f"reference with contracts gave {kind} ({val!r}), not AssertionError"
        if val != "invalid inputs":
            return f"AssertionError {val!r} is not a contract's"
        return None

    out["cvts"] = []
    for inp in job["cvts"]:
        out["cvts"].append({"problem": rejects(inp), "fired": fired(inp) if isinstance(inp, dict) else []})
    out["eas"] = {}
    for key, inp in job["eas"].items():
        out["eas"][key] = {"problem": rejects(inp), "fired": fired(inp) if isinstance(inp, dict) else []}
    return out


def _child_main() -> None:
    job = json.loads(sys.stdin.read())
    print(json.dumps(_probe(job)))


# -------------------------------------------------------------------------- parent

def contract_lines(contract: str) -> dict:
    """``assert_k`` -> the assert statement (with its message, without the marker)."""
    lines = [ln for ln in contract.splitlines() if ln.strip()]
    result = {}
    for k, ln in enumerate(lines):
        m = CONTRACT_LINE.match(ln)
        if not m:
            raise ValueError(f"not a contract line: {ln!r}")
        result[f"assert_{k}"] = f'{m.group(2)}, "invalid inputs"'
    return result


def upstream_contracts(contract: str) -> dict:
    """The ``contracts`` field as upstream spells it: the final closing quote is dropped."""
    return {k: v[:-1] for k, v in contract_lines(contract).items()}


def smt_section(keys: list, violated: list) -> str:
    satisfied = [k for k in keys if k not in violated]
    return f"satisfied_{';'.join(satisfied)}, violated_{';'.join(k for k in keys if k in violated)}"


def canonical_program(fp: dict, style: str) -> str:
    return fp["prompt"] + fp["canonical_solution"] if style == "humaneval" else fp["canonical_solution"]


def make_job(ce: dict, fp: dict, style: str, per_call_timeout: float) -> dict:
    return {
        "task_id": ce["task_id"],
        "entry_point": ce["entry_point"],
        "style": style,
        "prompt": fp["prompt"],
        "reference_with_contracts": ce["reference_with_contracts"],
        "canonical_program": canonical_program(fp, style),
        "assert_lines": contract_lines(ce["contract"]),
        "base_input": fp["base_input"],
        "plus_input": fp["plus_input"],
        "atol": fp["atol"],
        "tuple_args": list(TUPLE_ARGS.get(ce["entry_point"], ())),
        "cvts": [c["input"] for c in ce["cvts"]],
        "eas": {k: v for k, v in ce["eas_examples"].items() if v is not None},
        "per_call_timeout": per_call_timeout,
    }


def run_probe(job: dict, timeout: float) -> dict:
    """Run :func:`_probe` on ``job`` in a fresh, isolated interpreter."""
    proc = subprocess.run(
        [sys.executable, "-I", str(Path(__file__).resolve()), "--child"],
        input=json.dumps(job), capture_output=True, text=True, timeout=timeout,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"child exited {proc.returncode}: {proc.stderr.strip()[-500:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def read_jsonl(path: Path, problems: list) -> list:
    rows = []
    try:
        with open(path, encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    problems.append(f"{path}:{n}: malformed JSON: {exc}")
    except OSError as exc:
        problems.append(f"{path}: cannot read: {exc}")
    return rows


def static_checks(ce: dict, fp: dict, style: str, report) -> bool:
    """Check one task's records; False when they are too broken to run."""
    if list(ce) != CE_FIELDS:
        report(f"contracteval fields {list(ce)} != {CE_FIELDS}")
        return False
    want = HE_FIELDS if style == "humaneval" else MBPP_FIELDS
    if list(fp) != want:
        report(f"evalplus fields {list(fp)} != {want}")
        return False
    ep = ce["entry_point"]
    if fp["entry_point"] != ep:
        report(f"entry_point differs: {ep!r} vs {fp['entry_point']!r}")
    if ce["original_prompt"] != fp["prompt"]:
        report("original_prompt differs from the evalplus prompt")
    if ce["contract"] != fp["contract"]:
        report("contract differs between contracteval and evalplus")
    try:
        lines = contract_lines(ce["contract"])
    except ValueError as exc:
        report(str(exc))
        return False
    if not ce["contract"].startswith("\n") or not ce["contract"].endswith("\n"):
        report("contract block should start and end with a newline")
    if ce["contracts"] != upstream_contracts(ce["contract"]):
        report("contracts does not match the contract block (upstream spelling)")
    ref = ce["reference_with_contracts"]
    body = [ln for ln in ce["contract"].splitlines() if ln.strip()]
    pos = -1
    for ln in body:
        nxt = ref.find(ln + "\n", pos + 1)
        if nxt < 0:
            report(f"reference_with_contracts lacks contract line {ln.strip()!r} (in order)")
            break
        pos = nxt
    if f"def {ep}(" not in ref:
        report("reference_with_contracts does not define the entry point")
    if '"""' in ref:
        report("reference_with_contracts should not carry the docstring")
    if style == "humaneval":
        if fp["test"] != "":
            report("HumanEval-style test field should be empty")
        if f"def {ep}(" not in fp["prompt"] or fp["canonical_solution"].lstrip().startswith("def "):
            report("HumanEval style: prompt = signature + docstring, canonical_solution = body")
    else:
        if fp["assertion"] != "":
            report("MBPP-style assertion field should be empty")
        if not fp["prompt"].startswith('"""') or f"def {ep}(" not in fp["canonical_solution"]:
            report("MBPP style: prompt = docstring, canonical_solution = the whole function")
    cad = ce["contract_aware_description"]
    if cad == ce["original_prompt"]:
        report("contract_aware_description adds nothing to the prompt")
    for f in ("cs_user", "eas_user"):
        if cad not in ce[f] or f"{ep}" not in ce[f]:
            report(f"{f} does not contain the contract-aware description and the entry point")
    for f in ("cs_system", "eas_system"):
        if not isinstance(ce[f], str) or len(ce[f].strip()) < 40:
            report(f"{f} is missing")
    if sorted(ce["eas_examples"]) != sorted(lines):
        report(f"eas_examples keys {sorted(ce['eas_examples'])} != {sorted(lines)}")
    for k, v in ce["eas_examples"].items():
        shown = f"{k}:\n>>> {ep}(" if v is not None else f"{k}: no example"
        if shown not in ce["eas_user"]:
            report(f"eas_user does not show {k}")
    cvts = ce["cvts"]
    if not isinstance(cvts, list) or not (len(cvts) == 0 or MIN_CVTS <= len(cvts) <= MAX_CVTS):
        report(f"{len(cvts)} CVTs; expected 0 or {MIN_CVTS}-{MAX_CVTS}")
    inputs = []
    seen_index: dict = {}
    keys = list(lines)
    for i, c in enumerate(cvts):
        w = f"cvts[{i}]"
        if list(c) != CVT_FIELDS:
            report(f"{w} fields {list(c)} != {CVT_FIELDS}")
            continue
        iv, fi = c["intended_violated"], c["fired_individually"]
        if not iv or any(k not in lines for k in iv) or iv != sorted(set(iv), key=keys.index):
            report(f"{w}: intended_violated {iv} is not an ordered, non-empty list of assert keys")
        if not fi or any(k not in lines for k in fi) or fi != sorted(set(fi), key=keys.index):
            report(f"{w}: fired_individually {fi} is not an ordered, non-empty list of assert keys")
        if c["smt_section"] != smt_section(keys, iv):
            report(f"{w}: smt_section {c['smt_section']!r} != {smt_section(keys, iv)!r}")
        sec = c["smt_section"]
        if not isinstance(c["case_index"], int) or c["case_index"] in seen_index.get(sec, set()):
            report(f"{w}: case_index {c['case_index']!r} is not a fresh int within its smt_section")
        seen_index.setdefault(sec, set()).add(c["case_index"])
        if json.loads(json.dumps(c["input"])) != c["input"]:
            report(f"{w}: input does not survive a JSON round trip")
        if c["input"] in inputs:
            report(f"{w}: duplicate input {c['input']!r}")
        inputs.append(c["input"])
    for k, v in ce["eas_examples"].items():
        if v is not None and v in inputs:
            report(f"eas_examples[{k}] is also a CVT (EAS examples are held out)")
    for kind in ("base_input", "plus_input"):
        if not isinstance(fp[kind], list) or not all(isinstance(a, list) for a in fp[kind]):
            report(f"{kind} must be a list of argument lists")
    if not fp["base_input"]:
        report("base_input is empty")
    if not MIN_PLUS <= len(fp["plus_input"]) <= MAX_PLUS:
        report(f"{len(fp['plus_input'])} plus inputs; expected {MIN_PLUS}-{MAX_PLUS}")
    if not isinstance(fp["atol"], (int, float)) or isinstance(fp["atol"], bool) or fp["atol"] < 0:
        report(f"atol {fp['atol']!r} is not a non-negative number")
    return isinstance(ce["cvts"], list) and all(isinstance(c, dict) and "input" in c for c in ce["cvts"])


def runtime_checks(ce: dict, res: dict, report) -> None:
    for p in res["problems"]:
        report(p)
    for i, (c, r) in enumerate(zip(ce["cvts"], res.get("cvts", []))):
        if r["problem"]:
            report(f"cvts[{i}] {c['input']!r}: {r['problem']}")
        if r["fired"] != c.get("fired_individually"):
            report(f"cvts[{i}] {c['input']!r}: asserts firing alone are {r['fired']}, "
                   f"fired_individually says {c.get('fired_individually')}")
    for k, r in res.get("eas", {}).items():
        if r["problem"]:
            report(f"eas_examples[{k}]: {r['problem']}")
        if k not in r["fired"]:
            report(f"eas_examples[{k}] does not make {k} fire alone (fires: {r['fired']})")


def main(argv=None) -> int:
    if argv is None and sys.argv[1:] == ["--child"]:
        _child_main()
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", type=Path, default=SUITE, help="suite root (default: the bundled benchmarks/contract/)")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per task process")
    ap.add_argument("--per-call-timeout", type=float, default=5.0, help="seconds per call")
    ap.add_argument("-v", "--verbose", action="store_true", help="one line per task")
    args = ap.parse_args(argv)

    problems: list = []
    ce_rows = read_jsonl(args.root / CONTRACTEVAL, problems)
    fp_rows = {}
    for style, rel in (("humaneval", HUMANEVAL), ("mbpp", MBPP)):
        for row in read_jsonl(args.root / rel, problems):
            tid = row.get("task_id")
            if tid in fp_rows:
                problems.append(f"{rel}: duplicate task_id {tid!r}")
            fp_rows[tid] = (style, row)
    ids = [r.get("task_id") for r in ce_rows]
    if len(set(ids)) != len(ids):
        problems.append(f"{CONTRACTEVAL}: duplicate task ids")
    for extra in sorted(set(fp_rows) - set(ids), key=str):
        problems.append(f"{extra}: in evalplus but not in {CONTRACTEVAL}")

    n_func = n_cvt = n_eas = n_empty = 0
    styles = {"humaneval": 0, "mbpp": 0}
    for ce in ce_rows:
        tid = ce.get("task_id")
        before = len(problems)

        def report(msg, tid=tid):
            problems.append(f"{tid}: {msg}")

        if tid not in fp_rows:
            report("no evalplus record")
            continue
        style, fp = fp_rows[tid]
        expect = "humaneval" if str(tid).startswith("HumanEval") else "mbpp"
        if style != expect:
            report(f"id says {expect} style but the record is in the {style} file")
        styles[style] += 1
        if static_checks(ce, fp, style, report):
            try:
                res = run_probe(make_job(ce, fp, style, args.per_call_timeout), args.timeout)
            except subprocess.TimeoutExpired:
                report(f"task process exceeded {args.timeout}s")
            except Exception as exc:  # noqa: BLE001
                report(f"task process failed: {exc}")
            else:
                runtime_checks(ce, res, report)
                n_func += res.get("functional", 0)
        n_cvt += len(ce.get("cvts", []))
        n_empty += not ce.get("cvts")
        n_eas += sum(v is not None for v in ce.get("eas_examples", {}).values())
        if args.verbose:
            status = "ok" if len(problems) == before else f"{len(problems) - before} problem(s)"
            print(f"  {tid:<16} {len(ce.get('cvts', [])):>2} CVTs  {status}")

    for p in problems:
        print(p, file=sys.stderr)
    summary = (f"{len(ce_rows)} tasks ({styles['humaneval']} HumanEval-style, {styles['mbpp']} MBPP-style), "
               f"{n_func} functional inputs, {n_cvt} CVTs ({n_empty} task(s) without), {n_eas} EAS examples")
    if problems:
        print(f"contract sample suite: FAILED, {len(problems)} problem(s); {summary}")
        return 1
    print(f"contract sample suite: OK; {summary}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
