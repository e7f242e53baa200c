"""Survey a SpecGenBench root with the JML checker and print figures.

    python -m pytest_specbench.benchmarks.speceval.survey [DATA_ROOT] [--seed N] [--only A,B] [--categories ...]

For every program with JML and every category (original and the five
perturbations): the perturbation check (the ground-truth specification still
holds on the program's test calls after the perturbation; a failure is a
perturbation bug or an oracle problem, listed), and on the original program
the Judgement label balance before and after dropping mutants the tests do
not refute (§3.2.1).  Programs and mutants are harness-generated (trusted),
run through the sandboxed ``jvm`` executor all the same.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

from . import validation
from .adapter import WEAK_COVERAGE, WEAK_TESTS, _test_strength
from .perturb import ALL_CATEGORIES
from .tasks import build, instantiate, load_programs


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data_root", nargs="?", default="../shared/datasets/specgenbench")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", default="")
    ap.add_argument("--categories", default=",".join(ALL_CATEGORIES))
    args = ap.parse_args(argv)
    root = Path(args.data_root)
    from ...execution import make_executor

    settings = SimpleNamespace(state_dir=Path(tempfile.gettempdir()) / "specbench-state", sandbox="process",
                               limits=None)
    from ...engine.context import CheckContext

    jvm = make_executor("jvm", settings, [])

    def cache_dir(*parts: str) -> Path:
        folder = settings.state_dir.joinpath("cache", *parts)
        folder.mkdir(parents=True, exist_ok=True)
        return folder

    ctx = CheckContext(settings, SimpleNamespace(executor=lambda kind: jvm, model=None, cache_dir=cache_dir))
    only = {x for x in args.only.split(",") if x}
    cats = [c for c in args.categories.split(",") if c]
    fig: Counter = Counter()
    problems: list[str] = []
    strength: list[tuple[str, int, float | None, bool, bool]] = []
    t0 = time.monotonic()
    for p in load_programs(root):
        if only and p.name not in only:
            continue
        tests = p.daikon.read_text() if p.daikon else None
        gen = build(p.name, p.source, "generation", args.seed)
        if gen is None:
            fig["no_jml"] += 1
            continue
        fig["programs"] += 1
        for cat in cats:
            inst = instantiate(p.source, gen, cat, args.seed)
            check = validation.spec_holds(inst.data["ground_truth"], tests, ctx)
            key = {True: "holds", False: "refuted", None: "unchecked"}[check.holds]
            fig[f"{cat}:{key}"] += 1
            if check.holds is not True:
                problems.append(f"{p.name} [{cat}] {key}: {check.summary}")
        gt = validation.ground_truth(p.source, tests, ctx)
        excluded = gt.fails  # --speceval-oracle-refuted=skip
        fig["oracle_refuted"] += excluded
        if gt.checkable:
            weak = _test_strength(gt.tests, gt.branch_coverage)["weak_tests"]
            strength.append((p.name, gt.tests, gt.branch_coverage, weak, excluded))
        if "original" in cats:
            plan = build(p.name, p.source, "judgement", args.seed)
            if plan is not None:
                fig["judgement"] += 1
                fig["judgement_label_correct"] += plan["label"]
                if not plan["label"]:
                    inst = instantiate(p.source, plan, "original", args.seed)
                    holds = validation.spec_holds(inst.program, tests, ctx, gt.domain).holds
                    fig[{True: "mutant_not_refuted", False: "mutant_refuted", None: "mutant_unchecked"}[holds]] += 1
                    if holds is True and not excluded:
                        fig["kept_dropped"] += 1
                if not excluded:
                    fig["kept_judgement"] += 1
                    fig["kept_label_correct"] += plan["label"]
        print(f"  {p.name} done ({time.monotonic() - t0:.0f} s)", file=sys.stderr)
    jvm.close() if hasattr(jvm, "close") else None
    w = print
    w(f"programs with JML: {fig['programs']} (without: {fig['no_jml']})")
    for cat in cats:
        w(f"  {cat:17s} ground truth holds {fig[cat + ':holds']}, refuted {fig[cat + ':refuted']}, "
          f"not checkable {fig[cat + ':unchecked']}")
    if fig["judgement"]:
        kept = fig["judgement"] - fig["mutant_not_refuted"]
        w(f"judgement: {fig['judgement']} tasks, {fig['judgement_label_correct']} correct labels "
          f"({fig['judgement_label_correct'] / fig['judgement']:.1%}); mutants refuted {fig['mutant_refuted']}, "
          f"not refuted (dropped) {fig['mutant_not_refuted']}, not checkable {fig['mutant_unchecked']}; "
          f"after dropping: {fig['judgement_label_correct']}/{kept} correct ({fig['judgement_label_correct'] / max(kept, 1):.1%})")
        scored = fig["kept_judgement"] - fig["kept_dropped"]
        w(f"judgement without the {fig['oracle_refuted']} oracle-refuted programs (--speceval-oracle-refuted=skip): "
          f"{fig['kept_judgement']} tasks, {fig['kept_dropped']} dropped, {fig['kept_label_correct']}/{scored} correct "
          f"({fig['kept_label_correct'] / max(scored, 1):.1%}): the accuracy of a judge that always answers 'correct'")
    with_branches = [(n, t, c, wk, x) for n, t, c, wk, x in strength if c is not None]
    if with_branches:
        def avg(rows):
            return sum(c for _, _, c, _, _ in rows) / max(len(rows), 1)
        scored_rows = [r for r in with_branches if not r[4]]
        w(f"tests' branch coverage (ground-truth domain): mean {avg(with_branches):.1%} over the "
          f"{len(with_branches)} programs with branches ({len(strength) - len(with_branches)} have none); "
          f"{avg(scored_rows):.1%} over the {len(scored_rows)} scored ones; SpecEval reports 95.5% (§4.1)")
        weak = [f"{n} ({t} calls, {c:.0%})" if c is not None else f"{n} ({t} calls)"
                for n, t, c, wk, _ in strength if wk]
        w(f"weak tests (< {WEAK_TESTS} calls or < {WEAK_COVERAGE:.0%} of branches): {len(weak)}: {', '.join(weak)}")
    for line in problems:
        w("  " + line)
    w(f"end-to-end: {time.monotonic() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
