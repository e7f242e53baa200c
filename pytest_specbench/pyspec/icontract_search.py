"""The ``pbt`` tier for an icontract postcondition on a repository's REAL method
(PostcondBench Python, issue #47; docs/tiers.md, "PostcondBench"), job side.

Shipped into a blocks job (:func:`.blocks.blocks_job` with ``keeper``) as
``specbench_search.py``, beside ``specbench_blocks.py`` (the keeper, the zygote
and the confined case children), ``specbench_pbt.py`` (nl2postcond's keeper,
:mod:`.pbt_keeper`: its strategies and perturbations) and ``specbench_pyspec.py``
(:mod:`.spec_process`: how the answer's decorators are evaluated).  The job runs
with the repository's interpreter (its venv, as the tests do).

Where the verdict lives, and what each process holds:

* the **zygote** (forked before the keeper read its search configuration)
  imports the repository's module (:func:`prepare`, the preamble) and icontract,
  and holds the answer's decorator text as data; it never calls the method and
  never holds a case.
* a **case child** of the zygote, confined by seccomp (no file, socket, process
  or signal), gets ONE case of plain data: the arguments before the call, the
  arguments after it, and the result to show (:func:`check_case`).  It
  evaluates the answer's decorators in the module's namespace, applies them to
  a stand-in of the method that puts the arguments in their after-state (in
  place) and returns the shown result, and calls it with the arguments before
  the call: icontract takes its ``OLD`` snapshots, checks the conditions on
  ``result`` and the arguments, exactly as the repository's decorators would on
  the real call.  The method itself never runs there: the module's state is the
  import's (nothing the real calls changed), and whether the result is the
  method's own or a perturbed one is nowhere in the child's memory but in the
  values.
* the **keeper** (holder of the result channel) imports the module itself after
  the fork, then Hypothesis; draws arguments from the strategies the harness
  derived (type hints, simple ``require``/``assert`` bounds), filters them by
  the validity conditions, calls the real method on a copy (1 s alarm; an input
  where it raises or overruns is not judged), and asks one fresh child per case:
  AC (the method's result) and RW (a type-directed perturbation of it, the
  nl2postcond tier's), in a random order, the decided relation's cases kept as
  decoys.  A fixed seed (``pbt_keeper.ICONTRACT_SEED``), no example database; Hypothesis shrinks input
  and perturbation together.  Records as :mod:`.pbt_keeper`'s
  (:func:`.search.read_search` reads them).
"""
import copy
import functools
import importlib
import random
import signal
import sys
import textwrap
import time

import wire

RELATIONS = ("AC", "RW")
SPEC_KEY = "pbt"
_STATE = {}


# ------------------------------------------------------------------ zygote and case child

def prepare(paths, module_name, name, spec, eval_name):
    """In the zygote (the preamble): the repository's module imported, with what
    the injection's first line gives the answer's decorators (``icontract``, the
    literal ``eval`` under ``eval_name``), the decorators registered as data
    (never evaluated here)."""
    sys.path[1:1] = [p for p in paths if p not in sys.path]
    import icontract  # imported before any child is confined (imports open files)
    import specbench_pyspec

    for lazy in ("asttokens.mark_tokens", "asttokens.util", "asttokens.line_numbers", "tokenize", "inspect"):
        try:  # what icontract's message of a violation imports on first use
            importlib.import_module(lazy)
        except ImportError:
            pass

    module = importlib.import_module(module_name)
    module.__dict__.setdefault("icontract", icontract)
    module.__dict__.setdefault(eval_name, specbench_pyspec.safe_eval)
    specbench_pyspec.register({SPEC_KEY: spec})
    _STATE.update(func=getattr(module, name), pyspec=specbench_pyspec)


def _assign(obj, new):
    """Make ``obj`` (an argument before the call) hold ``new`` (its value after the
    call) in place, keeping the identity of nested containers where the shapes
    agree; False when ``obj`` cannot become ``new`` in place (the caller replaces it)."""
    if type(obj) is list and type(new) is list:
        if len(obj) != len(new):
            obj[:] = new
            return True
        for i, value in enumerate(new):
            if not _assign(obj[i], value):
                obj[i] = value
        return True
    if type(obj) is dict and type(new) is dict:
        for key in [k for k in obj if k not in new]:
            del obj[key]
        for key, value in new.items():
            if key not in obj or not _assign(obj[key], value):
                obj[key] = value
        return True
    if type(obj) is set and type(new) is set:
        obj.clear()
        obj.update(new)
        return True
    return type(obj) is type(new) and obj == new


