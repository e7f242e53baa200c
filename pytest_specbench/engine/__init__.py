"""The run's engine, pytest-free: what a run will do and how an item gets its verdict.

* :mod:`.plan` -- :class:`~.plan.RunPlan`: tasks, checks, item specs, skip
  reasons, prompts and generation requests, data digests; each computed once
  per process (per task, per (task, check), per item).
* :mod:`.ledger` -- :class:`~.ledger.Ledger`, the controller's, the one reader
  and writer of verdicts (the resumed journal, the program alias, the store of
  earlier runs; one :class:`~.ledger.RunKey`).
* :mod:`.verdicts` -- :class:`~.verdicts.VerdictEngine`, one per process: a
  known verdict, the in-job memo, or ``evaluate(spec, completion, run_check)``.
* :mod:`.context` -- :class:`~.context.CheckContext`, the concrete context a
  check receives.
* :mod:`.dedupe` -- program keys.

Like Hypothesis's ``ConjectureRunner`` (which never sees pytest) and xdist's
schedulers (three callables and a fake node), these take plain things: the
pytest glue in :mod:`pytest_specbench.plugin` builds them once per process and
hands them to the items, the generation phase and the gate, which read no run
object (``docs/architecture.md``, "Seams").
"""
