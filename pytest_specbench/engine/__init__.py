"""The run's engine, pytest-free: what a run will do and how an item gets its verdict.

* :mod:`.plan` -- :class:`~.plan.RunPlan`: tasks, checks, item specs, skip
  reasons, prompts and generation requests, data digests; each computed once
  per process (per task, per (task, check), per item).
* :mod:`.verdicts` -- :class:`~.verdicts.VerdictEngine`: the result key, the
  result cache, the journal of a resumed run, within-run dedupe and
  ``evaluate(spec, completion, run_check)``.
* :mod:`.context` -- :class:`~.context.CheckContext`, the concrete context a
  check receives.
* :mod:`.dedupe` -- program keys and the verdicts of programs seen in this run.

Like Hypothesis's ``ConjectureRunner`` (which never sees pytest) and xdist's
schedulers (three callables and a fake node), these take plain things: the
pytest glue in :mod:`pytest_specbench.plugin` builds them once per process and
hands them to the items, the generation phase and the gate, which read no run
object (``docs/architecture.md``, "Seams").
"""
