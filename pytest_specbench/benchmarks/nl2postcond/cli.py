"""``specbench nl2postcond ...``: build the buggy-program corpus."""
from __future__ import annotations

import os
import resource
from pathlib import Path


def register(subparsers) -> None:
    p = subparsers.add_parser("nl2postcond", help="nl2postcond's tools")
    sub = p.add_subparsers(dest="nl2postcond_command", required=True)
    b = sub.add_parser("build-corpus", help="run candidate buggy programs on HumanEval+ inputs in the sandbox and "
                                            "record their bad outputs (resumable; prints progress)")
    b.add_argument("--specbench-data", type=Path, default=None,
                   help="data root (evalplus/ and nl2postcond/code_mutants/); without it the bundled suite")
    b.add_argument("--candidates", type=Path, default=None,
                   help="candidate programs (default: ROOT/nl2postcond/code_mutants/merged_codes_preprocessed.jsonl.zip, "
                        "or the bundled suite's buggy_programs.jsonl)")
    b.add_argument("--out", type=Path, default=None,
                   help="the corpus to write (default: corpus-<content hash>.jsonl in the user's cache folder)")
    b.add_argument("--inputs", choices=("base+plus", "base"), default="base+plus")
    b.add_argument("--oracle", choices=("evalplus", "exact"), default="exact",
                   help="what a bad output is: not accepted by EvalPlus's oracle (tolerance for floats), or not "
                        "equal to the reference's output (exact)")
    b.add_argument("--time-rule", choices=("flat", "upstream"), default="flat",
                   help="each call's CPU limit: 1 s for every call (flat, the default: it agrees best with "
                        "upstream's counts), or max(0.2 s, 2x the reference's CPU time on that input), upstream's "
                        "script's rule (cheaper on tasks with slow candidates)")
    b.add_argument("--stop-after-timeouts", nargs="+", metavar="IN_A_ROW IN_ALL | off",
                   default=None, help="stop a candidate after this many time-outs in a row or in all (default "
                                      "10 30; the inputs after count as time-outs, never bad outputs), or off: "
                                      "every candidate runs on every input, as upstream's EvalPlus run did "
                                      "(closer to upstream's counts where a slow candidate hangs on many inputs; "
                                      "costs each time-out's CPU limit)")
    b.add_argument("--candidate-inputs", choices=("fresh", "after-reference"), default="fresh",
                   help="the inputs each candidate runs on: the task's as stored (fresh, the default), or as the "
                        "reference's call left them (after-reference: upstream's EvalPlus 0.1.5 ran the reference "
                        "on the input lists themselves before the candidates; of HumanEval+ only HumanEval/20's "
                        "reference changes its inputs)")
    b.add_argument("--tasks", nargs="*", default=(), help="only these task ids")
    b.add_argument("--jobs", type=int, default=2,
                   help="sandbox jobs at a time (one sandbox per job; default 2)")
    b.set_defaults(func=_build)


def _build(args) -> int:
    from ...data.bundled import bundled_suite
    from ...errors import SpecbenchError
    from ...execution.limits import Limits
    from ...execution.python import PythonExecutor
    from ..contract.evalplus import EvalPlusData
    from . import corpus

    try:
        stop_after = (corpus.parse_stop_rule(args.stop_after_timeouts) if args.stop_after_timeouts
                      else corpus.STOP_AFTER_TIMEOUTS)
    except ValueError as exc:
        raise SpecbenchError(str(exc)) from None
    root = args.specbench_data
    folder = (root / "evalplus") if root else bundled_suite("nl2postcond")
    data = EvalPlusData.load(folder)
    candidates = args.candidates or (root / "nl2postcond" / "code_mutants" / "merged_codes_preprocessed.jsonl.zip"
                                     if root else bundled_suite("nl2postcond") / "buggy_programs.jsonl")
    if not candidates.is_file():
        raise SpecbenchError(f"{candidates}: no candidate programs here (--candidates)")
    humaneval = next((f for f in data.files if "HumanEval" in f.name), data.files[0])
    out = args.out
    if out is None:
        from platformdirs import user_cache_dir

        key = corpus.corpus_key(candidates, humaneval, args.inputs, args.oracle, args.time_rule, args.candidate_inputs,
                                stop_after)
        out = Path(user_cache_dir("pytest-specbench")) / "nl2postcond" / f"corpus-{key}.jsonl"
    out.parent.mkdir(parents=True, exist_ok=True)
    if args.jobs < 1:
        raise SpecbenchError(f"--jobs: must be at least 1, got {args.jobs}")
    limits = Limits()
    executors = [PythonExecutor(limits) for _ in range(args.jobs)]
    children0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        figures = corpus.build({t: dict(v) for t, v in data.tasks.items()}, candidates, out, executors, limits,
                               args.inputs, only=args.tasks, oracle=args.oracle,
                               time_rule=args.time_rule, stop_after=stop_after,
                               candidate_inputs=args.candidate_inputs)
    finally:
        for executor in executors:
            executor.close()
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    sandbox_cpu = (children.ru_utime + children.ru_stime) - (children0.ru_utime + children0.ru_stime)
    print(f"corpus: {out}")
    rate = figures["programs"] / figures["wall"] if figures["wall"] else 0.0
    print(f"  {figures['tasks']} tasks ({figures['skipped_tasks']} already built), {figures['programs']} programs "
          f"({figures['runs']} distinct, run), {figures['kept']} kept, {figures['bopi']} bad outputs; "
          f"wall {figures['wall']} s, harness CPU {figures['harness_cpu']} s, sandbox CPU {sandbox_cpu:.1f} s, "
          f"{rate:.2f} programs/s; load average {os.getloadavg()[0]:.1f}")
    if figures.get("stopped"):
        print(f"  {figures['stopped']} programs were ended by the stop rule (--stop-after-timeouts): their later inputs "
              f"count as time-outs, and a bad output one of them would have given there is not in the corpus")
    if figures["left_out"]:
        print(f"  left out (why: the lines above; a re-run tries them again): {', '.join(figures['left_out'])}")
    print(f"  use it with --nl2postcond-corpus={out}")
    if root and args.candidates is None:
        print("  " + _against_pin(out))
    return 0


def _against_pin(out: Path) -> str:
    """The corpus just written against the pin (``registry/corpus/nl2postcond.txt``): each
    pinned task's part, and the manifest digest when the corpus holds exactly the pinned tasks
    (a user without a mirror gets the corpus by building it, checked)."""
    from ...data.corpus_pin import EMPTY_PART, read_parts, read_pin

    pin = read_pin()
    if not pin.parts:
        return "no pinned build to compare with"
    read = read_parts(out)
    mine = read.digests
    pinned = [t for t in mine if t in pin.parts]
    differ = [t for t in pinned if mine[t] != pin.parts[t]]
    line = (f"{len(pinned) - len(differ)} of its {len(mine)} tasks are the pinned parts"
            + (f"; {len(differ)} differ ({', '.join(differ[:5])}: other rules, or a program near its CPU limit "
               f"ended otherwise on this machine, docs/nl2postcond.md 'Deterministic')" if differ else "")
            + (f"; {len(mine) - len(pinned)} have no pin" if len(mine) > len(pinned) else ""))
    if set(mine) == {t for t, sha in pin.parts.items() if sha != EMPTY_PART} and pin.manifest:
        actual = read.manifest
        line += (f"; manifest digest {actual}: "
                 + ("the pinned corpus" if actual == pin.manifest else f"not the pinned {pin.manifest}"))
    return line
