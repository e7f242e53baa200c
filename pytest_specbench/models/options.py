"""Options of the model layer: endpoint, generation parameters, cache, judge.

Registered through :func:`addoption`, which :mod:`pytest_specbench.plugin.options`
calls with the ``specbench`` option group.  Each option has an ini key named
like its ``dest`` (``--model-base-url`` is ``model_base_url``); values are read
with ``settings.option(dest)`` and checked by :func:`generation_options`.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import OptionError

CACHE_MODES = ("readwrite", "read", "off")
# The judge's parameters when neither the user nor the benchmark sets them: the CIFE paper's
# LLM-as-judge (GPT-4o-mini, temperature 0.1, max_tokens 2048; §6, "Experimental setup").
JUDGE_DEFAULTS = {"temperature": 0.1, "max_tokens": 2048}

# (option, dest and ini key, help, ini default)
MODEL_OPTIONS = [
    ("--model-base-url", "model_base_url",
     "base URL of an OpenAI-compatible server for --model=openai:MODEL (vLLM, Ollama, LM Studio, ...); "
     "default: $OPENAI_BASE_URL, else api.openai.com", ""),
    ("--model-temperature", "model_temperature",
     "sampling temperature (default: 0 for one sample per task, 0.8 for several)", ""),
    ("--model-max-tokens", "model_max_tokens", "most tokens one answer may have (default 2048)", "2048"),
    ("--model-seed", "model_seed", "seed sent with each request (sample i gets seed+i); default: none", ""),
    ("--model-concurrency", "model_concurrency", "requests in flight at once during generation (default 8)", "8"),
    ("--model-timeout", "model_timeout", "seconds one request attempt may take (default 300)", "300"),
    ("--model-retries", "model_retries",
     "retries of a request after HTTP 408/409/429/5xx or a connection error, honouring Retry-After (default 6)", "6"),
    ("--judge-model", "judge_model", "model that grades answers for benchmarks that need one; same grammar as --model", ""),
    ("--judge-model-base-url", "judge_model_base_url",
     "base URL for --judge-model=openai:MODEL (default: $OPENAI_BASE_URL, else api.openai.com)", ""),
    # The judge's own generation parameters: --model-* never reach it (a judge's JSON answer
    # cut off by the tested model's --model-max-tokens is unreadable, issue #32).  Unless given,
    # a benchmark's own judge parameters apply (CIFE's prompts carry them), else these
    # defaults: the CIFE paper's judge, GPT-4o-mini at temperature 0.1, max_tokens 2048 (§6).
    ("--judge-model-temperature", "judge_model_temperature",
     "temperature of the judge model (default: the benchmark's, else 0.1 as in the CIFE paper)", ""),
    ("--judge-model-max-tokens", "judge_model_max_tokens",
     "most tokens one judge answer may have (default: the benchmark's, else 2048 as in the CIFE paper)", ""),
    ("--judge-model-seed", "judge_model_seed",
     "seed sent with each judge request (a retry after an unreadable answer sends seed+attempt); default: none", ""),
    # Structured output for the judge (#44): the answer's JSON schema goes with each question
    # (response_format), where the endpoint accepts it.  Off by default: the CIFE paper's judge
    # (GPT-4o-mini, §6) was asked with the prompt alone.
    ("--judge-model-structured", "judge_model_structured",
     "on: send the judge the JSON schema of a readable verdict as response_format (json_schema, as OpenAI "
     "and vLLM take it; else json_object with the schema, as llama-cpp-python's server takes it; else none), "
     "off (default, as in the CIFE paper): the prompt alone", "off"),
    ("--specbench-cache", "specbench_cache",
     "generation cache: readwrite (default), read (use cached answers, store nothing new) or off", "readwrite"),
    ("--specbench-cache-dir", "specbench_cache_dir",
     "generation cache folder (default: SPECBENCH_DIR/cache/generations)", ""),
    ("--specbench-save-samples", "specbench_save_samples",
     "write this run's generated samples to PATH as EvalPlus JSON lines (replay with --model=replay:PATH)", ""),
]


def addoption(group: Any, addini: Any) -> None:
    for opt, dest, text, default in MODEL_OPTIONS:
        group.addoption(opt, dest=dest, default=None, help=text)
        addini(dest, text, default=default)


@dataclass(frozen=True)
class GenerationOptions:
    """The checked values of the options above, for one model role (model or judge)."""

    base_url: str | None  # None: the client's own default ($OPENAI_BASE_URL or api.openai.com)
    temperature: float
    max_tokens: int
    seed: int | None
    concurrency: int
    timeout: float
    retries: int
    cache_mode: str
    cache_dir: Path
    save_samples: Path | None
    # Generation parameters the user set (command line or ini) rather than left to defaults:
    # a role's benchmark-given parameters (Prompt.parameters) yield to these only.
    explicit: frozenset[str] = frozenset()
    structured: bool = False  # the judge: --judge-model-structured=on


def _text(settings: Any, dest: str) -> str:
    value = settings.option(dest)
    return "" if value is None else str(value).strip()


def _number(settings: Any, dest: str, kind: type, minimum: float | None = None) -> Any:
    raw = _text(settings, dest)
    if not raw:
        return None
    option = "--" + dest.replace("_", "-")
    try:
        value = kind(raw)
    except ValueError:
        raise OptionError(option, f"expected {'a whole number' if kind is int else 'a number'}, got {raw!r}") from None
    if minimum is not None and value < minimum:
        raise OptionError(option, f"must be at least {minimum:g}, got {raw}")
    return value


def _path(settings: Any, raw: str) -> Path:
    path = Path(raw).expanduser()
    if not path.is_absolute() and getattr(settings, "config", None) is not None:
        path = Path(settings.config.invocation_params.dir) / path
    return path


def generation_options(settings: Any, option: str = "--model") -> GenerationOptions:
    """Read and check the generation options; ``option`` is ``--model`` or ``--judge-model``."""
    judge = option == "--judge-model"
    prefix = "judge_model" if judge else "model"
    temperature = _number(settings, f"{prefix}_temperature", float, 0)
    max_tokens = _number(settings, f"{prefix}_max_tokens", int, 1)
    seed = _number(settings, f"{prefix}_seed", int)
    explicit = frozenset(name for name, value in (("temperature", temperature), ("max_tokens", max_tokens),
                                                  ("seed", seed)) if value is not None)
    if temperature is None:
        # The judge: the CIFE paper's 0.1 (§6).  The tested model: EvalPlus' convention,
        # greedy for pass@1, sampling when several samples are asked for.
        temperature = JUDGE_DEFAULTS["temperature"] if judge else 0.0 if (settings.samples or 1) == 1 else 0.8
    if max_tokens is None:
        max_tokens = JUDGE_DEFAULTS["max_tokens"] if judge else 2048
    cache_mode = _text(settings, "specbench_cache") or "readwrite"
    if cache_mode not in CACHE_MODES:
        raise OptionError("--specbench-cache", f"expected one of {', '.join(CACHE_MODES)}, got {cache_mode!r}")
    cache_dir = _text(settings, "specbench_cache_dir")
    save = _text(settings, "specbench_save_samples")
    structured = (_text(settings, "judge_model_structured") or "off").lower()
    if structured not in ("on", "off"):
        raise OptionError("--judge-model-structured", f"expected on or off, got {structured!r}")
    return GenerationOptions(
        base_url=_text(settings, f"{prefix}_base_url") or None,
        temperature=temperature,
        max_tokens=max_tokens,
        seed=seed,
        concurrency=_number(settings, "model_concurrency", int, 1) or 8,
        timeout=_number(settings, "model_timeout", float, 0.001) or 300.0,
        retries=_number(settings, "model_retries", int, 0) if _text(settings, "model_retries") else 6,
        cache_mode=cache_mode,
        cache_dir=_path(settings, cache_dir) if cache_dir else Path(settings.state_dir) / "cache" / "generations",
        save_samples=_path(settings, save) if save and not judge else None,
        explicit=explicit,
        structured=judge and structured == "on",
    )
