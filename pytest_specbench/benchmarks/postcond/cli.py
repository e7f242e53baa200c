"""``specbench postcond ...``: benchmark authors' tools.

    specbench postcond make-task --repo DIR --file minilib/numbers.py --method gcd \
        --tests tests/test_numbers.py::test_gcd --ref REF.txt --out TASK.json [--local-checkout REL]
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from . import author, source


def register(subparsers) -> None:
    p = subparsers.add_parser("postcond", help="PostcondBench authors' tools")
    sub = p.add_subparsers(dest="postcond_command", required=True)
    m = sub.add_parser("make-task", help="turn a method of your repository into a task (mutants, filtering, coverage gate)")
    m.add_argument("--repo", required=True, type=Path, help="the repository checkout")
    m.add_argument("--file", required=True, help="the method's file, relative to --repo")
    m.add_argument("--method", required=True, help="NAME or Class.NAME")
    m.add_argument("--tests", required=True, nargs="+", help="covering tests (pytest node ids relative to --repo)")
    m.add_argument("--ref", required=True, type=Path, help="file holding the reference @icontract decorator lines")
    m.add_argument("--out", required=True, type=Path, help="the task JSON to write")
    m.add_argument("--github-path", default="", help="owner/name for repo.github_path")
    m.add_argument("--commit", default="", help="commit for repo.commit")
    m.add_argument("--local-checkout", default=None,
                   help="write repo.local (checkout path relative to the task file) and run with the harness's interpreter")
    m.add_argument("--timeout", type=float, default=30.0, help="seconds per test run (default 30, as upstream)")
    m.add_argument("--keep-unkilled", action="store_true", help="keep mutants the reference does not kill")
    m.set_defaults(func=_make_task)
    j = sub.add_parser("make-java-task", help="the same for a method of a self-contained Java project (JUnit 4)")
    j.add_argument("--repo", required=True, type=Path, help="the project (src/main/java, src/test/java)")
    j.add_argument("--file", required=True, help="the method's file, relative to --repo")
    j.add_argument("--method", required=True, help="NAME or Class.NAME")
    j.add_argument("--tests", required=True, nargs="+", help="covering tests (pkg.Class#method)")
    j.add_argument("--ref", required=True, type=Path, help="file holding the reference //@ ensures lines")
    j.add_argument("--out", required=True, type=Path, help="the task JSON to write")
    j.add_argument("--github-path", default="", help="owner/name for repo.github_path")
    j.add_argument("--local-checkout", default=None,
                   help="write repo.local (project path relative to the task file) and repo.env = javac-junit4")
    j.add_argument("--timeout", type=float, default=30.0, help="seconds per test run (default 30, as upstream)")
    j.add_argument("--keep-unkilled", action="store_true", help="keep mutants the reference does not kill")
    j.set_defaults(func=_make_java_task)
    e = sub.add_parser("export-answers", help="upstream's 9.<model>--<prompting> folder -> replay JSON lines")
    e.add_argument("folder", type=Path)
    e.add_argument("out", type=Path)
    e.set_defaults(func=_export_answers)


def export_answers(folder: Path) -> list[dict]:
    """One ``{"task_id", "sample_index", "solution"}`` per answer in ``postconds``
    (``--model=replay:OUT.jsonl`` then re-scores upstream's released outputs)."""
    from .adapter import load_tasks

    rows = []
    for task in load_tasks(folder)[0]:
        for i, answer in enumerate(task.data.get("postconds") or ()):
            rows.append({"task_id": task.task_id, "sample_index": i, "solution": answer})
    return rows


def _export_answers(args: argparse.Namespace) -> int:
    from ...errors import DataError

    try:
        rows = export_answers(args.folder)
    except DataError as exc:
        print(f"specbench postcond export-answers: {exc}", file=sys.stderr)
        return 2
    args.out.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    print(f"{args.out}: {len(rows)} answers")
    return 0


def _author_state() -> Path:
    """The authors' tools' state folder (toolchain caches, compiled trusted classes): in
    the user's own cache folder, not a fixed name under /tmp, where another local user
    could create it first and plant classes that a later run trusts."""
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("pytest-specbench")) / "postcond-author"


def _make_task(args: argparse.Namespace) -> int:
    from ...execution.command import CommandExecutor

    meta = {"github_path": args.github_path, "commit": args.commit}
    if args.local_checkout:
        meta.update(local=args.local_checkout, env="harness")
    # Mutants are generated code: they run in the sandboxed command executor too.
    executor = CommandExecutor(state_dir=_author_state())
    try:
        ref = args.ref.read_text(encoding="utf-8")
        report = author.build_task(args.repo.resolve(), args.file, args.method, args.tests, ref, executor,
                                   keep_unkilled=args.keep_unkilled, repo_meta=meta, timeout=args.timeout,
                                   progress=lambda m: print(m, file=sys.stderr))
    except (OSError, author.TaskBuildError, source.AnswerError) as exc:
        print(f"specbench postcond make-task: {exc}", file=sys.stderr)
        return 2
    finally:
        executor.close()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report.task, indent=1) + "\n", encoding="utf-8")
    kept = len(report.task["mutants"])
    print(f"{args.out}: {kept} mutants kept of {report.generated} generated; coverage {report.coverage:.0%}")
    for reason, idx in sorted(report.dropped.items()):
        print(f"  dropped {len(idx)}: {reason}")
    return 0


def _make_java_task(args: argparse.Namespace) -> int:
    from ...errors import InfrastructureError
    from ...execution.jvm import JvmExecutor
    from ...jml import junit_missing
    from .java import author as java_author

    missing = junit_missing()
    if missing:
        print(f"specbench postcond make-java-task: {missing}", file=sys.stderr)
        return 2
    meta = {"github_path": args.github_path}
    if args.local_checkout:
        meta.update(local=args.local_checkout, env="javac-junit4")
    state = _author_state()
    # Mutants are generated code: the JVM runs inside the command executor's sandbox.
    jvm = JvmExecutor(state / "jvm", state_dir=state)
    if jvm.available():
        print(f"specbench postcond make-java-task: {jvm.available()}", file=sys.stderr)
        return 2
    try:
        ref = args.ref.read_text(encoding="utf-8")
        report = java_author.build_task(args.repo.resolve(), args.file, args.method, args.tests, ref, jvm,
                                        keep_unkilled=args.keep_unkilled, repo_meta=meta, timeout=args.timeout,
                                        progress=lambda m: print(m, file=sys.stderr))
    except (OSError, author.TaskBuildError, source.AnswerError, InfrastructureError) as exc:
        print(f"specbench postcond make-java-task: {exc}", file=sys.stderr)
        return 2
    finally:
        jvm.close()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report.task, indent=1) + "\n", encoding="utf-8")
    print(f"{args.out}: {len(report.task['mutants'])} mutants kept of {report.generated} generated")
    for reason, idx in sorted(report.dropped.items()):
        print(f"  dropped {len(idx)}: {reason}")
    return 0
