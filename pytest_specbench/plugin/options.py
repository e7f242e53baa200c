"""Command-line options and ini keys, read once into :class:`Settings`.

Every option lives in the ``specbench`` group of ``pytest --help`` and has an
ini key of the same name (dashes become underscores; ``--model`` is
``specbench_model``).  The command line wins over the ini file.
"""
from __future__ import annotations

import importlib
import os
import re
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import pytest

from ..benchmarks import declared_options as registered_options, get_benchmark, known_benchmarks
from ..types import Option
from ..engine.shards import parse_shard
from ..errors import OptionError
from ..execution.limits import Limits

# (option, ini key, help, default)
_OPTIONS = [
    ("--specbench", "specbench", "benchmarks to run, comma-separated, or all (known: {known})", ""),
    ("--model", "specbench_model", "model to evaluate: reference (the benchmark's own answers) | replay:PATH | "
     "openai:MODEL | python:module:callable; default: the last run's model (pytest's cache), printed", ""),
    ("--specbench-data", "specbench_data", "data root laid out like the upstream data (contracteval/, evalplus/, ...), "
     "or 'bundled'; default: for each benchmark, $SPECBENCH_DATA (specbench data download) when it holds that "
     "benchmark's data, else its bundled sample suite", ""),
    ("--specbench-report", "specbench_report", "write the JSON report here", ""),
    ("--specbench-samples", "specbench_samples", "samples per task (default: 1, or all a replay file has)", ""),
    ("--specbench-k", "specbench_k", "k values for pass@k, comma-separated", "1,10,100"),
    ("--specbench-checks", "specbench_checks", "run only these checks, comma-separated (default: all)", ""),
    ("--specbench-tasks", "specbench_tasks", "run only these tasks, by exact id, comma-separated (-k matches "
     "substrings: -k 17 also selects 117 and 170); an item id as pytest prints it "
     "(specbench::BENCH::TASK::SAMPLE::CHECK) may also be given as an argument", ""),
    ("--specbench-dir", "specbench_dir", "folder for caches and run journals (default: .specbench in the rootdir)", ""),
    ("--specbench-result-cache", "specbench_result_cache", "reuse check results of identical earlier runs "
     "(same sample text, data, limits, options): readwrite or off", "readwrite"),
    ("--specbench-dedupe", "specbench_dedupe", "evaluate each distinct program once per task and check, and give "
     "its copies (other samples with the same program) its verdict: on or off (docs/dedupe.md)", "on"),
    ("--specbench-sandbox", "specbench_sandbox", "process (isolated child per sample) or none (NO isolation: trusted code only)", "process"),
    ("--specbench-sample-python", "specbench_sample_python", "interpreter or venv folder that runs the samples "
     "(default: the one running pytest; samples import what it has installed, read-only)", ""),
]


_OPTION_PROVIDERS = (
    "pytest_specbench.models.options:addoption",
    "pytest_specbench.reports.journal:addoption",
    "pytest_specbench.reports.gate_options:addoption",
)


def _limit_options() -> list[tuple[str, str, str, str]]:
    docs = {"call_cpu": "CPU seconds per call (per input), at least",
            "reference_factor": "per-input limit as a multiple of the reference's cost, when that is higher", "startup_cpu": "CPU seconds to load a sample",
            "wall_factor": "wall-clock limit per call (and for loading a sample) as a multiple of its CPU limit",
            "memory_mb": "address-space limit per sandboxed child, MiB",
            "processes": "processes a sandboxed child may have", "output_bytes": "captured stdout+stderr per child",
            "file_bytes": "largest file a child may write", "result_bytes": "result data a child may send",
            "tmp_mb": "size of the sandbox's private /tmp, MiB"}
    defaults = Limits()
    return [(opt, opt.lstrip("-").replace("-", "_"), f"sandbox limit: {docs[name]} (default {getattr(defaults, name)})", "")
            for name, opt in Limits.option_names().items()]


