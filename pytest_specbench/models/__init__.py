"""Model adapters: ``--model=SPEC`` parsing and the registry of model kinds.

Built in: ``reference``, ``replay:PATH``.  Other kinds register a factory in
:data:`MODEL_KINDS` (``openai:MODEL``) or, from another package, under the
``specbench.models`` entry-point group; ``python:module:callable`` loads any
factory by import path.  A factory takes the text after the first ``:`` and the
settings object and returns a :class:`~.base.Model`; a factory with an
``option`` keyword parameter also learns which option it serves (``--model``
or ``--judge-model``), so that a judge keeps its own parameters and cache
entries.  A model that calls a paid API should subclass
:class:`~.cache.CachingModel` (implementing ``identity`` and ``call``): it then
gets the cache, bounded concurrency and the xdist-safe generation phase.
"""
from __future__ import annotations

import importlib
import inspect
from importlib.metadata import entry_points
from typing import Any, Callable

from ..errors import OptionError
from .base import Model

ModelFactory = Callable[[str, Any], Model]


def _reference(arg: str, settings: Any) -> Model:
    from .reference import ReferenceModel

    if arg:
        raise OptionError("--model", "'reference' takes no argument")
    return ReferenceModel()


def _replay(arg: str, settings: Any) -> Model:
    from .replay import ReplayModel

    if not arg:
        raise OptionError("--model", "replay needs a path: --model=replay:samples.jsonl")
    return ReplayModel(arg)


_MODEL_METHODS = ("sample_indices", "generate", "completion", "manifest")
_PYTHON_FORMS = "def generate(prompt) -> str, or a factory def make(settings) -> Model"


def _python(arg: str, settings: Any) -> Model:
    """``python:module:callable``: a plain ``generate(prompt) -> str`` (its answers
    cached like an API's, :mod:`.function`), or a factory of a :class:`~.base.Model`
    (a class, or a callable whose parameter is named ``settings``)."""
    from .function import FunctionModel, is_factory, takes_one_argument

    module_name, _, attr = arg.partition(":")
    if not module_name or not attr:
        raise OptionError("--model", "expected python:module:callable")
    try:
        target = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError, ValueError) as exc:
        raise OptionError("--model", f"cannot load {arg}: {type(exc).__name__}: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - the user's module failed while importing
        raise OptionError("--model", f"importing {module_name} failed: {type(exc).__name__}: {exc}") from None
    if not callable(target):
        raise OptionError("--model", f"{arg} is a {type(target).__name__}, not a callable ({_PYTHON_FORMS})")
    if not is_factory(target):
        if not takes_one_argument(target):
            raise OptionError("--model", f"{arg}{_signature(target)} cannot be called with one prompt ({_PYTHON_FORMS})")
        return FunctionModel(arg, target, settings)
    try:
        model = target(settings)
    except OptionError:
        raise
    except Exception as exc:  # noqa: BLE001 - the user's factory failed
        raise OptionError("--model", f"{arg}(settings) failed: {type(exc).__name__}: {exc}") from None
    missing = [m for m in _MODEL_METHODS if not callable(getattr(model, m, None))]
    if missing or not isinstance(getattr(model, "spec", None), str):
        what = f"has no {', '.join(missing)}" if missing else "has no spec (str)"
        raise OptionError("--model", f"{arg}(settings) returned a {type(model).__name__}, which {what}: "
                                     f"not a model ({_PYTHON_FORMS})")
    return model


def _signature(target: Any) -> str:
    try:
        return str(inspect.signature(target))
    except (TypeError, ValueError):
        return ""


MODEL_KINDS: dict[str, ModelFactory] = {"reference": _reference, "replay": _replay, "python": _python}


def _register_optional_kinds() -> None:
    try:
        from .openai_model import openai_factory  # noqa: F401  (issue: real models)
    except ImportError:
        return
    MODEL_KINDS.setdefault("openai", openai_factory)


def known_kinds() -> list[str]:
    _register_optional_kinds()
    kinds = set(MODEL_KINDS)
    kinds.update(ep.name for ep in entry_points(group="specbench.models"))
    return sorted(kinds)


def load_model(spec: str, settings: Any, option: str = "--model") -> Model:
    """Resolve ``spec`` (``kind`` or ``kind:argument``) to a model, or raise a one-line error."""
    _register_optional_kinds()
    kind, _, arg = (spec or "").partition(":")
    factory = MODEL_KINDS.get(kind)
    if factory is None:
        for ep in entry_points(group="specbench.models"):
            if ep.name == kind:
                factory = ep.load()
                break
    if factory is None:
        raise OptionError(option, f"unknown model {spec!r}; known kinds: {', '.join(known_kinds())}")
    try:
        if _accepts_option(factory):
            return factory(arg, settings, option=option)
        return factory(arg, settings)
    except OptionError as exc:
        # A factory that speaks of --model serves the role here; an error about one of the
        # role's own options (--judge-model-max-tokens) keeps that option's name.
        if option != "--model" and getattr(exc, "option", "--model") == "--model":
            raise OptionError(option, str(exc).split(": ", 1)[-1]) from None
        raise


def _accepts_option(factory: ModelFactory) -> bool:
    try:
        return "option" in inspect.signature(factory).parameters
    except (TypeError, ValueError):  # builtins and some C callables have no signature
        return False


def load_judge_model(settings: Any) -> Model | None:
    """The ``--judge-model`` (None when not given), for benchmarks graded by an LLM."""
    spec = str(settings.option("judge_model") or "").strip()
    return load_model(spec, settings, option="--judge-model") if spec else None
