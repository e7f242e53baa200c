"""nl2postcond's metrics (Endres et al., FSE 2024; arXiv 2310.01831v2, §3: a
postcondition is *test-set correct* when it holds on the reference's outputs
for the task's tests; its *completeness* is judged by the buggy programs' bad
outputs it rejects; §4 reports them on EvalPlus over n = 10 postconditions per
task).  The paper's text is not in this project's shared papers folder; these
follow its definitions as stated by upstream's data columns and the issue that
introduced the family (docs/nl2postcond.md says where a reading was needed).

* ``accept@k``: pass@k (unbiased estimator, Chen et al. 2021 §2.1) of ``correct``;
* ``complete@k``: pass@k of "correct and rejects every bad output (bopi)";
* ``bug_complete@k``: pass@k of "correct and rejects at least one bad output of
  every buggy program";
* ``bopi_killed_share``, ``codes_killed_share``, ``natural_codes_killed_share``:
  among correct postconditions, the share of bad outputs / buggy programs /
  natural buggy programs rejected (upstream's ``Percent inputs killed``,
  ``Percent codes killed``, ``Percent nat codes killed``), averaged per task, then
  over tasks;
* ``codes_killed_union``: per task, the share of buggy programs that *some*
  correct postcondition of the task rejects (the union over samples), averaged
  over tasks.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from ...metrics.passk import pass_at_k
from ...metrics.reducers import Declared, Mean, evaluate

KILL_FIELDS = ("codes_run", "codes_killed", "bopi_run", "bopi_killed", "natural_codes_run",
               "natural_codes_killed", "killed_programs")


def _samples(samples: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]] | None:
    return [s["checks"] for s in samples if "correct" in s["checks"]] or None


def _pass_at(k: int, good):
    def score(item: list[Mapping[str, Any]]) -> float | None:
        n = len(item)
        return pass_at_k(n, sum(1 for s in item if good(s)), k) if k <= n else None
    return score


def _correct(s: Mapping[str, Any]) -> bool:
    c = s["correct"]
    return bool(c.get("test_set_correct", c.get("passed")))


def _complete(s: Mapping[str, Any]) -> bool:
    c = s.get("complete", {})
    return _correct(s) and bool(c.get("complete", c.get("passed")))


def _bug_complete(s: Mapping[str, Any]) -> bool:
    return _correct(s) and bool(s.get("complete", {}).get("bug_complete"))


def _share(killed: str, run: str):
    def score(item: list[Mapping[str, Any]]) -> float | None:
        shares = [s["correct"][killed] / s["correct"][run] for s in item
                  if _correct(s) and s["correct"].get(run)]
        return sum(shares) / len(shares) if shares else None
    return score


def _union(item: list[Mapping[str, Any]]) -> float | None:
    runs = [s["correct"].get("codes_run") for s in item if _correct(s) and s["correct"].get("codes_run")]
    if not runs:
        return None
    killed = set().union(*(s["correct"].get("killed_programs", ()) for s in item if _correct(s)))
    return len(killed) / runs[0]


def declared(ks: Sequence[int]) -> Declared:
    return Declared(item=_samples, reducers=(
        *(Mean(f"accept@{k}", _pass_at(k, _correct), every=True) for k in ks),
        *(Mean(f"complete@{k}", _pass_at(k, _complete), every=True) for k in ks),
        *(Mean(f"bug_complete@{k}", _pass_at(k, _bug_complete), every=True) for k in ks),
        Mean("bopi_killed_share", _share("bopi_killed", "bopi_run")),
        Mean("codes_killed_share", _share("codes_killed", "codes_run")),
        Mean("natural_codes_killed_share", _share("natural_codes_killed", "natural_codes_run")),
        Mean("codes_killed_union", _union),
    ))


def compute(results: Mapping[str, Sequence[Mapping[str, Any]]], ks: Sequence[int]) -> dict[str, Any]:
    return evaluate(declared(ks), results)


def names(ks: Sequence[int]) -> list[str]:
    return [r.name for r in declared(ks).reducers]