class _HelpEscapingGroup:
    """An option group whose helps may contain a plain ``%`` ("pass@1=70%"):
    argparse %-formats help strings, and one bare ``%`` made ``pytest --help``
    crash for every project with the plugin installed.  Ini helps are not
    formatted, so they keep the text as written."""

    def __init__(self, group: Any):
        self._group = group

    def addoption(self, *names: str, **kwargs: Any) -> None:
        if isinstance(kwargs.get("help"), str):
            kwargs["help"] = re.sub("%%|%", "%%", kwargs["help"])
        self._group.addoption(*names, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._group, name)


def addoption(parser: pytest.Parser) -> None:
    group = _HelpEscapingGroup(parser.getgroup("specbench", "specification benchmarks (pytest-specbench)"))
    known = ", ".join(known_benchmarks())
    for opt, ini, text, default in _OPTIONS + _limit_options():
        text = text.format(known=known)
        group.addoption(opt, dest=ini, default=None, help=text)
        parser.addini(ini, text, default=default)
    group.addoption("--specbench-details", dest="specbench_details", action="store_true", default=None,
                    help="run every input of a failing sample (default: stop at its first failure)")
    parser.addini("specbench_details", "run every input of a failing sample", type="bool", default=False)
    group.addoption("--specbench-shard", dest="specbench_shard", default=None, metavar="I/N",
                    help="run shard I of N (0 <= I < N): whole tasks, split by predicted cost, the same on every "
                         "host; 'specbench merge' joins the shards' journals into one report (docs/distributed.md)")
    group.addoption("--specbench-merge", dest="specbench_merge", default=None, metavar="JOURNAL",
                    help="set by 'specbench merge': every outcome from this joined journal of the shards, no item run")

    def addini(name: str, text: str, default: Any = None, type: str | None = None) -> None:  # noqa: A002
        parser.addini(name, text, default=default, type=type)

    seen: set[str] = set()
    # From each family's options module: no adapter (nor its machinery) is imported here.
    for opt in registered_options():
        if opt.name in seen:  # two adapters of a family may share one option
            continue
        seen.add(opt.name)
        help_text = opt.help + (f" (one of: {', '.join(opt.choices)})" if opt.choices else "")
        group.addoption(opt.flag, dest=opt.name, default=None, help=help_text)
        parser.addini(opt.name, f"default for {opt.flag}", default=_ini_default(opt))
    # Shared services register their own options (models, journal, gate).
    for provider in _OPTION_PROVIDERS:
        module, _, attr = provider.partition(":")
        try:
            add = getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError):
            continue
        add(group, addini)


NODE_IDS = "specbench_node_ids"  # config.option attribute: item ids taken from the arguments


def take_node_ids(config: pytest.Config) -> None:
    """Arguments that are our item ids (``specbench::BENCH::TASK::SAMPLE::CHECK``, as
    pytest prints them) select items instead of naming files: pytest would look for
    a file called ``specbench``.  Every xdist worker does the same with the same
    arguments, so all of them build the same, narrowed, collection."""
    ids = [a for a in config.args if a.startswith("specbench::")]
    if not ids:
        return
    config.args[:] = [a for a in config.args if a not in ids]
    setattr(config.option, NODE_IDS, ids)


def declared_options(adapter: Any) -> tuple[Option, ...]:
    return tuple(getattr(adapter, "options", ()) or ())


def _ini_default(opt: Option) -> Any:
    if opt.default is None:
        return ""
    if opt.multiple and isinstance(opt.default, (list, tuple)):
        return ",".join(map(str, opt.default))
    return opt.default if isinstance(opt.default, str) else str(opt.default)


