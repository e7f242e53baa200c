"""Validate the JML checker on SpecGenBench's 120 oracle programs and print figures.

    python -m pytest_specbench.benchmarks.speceval.tools.validate_jml [DATA_ROOT] [--mutants N] [--only A,B]

DATA_ROOT defaults to ``../shared/datasets/specgenbench`` (from the project
root).  For each program: translate the oracle, build the driver from its
``daikon/`` copy (:mod:`pytest_specbench.jml.inputs`), compile, run every call; the ground truth
holds when no in-domain call fails.  Then mutants of the oracle's
postconditions, loop invariants and asserts (replace a variable, flip a
relational operator, swap ``\\forall``/``\\exists``) are checked on the same
calls; a mutant is caught when any call does not hold.  Printed: translated and
compiled counts, ground-truth failures with their reasons, the mutation catch
rate per operator, calls per second per JVM and the end-to-end time.
"""
from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path

from ....jml import Clause, JmlChecker, TranslationError, driver_from_daikon, translate
from ....jml import expr as X

MUTATED_KINDS = ("ensures", "maintaining", "assert")
MAX_NOT_COMPILING = 4  # further candidates tried per operator when a mutant does not compile
_FLIP = {"<": ">=", ">=": "<", ">": "<=", "<=": ">", "==": "!=", "!=": "=="}


def _sites(e: X.Node, pred) -> list[X.Node]:
    return [n for n in X.walk(e) if pred(n)]


def _replace_node(e: X.Node, target: X.Node, new: X.Node) -> X.Node:
    done = [False]

    def go(n: X.Node) -> X.Node:
        if n is target and not done[0]:
            done[0] = True
            return new
        changes = {}
        for k, v in vars(n).items():
            if isinstance(v, X.Node):
                changes[k] = go(v)
            elif isinstance(v, tuple) and any(isinstance(x, X.Node) for x in v):
                changes[k] = tuple(go(x) if isinstance(x, X.Node) else x for x in v)
        return replace(n, **changes) if changes else n

    return go(e)


def mutants(source: str, clauses: list[Clause], rng: random.Random) -> dict[str, list[tuple[str, str]]]:
    """{operator: [(description, mutated source)] in a seeded random order} for ``source``'s clauses."""
    out: dict[str, list[tuple[str, str]]] = {}
    cands = [c for c in clauses if c.kind in MUTATED_KINDS and c.expr is not None and "span" in c.extra]
    by_op: dict[str, list[tuple[Clause, X.Node, X.Node]]] = {"variable": [], "relational": [], "quantifier": []}
    for c in cands:
        e = c.expr
        names = sorted(X.free_names(e))
        for n in _sites(e, lambda n: isinstance(n, X.Name) and n.name in names):
            for other in names:
                if other != n.name:
                    by_op["variable"].append((c, n, X.Name(other)))
        for n in _sites(e, lambda n: isinstance(n, X.Result)):
            for other in names:
                by_op["variable"].append((c, n, X.Name(other)))
        for n in _sites(e, lambda n: isinstance(n, X.Binary) and n.op in _FLIP):
            by_op["relational"].append((c, n, X.Binary(_FLIP[n.op], n.left, n.right)))
        for n in _sites(e, lambda n: isinstance(n, X.Quant)):
            by_op["quantifier"].append((c, n, replace(n, kind="exists" if n.kind == "forall" else "forall")))
    for op, sites in by_op.items():
        rng.shuffle(sites)
        for c, node, new in sites:
            mutated = _replace_node(c.expr, node, new)
            start, end = c.extra["span"]
            text = X.to_jml(mutated)
            out.setdefault(op, []).append((f"line {c.line}: {c.text} -> {text}", source[:start] + text + source[end:]))
    return out


