"""``--model=python:module:generate`` with a plain function of the prompt.

``def generate(prompt: str) -> str`` is called once per (task, sample) with the
prompt's text (its chat messages joined by blank lines), in the controller's
generation phase like any paying model: its answers are cached on disk (keyed
by the function's source, so editing it asks again) and xdist workers only read
them.  A factory (``def make(settings) -> Model``) is the other form
(:func:`pytest_specbench.models.load_model`).
"""
from __future__ import annotations

import hashlib
import inspect
from typing import Any, Callable, Mapping

from .base import GenerationRequest
from .cache import CachingModel, FatalModelError


class FunctionModel(CachingModel):
    kind = "python"

    def __init__(self, target: str, function: Callable[[str], Any], settings: Any, option: str = "--model"):
        super().__init__(f"python:{target}", settings, option)
        self.target, self.function = target, function
        try:
            source = inspect.getsource(function)
        except (OSError, TypeError):  # built in, or defined at a prompt: its name is all there is
            source = repr(function)
        self.source_sha256 = hashlib.sha256(source.encode()).hexdigest()

    def identity(self) -> dict[str, Any]:
        return {"model": self.spec, "source_sha256": self.source_sha256}

    def call(self, request: GenerationRequest, parameters: Mapping[str, Any]) -> dict[str, Any]:
        prompt = "\n\n".join(m.content for m in request.prompt.messages)
        answer = self.function(prompt)
        if not isinstance(answer, str):
            # Every call would do the same: one usage line, not an error per item.
            raise FatalModelError(f"{self.spec} returned {type(answer).__name__}, not the answer's text (str)")
        return {"text": answer}


def is_factory(target: Callable[..., Any]) -> bool:
    """A factory of models (a class, or a callable whose parameter is named
    ``settings``) rather than a function of the prompt."""
    if inspect.isclass(target):
        return True
    try:
        parameters = list(inspect.signature(target).parameters.values())
    except (TypeError, ValueError):
        return False
    return bool(parameters) and parameters[0].name == "settings"


def takes_one_argument(target: Callable[..., Any]) -> bool:
    try:
        inspect.signature(target).bind("prompt")
    except TypeError:
        return False
    except ValueError:  # no signature to read: let the call decide
        return True
    return True