def validate_option(opt: Option, config: pytest.Config) -> Any:
    """The checked value of one declared option (command line, then ini, then default).

    A bad value is a one-line :class:`OptionError` naming the flag and, when it came
    from an ini file, the ini key."""
    cli = config.getoption(opt.name, default=None)
    raw = cli if cli is not None else config.getini(opt.name)
    where = opt.flag if cli is not None else f"{opt.flag} (ini key {opt.name})"
    if raw is None or raw == "" or raw == []:
        return opt.default
    if not isinstance(raw, str):
        return raw
    parts = [p.strip() for p in raw.split(",") if p.strip()] if opt.multiple else [raw.strip()]
    values = []
    for part in parts:
        if opt.choices is not None and part not in opt.choices:
            raise OptionError(where, f"expected one of {', '.join(opt.choices)}, got {part!r}")
        try:
            values.append(opt.parse(part) if opt.parse else part)
        except ValueError as exc:
            raise OptionError(where, _readable(exc, part)) from None
    return values if opt.multiple else values[0]


def _readable(exc: ValueError, text: str) -> str:
    """A parse error in the user's terms, not Python's ("invalid literal for int() ...")."""
    message = str(exc)
    if message.startswith("invalid literal for int()"):
        return f"expected a whole number, got {text!r}"
    if message.startswith("could not convert string to float"):
        return f"expected a number, got {text!r}"
    return message


def _value(config: pytest.Config, key: str) -> Any:
    value = config.getoption(key, default=None)
    return config.getini(key) if value is None else value


LAST_MODEL_KEY = "specbench/last_model"  # config.cache: the model the last run evaluated
WORKER_MODEL_KEY = "specbench_model"  # workerinput: the controller's model, for a worker on any host
# The options that, with the spec, decide which model answers and how: a run that takes the
# last run's model takes those of them the last run set and this one does not.
MODEL_IDENTITY_OPTIONS = ("model_base_url", "model_temperature", "model_max_tokens", "model_seed")


def _model_spec(config: pytest.Config) -> tuple[str, str]:
    """The model to evaluate and where it came from ("" named, "last run").

    A run never picks a model the user did not name (#44): without ``--model``
    (or the ``specbench_model`` ini key) it takes the model the last run in this
    rootdir evaluated, recorded in pytest's cache with its endpoint and
    generation parameters (so a FAILED id copied from a run, or ``--lf``, runs
    against the same model), and says so; with no last run it is one usage line.
    An xdist worker takes the controller's, which may be on another host without
    this cache."""
    workerinput = getattr(config, "workerinput", None) or {}
    model = workerinput.get(WORKER_MODEL_KEY) or None
    origin = ""
    if model is None:
        given = str(_value(config, "specbench_model") or "").strip()
        if given:
            return given, ""
        cache = getattr(config, "cache", None)
        model = cache.get(LAST_MODEL_KEY, None) if cache is not None else None
        if not isinstance(model, dict) or not str(model.get("spec") or "").strip():
            raise OptionError("--model", "not given, and no earlier run here to take it from: name the model "
                                         "to evaluate, e.g. --model=reference for the benchmarks' own answers "
                                         "(or replay:PATH, openai:NAME, python:module:callable)")
        if model.get("credentials"):
            raise OptionError("--model", f"not given; the last run's model ({model['spec']} at "
                                         f"{model.get('options', {}).get('model_base_url', '?')}) had credentials "
                                         "in its --model-base-url, which are never written down: name it again")
        origin = "last run"
    for dest, value in (model.get("options") or {}).items():
        if dest in MODEL_IDENTITY_OPTIONS and getattr(config.option, dest, None) is None:
            setattr(config.option, dest, value)
    return str(model["spec"]).strip(), origin


def model_record(config: pytest.Config, model_spec: str) -> dict[str, Any]:
    """The run's model as :func:`_model_spec` takes it back: the spec and the identity options
    given on the command line (an ini file's apply by themselves).  A base URL carrying
    credentials is kept redacted, and marked, so it is never written to disk."""
    from ..models.endpoints import redact_url

    options = {dest: str(value) for dest in MODEL_IDENTITY_OPTIONS
               if (value := config.getoption(dest, default=None)) not in (None, "")}
    record: dict[str, Any] = {"spec": model_spec, "options": options}
    url = options.get("model_base_url")
    if url is not None and redact_url(url) != url:
        options["model_base_url"] = redact_url(url)
        record["credentials"] = True
    return record


