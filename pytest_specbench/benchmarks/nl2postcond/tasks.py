"""nl2postcond's tasks: HumanEval+ (EvalPlus's file, read by the ContractEval
family's loader) with what this family adds: the reference postcondition of a
bundled task, the prompt texts, and where the buggy-program corpus is.

Data roots:

* bundled (no ``--specbench-data``): ``benchmarks/nl2postcond/`` of the package,
  a few tasks written for this project in HumanEval+'s format, each with a
  ``reference_postcondition`` (ours), and ``corpus.jsonl`` built from our own
  buggy programs (``buggy_programs.jsonl``) by ``specbench nl2postcond
  build-corpus``;
* upstream (``--specbench-data=ROOT``): the HumanEval+ file of ``ROOT/evalplus/``
  (HumanEval tasks only, as the paper), the paper's prompt texts from
  ``ROOT/nl2postcond/prompts.json`` (upstream's ``LLMPrompts.py`` as data), and
  the corpus ``build-corpus`` wrote (``ROOT/nl2postcond/corpus.jsonl``, else the
  run's cache, see :mod:`.corpus`).  Upstream has no reference postcondition:
  ``--model=reference`` skips there with one line.
"""
from __future__ import annotations

import ast
import json
from pathlib import Path
from string import Template
from typing import Any, Mapping

from ...data.bundled import bundled_suite
from ...errors import DataError
from ..base import Message, Prompt, Task, TaskSet
from ..contract.evalplus import EvalPlusData, index_folder

FAMILY = "nl2postcond"


def parameters(task: Mapping[str, Any]) -> list[str]:
    """The entry point's parameter names, from the prompt's ``def`` (the names a
    postcondition uses for the inputs)."""
    tree = ast.parse(task["prompt"])
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == task["entry_point"]:
            args = node.args
            return [a.arg for a in (*args.posonlyargs, *args.args)] + ([args.vararg.arg] if args.vararg else [])
    raise DataError(task.get("task_id", "?"), None, f"no def {task['entry_point']} in the prompt")


def preamble(task: Mapping[str, Any]) -> str:
    """What a postcondition sees besides the inputs and ``return_value``: the
    prompt's imports and helper functions (upstream's postcondition sits inside
    the task's module, after them), and ``import re``, which upstream's wrapper
    adds before every postcondition.  Benchmark text, not the answer's."""
    tree = ast.parse(task["prompt"])
    keep = [node for node in tree.body
            if isinstance(node, (ast.Import, ast.ImportFrom))
            or (isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name != task["entry_point"])]
    return "\n".join(["import re", *(ast.unparse(node) for node in keep)])


def load_tasks(data_root: Path | None, settings: Any) -> TaskSet:
    if data_root is None:
        folder = bundled_suite(FAMILY)
        data = EvalPlusData.load(folder, index_folder(settings))
        refs = _reference_postconditions(folder / "reference_postconditions.jsonl")
        tasks = tuple(Task(tid, {**dict(task), "reference_postcondition": refs.get(tid)}, data.source[tid])
                      for tid, task in data.tasks.items())
        return TaskSet(tasks, (*data.files, folder / "reference_postconditions.jsonl"), bundled=True)
    folder = data_root / "evalplus"
    data = EvalPlusData.load(folder, index_folder(settings))
    tasks = tuple(Task(tid, task, data.source[tid]) for tid, task in data.tasks.items() if tid.startswith("HumanEval/"))
    if not tasks:
        raise DataError(folder, None, "no HumanEval+ tasks here (nl2postcond's EvalPlus half is HumanEval+)")
    files = [f for f in data.files if "HumanEval" in f.name]
    prompts = data_root / FAMILY / "prompts.json"
    return TaskSet(tasks, (*files, *([prompts] if prompts.is_file() else [])), bundled=False)


def _reference_postconditions(path: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                obj = json.loads(line)
                out[str(obj["task_id"])] = str(obj["postcondition"])
            except (ValueError, KeyError, TypeError):
                raise DataError(path, lineno, "expected {\"task_id\": ..., \"postcondition\": ...}") from None
    return out


# Our own wording of the paper's four prompts (simple/base x with/without the
# reference), for the bundled suite and wherever upstream's prompts.json is
# absent; with it, upstream's texts are used as they are (string.Template).
_OWN = {
    "systemMessage": "You write executable Python only, and only code you are sure of. Explain your intent "
                     "in Python comments.",
    "simple": "Here is ${shown} for ${entrypoint}:\n\n${codeStubAndDocstring}\n\nWrite a symbolic "
              "postcondition for ${entrypoint}: exactly one Python assert statement, preceded by a Python "
              "comment that says what it checks. Use only the function's input parameters and its return "
              "value, which is stored in a variable named `return_value`. You may use the `re` module and "
              "other standard-library modules you import; do not call ${entrypoint} itself, and use only "
              "pure functions (all(), len(), map(), filter(), ...). Keep it simpler than the function, but "
              "not trivial: it should capture part of what the docstring requires of the output.",
    "base": "Here is ${shown} for ${entrypoint}:\n\n${codeStubAndDocstring}\n\nWrite exactly one symbolic "
            "postcondition for ${entrypoint} that increases confidence that it meets its docstring. Use "
            "exactly one Python assert statement at its end, preceded by a Python comment saying what it "
            "checks. Use only the inputs and `return_value` (the function's return value); do not call "
            "${entrypoint}. Answer in this format:\n\n```\n# what the postcondition checks\nassert ...\n```\n",
}


def prompt(task: Task, settings: Any, form: str, with_reference: bool, data_root: Path | None) -> Prompt:
    """The paper's prompt for ``task`` (§4's EvalPlus setup: simple or base, with
    or without the reference implementation shown)."""
    data = task.data
    code = data["prompt"] + (data["canonical_solution"] if with_reference else "")
    upstream = _upstream_prompts(data_root)
    if upstream is not None:
        name = ("genOneWithRef" if with_reference else "genOneNoRef") + ("_simple" if form == "simple" else "")
        fills = {"entrypoint": data["entry_point"], "codeStubAndDocstring": code, "promptAdds": "",
                 "toGenerateFull": "symbolic postcondition", "toGenerateShort": "postcondition",
                 "toGenerateShortCaps": "POSTCONDITION", "toGenerateGoal": "checks",
                 "toUse": Template(_template(upstream["postCondToUse"])).safe_substitute(
                     entrypoint=data["entry_point"])}
        user = Template(_template(upstream[name])).safe_substitute(fills)
        system = _template(upstream["systemMessage"])
    else:
        shown = "a Python function with its implementation" if with_reference else "a Python function stub and docstring"
        user = Template(_OWN[form]).safe_substitute(entrypoint=data["entry_point"], codeStubAndDocstring=code,
                                                     shown=shown)
        system = _OWN["systemMessage"]
    return Prompt((Message("system", system), Message("user", user)))


def _template(entry: Any) -> str:
    return entry["template"] if isinstance(entry, dict) else str(entry)


_PROMPTS: dict[Path, Any] = {}


def _upstream_prompts(data_root: Path | None) -> Mapping[str, Any] | None:
    if data_root is None:
        return None
    path = data_root / FAMILY / "prompts.json"
    if path not in _PROMPTS:
        try:
            _PROMPTS[path] = json.loads(path.read_text(encoding="utf-8"))["prompts"]["python"]
        except FileNotFoundError:
            _PROMPTS[path] = None
        except (ValueError, KeyError, TypeError) as exc:
            raise DataError(path, None, f"not upstream's prompts file ({type(exc).__name__})") from None
    return _PROMPTS[path]
