"""The one fake context, fake model and fake executor of the unit tests.

An adapter's check receives a :class:`~pytest_specbench.engine.context.CheckContext`;
:func:`fake_context` builds that very class over :class:`FakeServices`, so a test
gives exactly what a real run gives (``settings``, ``option``, ``executor``,
``python_executor``, ``model``, ``cache_dir``, ``result_of``) and an adapter never
needs to ask whether its context has something.  Executors a test does not hand
in are refused with an AssertionError naming the kind (a check that must not
run anything fails loudly instead of reaching a real sandbox).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Mapping

from pytest_specbench.engine.context import CheckContext
from pytest_specbench.errors import OptionError
from pytest_specbench.execution.limits import Limits


class FakeSettings:
    """The fields of ``plugin.options.Settings`` that adapters read; ``option``
    answers from ``options`` (``default`` for any other name)."""

    def __init__(self, state_dir: Path | None = None, *, limits: Limits | None = None, details: bool = False,
                 model_spec: str = "reference", sandbox: str = "process", default: Any = None,
                 options: Mapping[str, Any] | None = None, **more: Any):
        self.state_dir = Path(state_dir) if state_dir is not None else None
        self.limits = limits if limits is not None else Limits()
        self.details, self.model_spec, self.sandbox, self.default = details, model_spec, sandbox, default
        self.options = dict(options or {})
        self.ks, self.samples, self.checks, self.data_root, self.sample_python = [1], None, [], None, ""
        self.data_bundled: dict[str, str] = {}  # benchmarks on their bundled suite beside the download cache
        for name, value in more.items():
            setattr(self, name, value)

    def option(self, name: str) -> Any:
        return self.options.get(name, self.default)


class FakeServices:
    """Executors, model roles and cache folders a test hands in.

    ``executors`` maps a kind to an executor, or to a callable making one on
    first use (``lambda: make_executor("jvm", settings, [])``)."""

    def __init__(self, cache_root: Path | None = None, executors: Mapping[str, Any] | None = None,
                 models: Mapping[str, Any] | None = None):
        self.cache_root = Path(cache_root) if cache_root is not None else None
        self.executors = dict(executors or {})
        self.models = dict(models or {})
        self._made: dict[str, Any] = {}

    def executor(self, kind: str) -> Any:
        if kind not in self.executors:
            raise AssertionError(f"this test gives the check no {kind!r} executor")
        if kind not in self._made:
            given = self.executors[kind]
            self._made[kind] = given() if callable(given) and not hasattr(given, "run") else given
        return self._made[kind]

    def model(self, role: str) -> Any:
        if role not in self.models:
            raise OptionError(f"--{role}-model", "not configured")
        return self.models[role]

    def cache_dir(self, *parts: str) -> Path:
        if self.cache_root is None:
            raise AssertionError("this test gives the check no cache folder")
        path = self.cache_root.joinpath("cache", *parts)
        path.mkdir(parents=True, exist_ok=True)
        return path


def fake_context(settings: Any = None, *, cache: Path | None = None, executors: Mapping[str, Any] | None = None,
                 models: Mapping[str, Any] | None = None,
                 results: Mapping[str, Any] | Callable[[str], Any] | None = None, **options: Any) -> CheckContext:
    """A real :class:`CheckContext` over fake services.

    ``settings``: a :class:`FakeSettings` (default: one over ``options`` and
    ``cache``); ``results``: ``result_of`` answers, a mapping check -> CheckResult
    or a callable (default: no other check has a result; a mapping becomes a
    :class:`FakeResults`, which the test may change)."""
    if settings is None:
        settings = FakeSettings(cache, options=options)
    elif options:
        raise TypeError("give options either in settings or as keywords")
    lookup = results if callable(results) else FakeResults(results or {})
    return CheckContext(settings, FakeServices(cache, executors, models), lookup)


class FakeResults(dict):
    """``result_of`` answers, check -> CheckResult, that a test may change as it goes
    (``ctx.results["correct"] = ...``)."""

    def __call__(self, check: str) -> Any:
        return self.get(check)


class FakeModel:
    """A model role (``judge``) answering with ``answer(request) -> str``; keeps the requests."""

    def __init__(self, answer: Callable[[Any], str] | str, role: str = "judge", spec: str = "fake"):
        self.answer = answer if callable(answer) else (lambda _request: answer)
        self.role, self.spec = role, spec
        self.requests: list[Any] = []

    def ask(self, request: Any) -> str:
        self.requests.append(request)
        return self.answer(request)

    def identity(self) -> dict[str, Any]:
        return {"spec": self.spec}

    def manifest(self) -> dict[str, Any]:
        return {"role": self.role, "spec": self.spec}


class FakeExecutor:
    """An executor that runs nothing: ``respond(*args, **kwargs)`` gives each
    ``run``'s result; the calls are kept; ``missing`` is what ``available`` says."""

    def __init__(self, respond: Callable[..., Any], missing: str | None = None):
        self.respond, self.missing = respond, missing
        self.calls: list[tuple[tuple, dict]] = []

    def available(self) -> str | None:
        return self.missing

    def run(self, *args: Any, **kwargs: Any) -> Any:
        self.calls.append((args, kwargs))
        return self.respond(*args, **kwargs)

    def close(self) -> None:
        pass


def install_family(site: Path, module: str, source: str, entry: str) -> Path:
    """A family as an installed distribution in ``site``: the module ``module``
    with ``source`` and a ``specbench.benchmarks`` entry point ``entry`` ->
    ``module:ADAPTER`` (put ``site`` on PYTHONPATH or sys.path to install it)."""
    (site / module).mkdir(parents=True)
    (site / module / "__init__.py").write_text(source)
    dist = site / f"{module}-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(f"[specbench.benchmarks]\n{entry} = {module}:ADAPTER\n")
    return site