def remember_model(config: pytest.Config, model_spec: str) -> None:
    """Controller: record the run's model as the one a later run without ``--model`` uses."""
    cache = getattr(config, "cache", None)
    if cache is not None and not hasattr(config, "workerinput"):
        cache.set(LAST_MODEL_KEY, model_record(config, model_spec))


def _int_list(text: str, option: str) -> list[int]:
    try:
        values = [int(v) for v in str(text).split(",") if v.strip()]
    except ValueError:
        raise OptionError(option, f"expected comma-separated whole numbers, got {text!r}") from None
    if not values or any(v < 1 for v in values):
        raise OptionError(option, f"expected positive whole numbers, got {text!r}")
    return values


@dataclass
class Settings:
    """Everything the options say, checked; built in every process (controller and workers)."""

    benchmarks: list[str]
    model_spec: str
    data_root: Path | None
    report: Path | None
    samples: int | None
    ks: list[int]
    checks: list[str] | None
    details: bool
    state_dir: Path
    sandbox: str
    limits: Limits
    config: Any = field(repr=False, default=None)
    sample_python: str = ""  # interpreter for samples ("": the one running pytest)
    # "SPECBENCH_DATA": data_root is the download cache, chosen because it holds the data.
    data_origin: str = ""
    # Benchmarks that read their bundled suite though the run has no --specbench-data:
    # the download cache lacks their folders (data.fetch.cache_readers), each with the
    # line that says so ("" when no benchmark of the run reads the cache).
    data_bundled: dict[str, str] = field(default_factory=dict)
    # Declared options (types.Option) of the selected adapters, validated.
    benchmark_options: dict[str, Any] = field(default_factory=dict)
    tasks: frozenset[str] | None = None  # --specbench-tasks: exact task ids (None: every task)
    # Item ids given as arguments (specbench::BENCH[::TASK[::SAMPLE[::CHECK]]]): only those items run.
    selection: tuple[str, ...] = ()
    # "last run": --model was not given and the last run's model (pytest's cache) is used; "" when named.
    model_origin: str = ""
    shard: tuple[int, int] | None = None  # --specbench-shard=I/N: (I, N)
    merge: Path | None = None  # specbench merge: the joined journal whose outcomes make the report

    def selected(self, nodeid: str) -> bool:
        """Whether an item is among the ids given as arguments (all are, when none were)."""
        return not self.selection or any(nodeid == s or nodeid.startswith(s + "::") for s in self.selection)

    def option(self, name: str) -> Any:
        """A declared benchmark option's validated value; any other option from the
        command line, then the ini file."""
        if name in self.benchmark_options:
            return self.benchmark_options[name]
        return _value(self.config, name)

    @classmethod
    def from_config(cls, config: pytest.Config) -> "Settings | None":
        selection = tuple(getattr(config.option, NODE_IDS, None) or ())
        names = [n.strip() for n in str(_value(config, "specbench") or "").split(",") if n.strip()]
        if not names:  # `pytest specbench::contract::TASK::0::functional` alone: that item's benchmark
            names = list(dict.fromkeys(s.split("::")[1] for s in selection if s.count("::") >= 1))
        if not names:
            return None
        if "all" in names:  # every registered benchmark, in name order
            names = known_benchmarks() + [n for n in names if n != "all" and n not in known_benchmarks()]
        benchmark_options: dict[str, Any] = {}
        for name in names:
            adapter = get_benchmark(name)  # one-line error for an unknown name
            for opt in declared_options(adapter):
                benchmark_options[opt.name] = validate_option(opt, config)
        data = str(_value(config, "specbench_data") or "")
        workerinput = getattr(config, "workerinput", None) or {}
        if workerinput.get("specbench_remote"):  # an xdist worker on another host (plugin/remote.py)
            data = workerinput.get("specbench_data", data)  # --specbench-remote-data
        data_root, data_origin, data_bundled = None, "", {}
        if not data:  # the download cache, for each benchmark whose data it holds (specbench data download)
            from ..data.fetch import cache_readers, default_root

            readers, data_bundled = cache_readers(default_root(), names)
            if readers:
                data_root, data_origin = default_root(), "SPECBENCH_DATA"
        elif data == "bundled":
            data = ""
        if data:
            data_root = Path(data).expanduser()
            if not data_root.is_absolute():
                data_root = Path(config.invocation_params.dir) / data_root
            if data_root.exists() and not data_root.is_dir():
                raise OptionError("--specbench-data", f"{data_root} is a file; the data root is a folder "
                                                      "laid out like the upstream data (contracteval/, evalplus/, ...)")
            if not data_root.is_dir():
                raise OptionError("--specbench-data", f"data root not found: {data_root}")
        report = str(_value(config, "specbench_report") or "")
        samples = str(_value(config, "specbench_samples") or "")
        checks = str(_value(config, "specbench_checks") or "")
        sandbox = str(_value(config, "specbench_sandbox") or "process")
        if sandbox not in ("process", "none"):
            raise OptionError("--specbench-sandbox", f"expected process or none, got {sandbox!r}")
        state = (str(_value(config, "specbench_dir") or "") or os.environ.get("SPECBENCH_DIR", "")
                 or str(config.rootpath / ".specbench"))
        if workerinput.get("specbench_remote"):  # its own caches on its own disk, never the controller's path
            state = os.environ.get("SPECBENCH_DIR") or str(Path.home() / ".specbench")
        model_spec, model_origin = _model_spec(config)
        sample_python = str(_value(config, "specbench_sample_python") or "")
        if sample_python:
            from ..execution.environments import resolve_python

            sample_python = resolve_python(sample_python, Path(config.invocation_params.dir))
        limits = {}
        for f, opt in Limits.option_names().items():
            raw = _value(config, opt.lstrip("-").replace("-", "_"))
            if raw not in (None, ""):
                kind = next(x.type for x in fields(Limits) if x.name == f)
                try:
                    limits[f] = (int if kind == "int" else float)(raw)
                except ValueError:
                    raise OptionError(opt, f"expected a number, got {raw!r}") from None
        settings = cls(
            benchmarks=names,
            model_spec=model_spec,
            data_root=data_root,
            data_origin=data_origin,
            data_bundled=data_bundled,
            report=Path(report) if report else None,
            samples=_int_list(samples, "--specbench-samples")[0] if samples else None,
            ks=_int_list(_value(config, "specbench_k"), "--specbench-k"),
            checks=[c.strip() for c in checks.split(",") if c.strip()] or None,
            details=bool(_value(config, "specbench_details")),
            # Absolute: the executors hand this path to sandboxed tools (javac's class path,
            # the Lean project) that run in other working folders.
            state_dir=Path(os.path.abspath(Path(config.invocation_params.dir, state))),
            sandbox=sandbox,
            limits=Limits(**limits).validated(),
            config=config,
            sample_python=sample_python,
            benchmark_options=benchmark_options,
        )
        tasks = str(_value(config, "specbench_tasks") or "")
        settings.tasks = frozenset(t.strip() for t in tasks.split(",") if t.strip()) or None
        settings.selection = selection
        settings.model_origin = model_origin
        settings.shard = parse_shard(config.getoption("specbench_shard", None))
        merge = config.getoption("specbench_merge", None)
        settings.merge = Path(merge) if merge else None
        for wanted in selection:
            bench = wanted.split("::")[1] if wanted.count("::") >= 1 else ""
            if bench not in names:
                raise OptionError(wanted, f"benchmark {bench!r} is not in this run (--specbench={','.join(names)})")
        settings.check_model_options()
        return settings

    def check_model_options(self) -> None:
        """Every generation option, for the model and the judge, whatever the model
        kind: a bad value is one line now, not after collection (when a model that
        never reads it would have let it pass silently)."""
        from ..models.options import generation_options

        generation_options(self, "--model")
        generation_options(self, "--judge-model")