def check_case(before, after, result_is, shown):
    """In a confined case child: the answer's postconditions on one call whose
    arguments go from ``before`` to ``after`` and whose result is ``shown`` (or
    the argument ``result_is``, when the method returned that argument itself).
    Returns when they hold; raises AssertionError (violated) or what a condition
    raised."""
    func, pyspec = _STATE["func"], _STATE["pyspec"]

    @functools.wraps(func)
    def the_call(*args):
        for arg, new in zip(args, after):
            _assign(arg, new)
        return args[result_is] if result_is is not None else shown

    decorated = pyspec.apply_spec(SPEC_KEY, func, the_call)
    try:
        decorated(*before)
    except BaseException as exc:  # noqa: BLE001 - the answer's, or icontract's on its behalf
        if pyspec.is_violation(exc):
            raise AssertionError(pyspec.describe_exception(exc)) from None
        raise


# ------------------------------------------------------------------ the keeper's search

class CallTimeout(BaseException):
    """A call of the real method ran out of its time (the input is not judged)."""


def _on_alarm(signum, frame):
    raise CallTimeout()


def _strategy(st, base, tree, bound):
    """``tree``'s strategy (nl2postcond's), narrowed by ``bound`` (from the
    method's simple ``require``/``assert`` forms: ``min``/``max`` of a number,
    ``min_size``/``max_size`` of a container or string, ``sorted``, ``items``: the
    elements' own bounds)."""
    if not bound:
        return base._strategy(st, tree)
    if tree in ("int", "float"):
        lo, hi = bound.get("min", -1000), bound.get("max", 1000)
        if tree == "int":
            lo, hi = int(lo), int(hi)
            return st.integers(lo, max(lo, min(hi, lo + 2000)))
        return st.floats(float(lo), float(hi), allow_nan=False, allow_infinity=False)
    if set(bound) == {"items"} and not (isinstance(tree, list) and tree[0] in ("list", "tuple_var", "set")):
        return base._strategy(st, tree)
    sizes = {"min_size": int(bound.get("min_size", 0))}
    sizes["max_size"] = max(sizes["min_size"], int(bound.get("max_size", sizes["min_size"] + 8)))
    if tree == "str":
        return st.text(st.characters(min_codepoint=32, max_codepoint=126), **sizes)
    if isinstance(tree, list) and tree[0] in ("list", "tuple_var", "set"):
        element = _strategy(st, base, tree[1], bound.get("items"))
        made = (st.sets if tree[0] == "set" else st.lists)(element, **sizes)
        if bound.get("sorted") and tree[0] != "set":
            made = made.map(sorted)
        return made.map(tuple) if tree[0] == "tuple_var" else made
    return base._strategy(st, tree)


def _plain(value):
    """Whether ``value`` travels to a child as plain data (no object wire cannot express)."""
    try:
        return '{"o":' not in wire.dumps(value).replace(" ", "")
    except (RecursionError, ValueError, TypeError):
        return False


def _cases(args, after, expected, shown):
    """The AC case (the method's result) and the RW case (``shown``) of one call, as a child gets them."""
    # (a container the method changes in place and returns; an int is shared by identity anyway)
    result_is = next((i for i, a in enumerate(after) if a is expected and type(a) in (list, dict, set)), None)
    after_rw, rw_is = list(after), None
    if result_is is not None and type(shown) is type(expected):
        # the method returns its argument: a wrong output of its type is that argument's wrong state
        after_rw[result_is], rw_is = shown, result_is
    return {"AC": {"inputs": {"__before": args, "__after": after, "__result_is": result_is}, "return_value": expected},
            "RW": {"inputs": {"__before": args, "__after": after_rw, "__result_is": rw_is}, "return_value": shown}}


def _replay(claims, call, ask, record):
    """Each claimed refutation again, in this fresh job: the method called anew on
    the claim's input, the case rebuilt, one fresh child asked; one record each."""
    for index, claim in enumerate(claims):
        args = wire.loads(claim["before"])
        ran = call(args)
        if ran is None:
            record({"event": "replay", "index": index, "status": "no call"})
            continue
        after, expected = ran
        shown = wire.loads(claim["shown"]) if claim["relation"] == "RW" else expected
        if claim["relation"] == "RW" and _same_plain(shown, expected):
            record({"event": "replay", "index": index, "status": "not wrong", "expected": wire.dumps(expected)})
            continue
        outcome = ask(_cases(args, after, expected, shown)[claim["relation"]])
        record({"event": "replay", "index": index, "status": "asked", "outcome": outcome,
                "expected": wire.dumps(expected)})


def _same_plain(a, b):
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001
        return False


