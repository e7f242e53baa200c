"""The shared vocabulary: tasks, prompts, verdicts, options, role requests, and the
one interface every benchmark adapter implements.

It sits on the ground floor: it imports nothing of this package, so the shared
services (``models/``, ``engine/``, ``execution/``, ``metrics/``, ``reports/``...)
speak it without importing ``benchmarks/`` (``tests/test_layering.py``).
:mod:`pytest_specbench.benchmarks.base` re-exports every name, for adapters.

An adapter is a module-level object satisfying :class:`Benchmark`.  It loads
tasks, renders prompts, runs one named check of one sample, and turns the
per-task results into the metrics its paper defines.  Everything pytest-shaped
(items, options, reports, xdist) lives in :mod:`pytest_specbench.plugin`; the
adapter never sees it.  A family lives in one folder,
``pytest_specbench/benchmarks/<family>/``, with its adapter(s) and its own
machinery; adding one means adding that folder and listing its adapters in
:mod:`pytest_specbench.benchmarks` (or registering them from another package
under the ``specbench.benchmarks`` entry-point group).

How a sample travels: ``load`` -> :class:`Task` -> ``prompt`` -> the model's
answer (a :class:`~pytest_specbench.models.base.Completion`) -> for each name in
``checks_for(task)``: ``skip_reason`` or ``run_check`` -> :class:`CheckResult`
-> journal and report -> ``aggregate`` -> metrics.

Verdicts: whatever the *sample* causes (bad code, a crash, a hang, garbage,
hostile values) is a failed :class:`CheckResult` with a one-line ``message``;
only faults of the harness or the machine raise
:class:`~pytest_specbench.errors.InfrastructureError` (reported as E, left out
of the metrics).  A check whose toolchain is absent is skipped through
``skip_reason`` with a one-line install hint (``ctx.executor(kind).available()``).

Optional methods, looked up with ``getattr``:

- ``dispatch_cost(task, check, ctx) -> float``: the predicted cost of one item,
  in any unit, from what is cached only (never by running anything).  Under
  xdist the costliest items are dispatched first (:mod:`.plugin.scheduling`);
  without it, items go out in collection order.
- ``program_key(task, sample, check) -> str | None``: what decides the
  verdict of an item besides the task, check and settings (ContractEval: the
  sanitized program's syntax tree with line numbers).  Items with equal keys
  are evaluated once per run and share the verdict
  (:mod:`.engine.dedupe`, ``docs/dedupe.md``); None, or no method, evaluates
  the item on its own (CIFE: its judge is asked per sample).
- ``figures(metrics, settings) -> list[dict]``: plots for the HTML report, each
  ``{"title", "kind": "bar" | "errorbar" | "hist", "x": [...], "y": [...],
  "lo": [...], "hi": [...] (errorbar), "xlabel", "ylabel"}``, built from
  ``aggregate``'s metrics; the reports layer draws them.
- ``warnings(metrics, settings) -> list[str]``: one-line warnings the summary
  prints under the benchmark's metrics (and the report keeps), e.g. CIFE's
  count of judge answers upstream's reading found no verdict in.
- ``roles``: the model roles its checks ask (``("judge",)``), or a callable
  ``roles(settings)`` when options decide it; the plugin loads each role at the
  start (a missing or unreachable one is one usage error) and puts its
  identity in the result key.
- ``executors``: the sandboxed executor kinds its checks use (``("python",)``),
  or a callable ``executors(settings)`` when options decide it.  An xdist worker
  launches their zygotes at its configure, so their start runs beside the
  collection, not inside its first item (:mod:`.plugin.startup`); without it
  (and in a ``-n 0`` run) each executor starts at its first use.  Declare only kinds every run of the adapter uses: one declared and never
  used is a zygote started for nothing.
- ``default_roles(taskset) -> {role: spec}``: role specs used when the user
  gives none (CIFE's bundled suite: ``replay:`` of its recorded judgments).
- ``manifest(settings) -> dict``: provenance for the report (prompt hashes...).
- ``declared_metrics(settings) -> Declared``: the metrics as reducers over
  per-task scores, with optional groupings (:mod:`.metrics.reducers`:
  ``Mean``, ``Count``, ``Summary``, ``PerItem``, ``Derived``, ``Grouped``);
  ``aggregate`` may then be ``evaluate(declared, results, tasks)``.  The
  report's bootstrap takes a declared mean's per-task values from its score;
  the metrics an adapter does not declare are probed through ``aggregate``
  (:mod:`.reports.stats`).  PostcondBench declares its metrics (Dep/Solo and
  languages as groupings).
- ``pooled_metrics(results, tasks, settings) -> {metric: (reduce, parts)}``:
  metrics pooled over something finer than tasks, whose parts the report does
  not show (CIFE's category micro averages and rule-judge kappa, over
  constraints): the metric is ``reduce`` of the parts' per-task values
  (``{task id: number}`` each) summed over the tasks.  The bootstrap checks that
  against ``aggregate`` on the full set and a few resamples, then draws the sums
  instead of calling ``aggregate`` per replicate.

A family may also ship ``cli.py`` in its folder with ``register(subparsers)``:
the ``specbench`` command adds its subcommands (``specbench postcond ...``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Protocol, Sequence, runtime_checkable


@dataclass(frozen=True)
class Task:
    """One benchmark task as read from its data file.

    ``group`` clusters tasks for the bootstrap (a SpecEval program seen under
    several perturbations, a PostcondBench method); empty means the task is its
    own cluster.
    """

    task_id: str
    data: Mapping[str, Any]
    source: Path  # the file the task came from (for messages and reports)
    line: int = 0
    group: str = ""

    @property
    def cluster(self) -> str:
        return self.group or self.task_id


@dataclass(frozen=True)
class Message:
    role: str  # "system" | "user" | "assistant"
    content: str


@dataclass(frozen=True)
class Prompt:
    """What a model is asked, plus what turns its answer into a program."""

    messages: tuple[Message, ...]
    # Prepended to a bare "completion" (EvalPlus ``completion`` = prompt + text).
    completion_prefix: str = ""
    # Generation parameters this benchmark's paper fixes (e.g. {"temperature": 0.0,
    # "max_tokens": 4096}); the model's own options override them.  Recorded in the manifest.
    parameters: Mapping[str, Any] = field(default_factory=dict)


@dataclass
class CheckResult:
    """The verdict of one check on one sample; ``details`` must be JSON-able."""

    passed: bool
    details: dict[str, Any] = field(default_factory=dict)
    message: str = ""  # one line shown for a failure


@dataclass(frozen=True)
class TaskSet:
    """Tasks a benchmark loaded, with the files they came from (for hashes)."""

    tasks: tuple[Task, ...]
    files: tuple[Path, ...]
    bundled: bool  # True when the package's own sample suite was used
    warnings: tuple[str, ...] = ()


def positive_seconds(text: str) -> float:
    """``Option.parse`` for a time limit: a number of seconds above 0."""
    try:
        value = float(str(text))
    except ValueError:
        raise ValueError(f"expected a number of seconds, got {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise ValueError(f"expected a number of seconds above 0, got {text!r}")
    return value


def positive_int(text: str) -> int:
    """``Option.parse`` for a count: a whole number of at least 1."""
    try:
        value = int(str(text))
    except ValueError:
        raise ValueError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise ValueError(f"expected a positive number, got {value}")
    return value


def existing_folder(text: str) -> str:
    """``Option.parse`` for a folder that must exist (the text is kept as given, so
    result keys do not change with the working directory's spelling)."""
    path = Path(str(text)).expanduser()
    if not path.exists():
        raise ValueError(f"folder not found: {path}")
    if not path.is_dir():
        raise ValueError(f"{path} is a file, not a folder")
    return str(text)


@dataclass(frozen=True)
class Option:
    """A benchmark-specific option: ``--NAME-WITH-DASHES`` on the command line and
    ini key ``name``.  Its value is validated when the run starts (command line
    and ini alike: a bad ini value is the same one-line error) and enters the
    result key, so a cached verdict is never reused under another value.

    ``choices``: the allowed values (for a list option, of each element).
    ``parse``: turns the raw string into the value, raising ``ValueError`` with a
    readable message on bad input (default: the string itself).
    ``multiple``: comma-separated list of values (``--verina-task=codegen,specgen``).
    """

    name: str  # ini key and dest, e.g. "contract_condition"
    help: str
    default: Any = None
    choices: tuple[str, ...] | None = None
    parse: Callable[[str], Any] | None = None
    multiple: bool = False

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")


@dataclass(frozen=True)
class RoleRequest:
    """A question a check puts to a model role (``ctx.model("judge")``).

    ``purpose`` names which question it is (CIFE: ``adherence`` or
    ``correctness``); (benchmark, task id, sample index, purpose, attempt) is what
    a ``replay:`` role file is keyed by, and the prompt text is what a generating
    role's cache is keyed by.  ``attempt`` counts retries after an unreadable
    answer (a retry's prompt shows the role its previous error).
    """

    benchmark: str
    task: Task
    sample_index: int
    purpose: str
    prompt: Prompt
    attempt: int = 0
    # What the question asks, by content (CIFE: ``prompts.question_digest``): a recorded
    # answer bound to a question (``question_sha256`` in a replay file) answers it alone.
    question: str = ""
    # The JSON schema of a readable answer: sent as structured output by a role whose
    # endpoint takes it (--judge-model-structured=on); None: the prompt alone.
    schema: Mapping[str, Any] | None = None


class CheckSkipped(Exception):
    """Raised by ``run_check`` when an item cannot be decided on this sample for a
    reason that is neither the sample's fault nor the harness's (CIFE: no judge for
    this question): the item is skipped with ``str(exc)``, one line saying what to
    give (a usage line), and it stays out of the metrics."""


class RoleModel(Protocol):
    """A model in a role other than the one under test (first role: ``judge``).

    ``ask`` is cached on disk by the role's identity and the prompt: a repeated
    question is never sent (or billed) twice, across workers and resumed runs.
    A replayed role raises :class:`~pytest_specbench.models.base.SampleMissing`
    for a question it has no answer to; an unreachable endpoint raises
    :class:`~pytest_specbench.errors.InfrastructureError` (E: not the sample's fault).
    """

    role: str
    spec: str

    def ask(self, request: RoleRequest) -> str: ...

    def manifest(self) -> dict[str, Any]: ...


class CheckContext(Protocol):
    """Shared services a check may use (the concrete class: :class:`pytest_specbench.engine.context.CheckContext`)."""

    settings: Any  # pytest_specbench.plugin.options.Settings

    def option(self, name: str) -> Any:
        """The validated value of one of the adapter's declared :class:`Option` s."""

    def executor(self, kind: str) -> Any:
        """The sandboxed executor for a toolchain: ``python``, ``command``, ``jvm``,
        ``lean`` (see :mod:`pytest_specbench.execution.protocol`)."""

    def model(self, role: str) -> RoleModel:
        """A model role (``judge``: ``--judge-model``); raises a one-line
        :class:`~pytest_specbench.errors.OptionError` when the role is not configured."""

    def result_of(self, check: str) -> CheckResult | None:
        """The result of an earlier check on the same (task, sample): from this
        run, the journal of a resumed run or the result cache; None if it has not
        run (it is then computed on demand, once, as its own item would)."""

    # True only while the xdist controller plans the run (``skip_reason``): answer
    # from caches, run nothing.  False (a plain attribute) everywhere else.
    planning: bool

    def cache_dir(self, *parts: str) -> Path: ...

    def python_executor(self) -> Any:
        """Shorthand for ``executor("python")``."""


@runtime_checkable
class Benchmark(Protocol):
    name: str  # the --specbench= value
    version: str  # bump when a verdict of the same sample could change (enters the result key)
    options: Sequence[Option]  # declared options (validated; their values enter the result key)

    def load(self, data_root: Path | None, settings: Any) -> TaskSet:
        """Read the tasks from ``data_root`` (upstream layout) or the bundled suite."""

    def checks_for(self, task: Task) -> Sequence[str]:
        """The checks of one task, in the order they run for one sample (CIFE: one
        per constraint; SpecEval: by task kind)."""

    def skip_reason(self, check: str, task: Task, ctx: CheckContext) -> str | None:
        """Why an item is skipped (a task with no CVTs, Lean not installed: one
        line saying how to install it), or None.  With ``ctx.planning`` True (the
        xdist controller planning the run) answer from caches only and prepare
        nothing: a skip that needs a preparation not cached yet (SpecEval's refuted
        ground truth) is None there, and the worker running the item decides it."""

    def prompt(self, task: Task, settings: Any) -> Prompt:
        """Render the prompt the model gets for ``task``."""

    def reference(self, task: Task, check: str) -> str:
        """The benchmark's own answer (what ``--model=reference`` answers)."""

    def run_check(self, check: str, task: Task, sample: Any, ctx: CheckContext) -> CheckResult:
        """Run ``check`` on a sample (a :class:`~pytest_specbench.models.base.Completion`);
        untrusted code goes through ``ctx``'s sandboxed executors."""

    def aggregate(self, results: Mapping[str, Sequence[Mapping[str, Any]]], tasks: Mapping[str, Task],
                  settings: Any) -> dict[str, Any]:
        """Metrics from ``{task_id: [{"index": i, "checks": {check: details}}]}``
        (errored and skipped items absent) and the tasks by id.  Each metric's
        docstring cites its paper section.  The report's bootstrap resamples
        task clusters (``Task.cluster``) and calls ``aggregate`` again."""

    def metric_names(self, settings: Any) -> Sequence[str]:
        """The metrics ``aggregate`` returns, in display order (thresholds
        such as ``--specbench-fail-under=pass@1=70`` are checked against these)."""