def validate(data_root: Path, checker: JmlChecker, per_operator: int = 1, only: set[str] | None = None,
             out=sys.stdout) -> dict:
    t_start = time.monotonic()
    names = sorted(p.name for p in (data_root / "oracle").iterdir() if p.is_dir())
    if only:
        names = [n for n in names if n in only]
    fig = Counter()
    truth_failures: list[str] = []
    unsupported: list[str] = []
    caught = Counter()
    total = Counter()
    survivors: list[str] = []
    call_rates: list[float] = []
    rng = random.Random(13)
    for name in names:
        src = (data_root / "oracle" / name / f"{name}.java").read_text()
        fig["programs"] += 1
        try:
            tr = translate(src)
        except TranslationError as exc:
            truth_failures.append(f"{name}: JML syntax error {exc}")
            continue
        fig["translated"] += 1
        daikon = data_root / "daikon" / name / f"{name}.java"
        driver = driver_from_daikon(daikon.read_text() if daikon.exists() else "class X {}", tr, name)
        fig["calls"] += len(driver.calls)
        fig["generated_calls"] += sum(c.generated for c in driver.calls)
        if driver.unmapped:
            print(f"  {name}: daikon methods not mapped: {', '.join(driver.unmapped)}", file=out)
        rep = checker.check(src, driver)
        if rep.status == "unsupported":
            unsupported.append(f"{name}: {rep.message} (line {rep.line})")
            # checked anyway without the unsupported construct? no: reported, never passed
            continue
        if rep.status != "checked":
            truth_failures.append(f"{name}: {rep.summary()}")
            continue
        fig["compiled"] += 1
        fig["in_domain_calls"] += len(rep.in_domain)
        if rep.wall > 0:
            call_rates.append(len(rep.calls) / rep.wall)
        if rep.verdict != "holds":
            truth_failures.append(f"{name}: {rep.summary()}")
            continue
        fig["ground_truth_holds"] += 1
        if per_operator <= 0:
            continue
        for op, cands in mutants(src, tr.clauses, rng).items():
            kept = 0
            for desc, msrc in cands[:per_operator + MAX_NOT_COMPILING]:
                if kept == per_operator:
                    break
                mrep = checker.check(msrc, driver)
                if mrep.status in ("compile_error", "syntax_error", "unsupported"):
                    fig["mutants_not_compiled"] += 1  # e.g. a variable replaced by one of another type
                    continue
                kept += 1
                total[op] += 1
                if mrep.verdict != "holds":
                    caught[op] += 1
                else:
                    survivors.append(f"{name} [{op}] {desc}")
    elapsed = time.monotonic() - t_start
    res = {"figures": dict(fig), "ground_truth_failures": truth_failures, "unsupported": unsupported,
           "mutants": {op: (caught[op], total[op]) for op in total}, "survivors": survivors,
           "calls_per_second_per_jvm": (sum(call_rates) / len(call_rates)) if call_rates else 0.0,
           "seconds": elapsed}
    w = lambda s="": print(s, file=out)  # noqa: E731
    w(f"programs {fig['programs']}, translated {fig['translated']}, compiled and run {fig['compiled']}, "
      f"unsupported {len(unsupported)}")
    w(f"calls {fig['calls']} ({fig['generated_calls']} generated), in the precondition's domain {fig['in_domain_calls']}")
    w(f"ground truth holds: {fig['ground_truth_holds']} of {fig['compiled']}")
    for f in truth_failures:
        w(f"  NOT HOLDING {f}")
    for u in unsupported:
        w(f"  UNSUPPORTED {u}")
    if total:
        all_c, all_t = sum(caught.values()), sum(total.values())
        w(f"mutants caught: {all_c}/{all_t} = {all_c / all_t:.1%} "
          + ", ".join(f"{op} {caught[op]}/{total[op]}" for op in sorted(total))
          + f"; not compiling (skipped for the next candidate) {fig['mutants_not_compiled']}")
    w(f"calls per second per program check (JVM start-up included, mean over programs): "
      f"{res['calls_per_second_per_jvm']:.1f}")
    w(f"end-to-end: {elapsed:.1f} s")
    return res


def throughput(data_root: Path, checker: JmlChecker, program: str = "BinarySearch", calls: int = 2000,
               out=sys.stdout) -> dict:
    """JVM start-up (a run of one call) and calls per second inside one JVM (a run of
    ``calls`` calls of ``program``'s daikon inputs, cycled), checks included."""
    src = (data_root / "oracle" / program / f"{program}.java").read_text()
    tr = translate(src)
    base = driver_from_daikon((data_root / "daikon" / program / f"{program}.java").read_text(), tr, program,
                              generate=False)
    texts = [c.text for c in base.calls]
    # the daikon calls read locals of main: keep its statements and cycle through the calls
    body = base.source.split("public static Object call(int k) throws Throwable {\n", 1)[1]
    driver = replace(base, source=base.source.replace(
        "public static Object call(int k) throws Throwable {\n",
        f"public static Object call(int k) throws Throwable {{\n        k = k % {len(texts)};\n"),
        calls=[replace(base.calls[i % len(texts)], index=i) for i in range(calls)])
    del body
    checker.check(src, driver, indices=[0])  # compile and warm the cache
    t0 = time.monotonic()
    checker.check(src, driver, indices=[0])
    one = time.monotonic() - t0
    t0 = time.monotonic()
    rep = checker.check(src, driver)
    many = time.monotonic() - t0
    rate = (calls - 1) / max(many - one, 1e-6)
    print(f"JVM start-up + one call: {one:.2f} s; {calls} calls of {program} in one JVM: {many:.2f} s "
          f"= {rate:.0f} calls/s after start-up ({rep.verdict})", file=out)
    return {"startup_seconds": one, "calls": calls, "seconds": many, "calls_per_second": rate}


def main(argv: list[str] | None = None) -> int:
    from ....execution.jvm import JvmExecutor

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data_root", nargs="?", default="../shared/datasets/specgenbench")
    ap.add_argument("--mutants", type=int, default=1, help="mutants per operator per program (0: none)")
    ap.add_argument("--only", default="", help="comma-separated program names")
    ap.add_argument("--cache", default="", help="class cache folder (default: a fresh temporary one)")
    ap.add_argument("--survivors", action="store_true", help="list mutants no call caught")
    a = ap.parse_args(argv)
    root = Path(a.data_root)
    if not (root / "oracle").is_dir():
        print(f"{root}: no oracle/ folder (SpecGenBench data root expected)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="jml-validate-") as tmp:
        checker = JmlChecker(JvmExecutor(Path(a.cache or tmp)))
        if checker.available():
            print(checker.available(), file=sys.stderr)
            return 2
        res = validate(root, checker, a.mutants, set(filter(None, a.only.split(","))))
        if not a.only:
            throughput(root, checker)
        if a.survivors:
            for s in res["survivors"]:
                print("  SURVIVED", s)
    return 0


if __name__ == "__main__":
    sys.exit(main())