def run(cfg, ask, record):  # noqa: C901 - one search, two relations
    """The search (``specbench_blocks`` calls it in the keeper, after the zygote's
    fork); ``ask(case)`` asks a fresh child, ``record(obj)`` writes a record."""
    sys.path[1:1] = [p for p in cfg["paths"] if p not in sys.path]
    func = getattr(importlib.import_module(cfg["module"]), cfg["name"])
    sys.path.extend(p for p in cfg["harness_paths"] if p not in sys.path)  # Hypothesis: the harness's
    import specbench_pbt as base

    params = cfg["params"]
    names = {"__name__": "__validity__", **vars(sys.modules[func.__module__])}
    valid_source = ("def __specbench_valid(" + ", ".join(params) + "):\n    pass\n"
                    + textwrap.indent("\n".join(cfg.get("require") or ()), "    ") + "\n")
    exec(compile(valid_source, "<validity>", "exec"), names)  # noqa: S102 - the repository's (or the hints') conditions
    valid = names["__specbench_valid"]
    call_seconds = float(cfg.get("call_seconds", 1.0))
    deadline = time.monotonic() + float(cfg["seconds"])
    signal.signal(signal.SIGALRM, _on_alarm)
    opaque = [0]

    def call(args):
        """(arguments after the call, result) of the real method, or None."""
        try:
            signal.setitimer(signal.ITIMER_REAL, call_seconds)
            try:
                valid(*copy.deepcopy(args))
                after = copy.deepcopy(list(args))
                out = func(*after)
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
        except (Exception, CallTimeout, RecursionError):  # noqa: BLE001 - not an input to judge on
            return None
        if not (_plain(out) and _plain(after)):
            opaque[0] += 1
            return None
        return after, out

    if cfg.get("replay"):
        _replay(cfg["replay"], call, ask, record)
        return
    # Hypothesis only for a search: a replay job never imported it (~0.25 CPU s of its start)
    import hypothesis
    from hypothesis import assume, strategies as st

    base.freeze_local_constants()  # the repository's module, loaded above, included
    inputs = st.tuples(*[_strategy(st, base, cfg["types"][p], (cfg.get("bounds") or {}).get(p)) for p in params])
    coin = random.SystemRandom()
    tried = {rel: 0 for rel in RELATIONS}

    def search(live):
        seen = []

        def check(data):
            assume(time.monotonic() <= deadline)  # out of time: the rest decides nothing
            args = list(data.draw(inputs, label="inputs"))
            ran = call(args)
            assume(ran is not None)
            after, expected = ran
            shown = data.draw(base._perturbed(st, expected, 1e-6), label="perturbation")
            assume(not base._same(shown, expected))
            cases = _cases(args, after, expected, shown)
            outs = base.ask_each(cases, ask, coin)
            for rel in RELATIONS:
                if rel not in live:
                    continue
                tried[rel] += 1
                failed = outs[rel]["kind"] != "holds" if rel == "AC" else outs[rel]["kind"] == "holds"
                if failed:
                    shown_case = {"inputs": dict(zip(params, args)), "return_value": cases[rel]["return_value"]}
                    found = {"relation": rel, "before": wire.dumps(args), "case": wire.dumps(shown_case),
                             "expected": wire.dumps(expected), "outcome": outs[rel]}
                    seen.append(found)
                    raise base.Refuted(found)

        return base.run_hypothesis(check, cfg["examples"], deadline, seen, base.ICONTRACT_SEED)

    def ended(rel, found):
        if found is not None and found.get("relation") == rel:
            return {"status": "refuted", **{k: v for k, v in found.items() if k != "relation"}}
        if found is not None and found.get("reason"):
            return {"status": "unknown", "reason": found["reason"]}
        if not tried[rel]:
            why = ("out of time before any case" if time.monotonic() > deadline else
                   "the method returns objects that cannot be shown as plain data" if opaque[0] else
                   "no valid input found from the types and the method's conditions")
            return {"status": "unknown", "reason": why}
        return {"status": "passed"}

    wanted = [rel for rel in RELATIONS if rel in cfg.get("relations", RELATIONS)]
    live, finished = list(wanted), {}
    try:
        while live:
            found = search(live)
            done = [found["relation"]] if found is not None and found.get("relation") in live else live
            finished.update({rel: found for rel in done})
            live = [rel for rel in live if rel not in done]
        for rel in wanted:
            record({"event": "search", "relation": rel, "tried": tried[rel], "hypothesis": hypothesis.__version__,
                    **ended(rel, finished[rel])})
    except base.HarnessFault as exc:
        record({"event": "search", "kind": "harness", "line": str(exc)[:300]})
