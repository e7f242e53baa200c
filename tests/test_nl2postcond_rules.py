"""nl2postcond's upstream rules that are pure logic (in-process, no sandbox):
``--nl2postcond-long-ints=upstream`` (docs/nl2postcond.md, "HumanEval/83")."""
from __future__ import annotations

import hashlib
import json

from pytest_specbench.benchmarks.nl2postcond.evaluate import has_long_int, over_upstream_digits
from pytest_specbench.benchmarks.nl2postcond.tools import agreement
from pytest_specbench.pyspec.blocks import BlockOutcome


def test_an_output_with_an_int_past_cpythons_text_limit_fails_under_upstreams_rule_only():
    """HumanEval/83's reference returns 18 * 10 ** (n - 2): 4,300 digits is fine, 4,301 is past
    CPython's default int_max_str_digits, wherever the int sits in the output."""
    at_limit, past = 18 * 10 ** 4298, 18 * 10 ** 4299  # 4,300 and 4,301 digits
    assert not has_long_int(at_limit) and not has_long_int(-at_limit) and not has_long_int([True, 1.5, "9" * 9000])
    assert all(has_long_int(v) for v in (past, -past, [1, [2, (past,)]], {"k": {past}}, {past: 0}))
    holds, violated = BlockOutcome("holds"), BlockOutcome("violated", "AssertionError")
    cases = [{"return_value": at_limit}, {"return_value": past}, {"return_value": [past]}]
    got = over_upstream_digits([holds, holds, violated], cases)
    assert got[0] == holds and got[2] == violated  # an outcome that already fails keeps its own reason
    assert (got[1].kind, got[1].exc_type) == ("raised", "ValueError") and "4300 digits" in got[1].line


def test_the_agreement_script_names_the_long_int_cause():
    row = {"task_id": "HumanEval/83", "r_num": 5, "test_set_correct": False, "base_error": None}
    assert "4,300 digits" in agreement._known_cause(row)


# ------------------------------------------------------------------ the corpus build's bytes (#46)

import subprocess
import sys

import pytest

from pytest_specbench.benchmarks.nl2postcond import corpus
from pytest_specbench.execution import wire
from pytest_specbench.execution.python import CallOutcome, JobResult


def test_a_corpus_line_is_the_same_bytes_whatever_the_hash_seed():
    """The build's process has no fixed hash seed: a bad output that is a set of strings
    must still give the same line (and the same distinct-pair key) in every build."""
    code = ("from pytest_specbench.benchmarks.nl2postcond.corpus import Kept, Bopi\n"
            "print(Kept('T/0', 7, True, (Bopi(0, ({'pear', 'fig', 'kiwi', 'plum'},), {'ab', 'cd', 'ef', 'gh'}),)).line())")
    lines = {subprocess.run([sys.executable, "-c", code], env={"PYTHONHASHSEED": seed, "PATH": ""}, check=True,
                            capture_output=True, text=True).stdout for seed in ("1", "2", "3")}
    assert len(lines) == 1, lines
    assert corpus.stable_text({"b", "a", frozenset({"d", "c"})}) in ('{"s":["a","b",{"f":["c","d"]}]}',
                                                                     '{"s":[{"f":["c","d"]},"a","b"]}')


def test_an_opaque_bad_output_gives_the_same_bytes_in_every_run_and_is_its_own_programs_pair():
    """HumanEval/1's program 87 yields (a generator): the sandbox sends such an output as its
    repr, which names a memory address, so two builds wrote two lines for it.  The address
    is left out; such an output equals only itself, so it is a pair of its program's own."""
    from pytest_specbench.benchmarks.nl2postcond.corpus import Bopi, Kept, pair_key
    from pytest_specbench.execution.wire import Opaque

    runs = [Opaque("builtins.generator", f"<generator object f at {address}>") for address in ("0x7fe1c9eeab60", "0x7f18")]
    lines = {Kept("T/1", 87, True, (Bopi(0, ("()",), [out]),)).line() for out in runs}
    assert len(lines) == 1 and "0x7f" not in lines.pop()
    assert pair_key(87, 0, [runs[0]]) == pair_key(87, 0, [runs[1]]) != pair_key(88, 0, [runs[0]])
    assert pair_key(87, 0, '{"o":"x","r":"y"}') == pair_key(88, 0, '{"o":"x","r":"y"}')  # a string is data


def test_a_program_that_draws_random_numbers_gives_the_same_outputs_in_every_build():
    """10 of upstream's programs call ``random`` (HumanEval/14's 204: a prefix dropped at random);
    a forked child's generator is seeded from the OS, so each build recorded other outputs.  The
    observed program seeds it once, when loaded: its calls draw in sequence (as upstream's unseeded
    run's did; seeded before each call, every call drew the same numbers), and every build draws
    the same.  Run here in-process (our own text); the test's generator is restored after."""
    import random

    from pytest_specbench.benchmarks.nl2postcond.observe import OBSERVER, observed_program

    text = observed_program("import random\ndef f(x):\n    return [random.random() for _ in range(x)]\n", "f")
    saved = random.getstate()
    try:
        builds = []
        for state in (1, 2):
            random.seed(state)  # what the child's generator was before the program was loaded
            namespace: dict = {}
            exec(compile(text, "<observed>", "exec"), namespace)
            builds.append([namespace[OBSERVER](3), namespace[OBSERVER](3)])
    finally:
        random.setstate(saved)
    assert builds[0] == builds[1]
    assert builds[0][0] != builds[0][1]  # the second call draws on, not the first call's numbers again


class _Executor:
    """The python executor's surface that observe() uses: each program's outcome per input
    from ``plan(code, wall_factor, index)`` ("ok" with the value, "cpu": a CPU time-out,
    "wall": a time-out the wall clock decided while the call ran, "slept": one it decided while
    the call slept, no CPU spent)."""

    def __init__(self, plan):
        self.plan, self.runs = plan, []

    def run(self, prepared, job, on_outcome):
        self.runs.append((job.code, job.wall_factor))
        outcomes = {}
        for i in job.indices:
            what = self.plan(job.code, job.wall_factor, i)
            out = (CallOutcome(i, "ok", wire.dumps([[i], what[1]]).encode()) if what[0] == "ok" else
                   CallOutcome(i, "timeout", wall_stop=what[0] in ("wall", "slept"), cpu=0.5 if what[0] == "wall" else 0.0))
            outcomes[i] = out
            if not on_outcome(out):
                break
        return JobResult(outcomes)


def _tiny_task():
    return {"T/0": {"task_id": "T/0", "entry_point": "f", "prompt": "def f(x):\n", "canonical_solution": "    return x\n",
                    "base_input": [[1], [2], [3]], "plus_input": [], "atol": 0}}


def test_a_time_out_the_load_decided_never_reaches_the_corpus(tmp_path, monkeypatch):
    """A buggy program that the wall clock stopped (CPU to spare: the machine's load) runs
    again alone with more wall time, and the part is what a quiet machine writes; if the
    wall clock stops it again on a loaded machine, the task gets no part (a later run builds
    it); on a machine below its core count, those time-outs are the program's own."""
    from pytest_specbench.execution.limits import Limits

    monkeypatch.setattr(corpus, "machine_load", lambda: 99.0)

    candidates = tmp_path / "c.jsonl"
    candidates.write_text("".join(json.dumps({"task_id": "T/0", "response_num": n, "solution": f"def f(x):\n    return x + {n}\n"}) + "\n"
                                  for n in (1, 2)))

    def quiet(code, wall_factor, i):  # the reference returns x (inputs 1, 2, 3), program n returns x + n
        return ("ok", i + 1 + (1 if "+ 1" in code else 2 if "+ 2" in code else 0))

    runs_of_2 = []

    def loaded_once(code, wall_factor, i):
        if "+ 2" in code and i == 0:
            runs_of_2.append(wall_factor)
        if "+ 2" in code and i == 1 and len(runs_of_2) == 1:
            return ("wall", None)
        return quiet(code, wall_factor, i)

    def loaded_always(code, wall_factor, i):
        return ("wall", None) if "+ 2" in code and i == 1 else quiet(code, wall_factor, i)

    def sleeps(code, wall_factor, i):  # the program's own time-out: no second run, the part is written
        return ("slept", None) if "+ 2" in code and i == 1 else quiet(code, wall_factor, i)

    built = {}
    for name, plan in (("quiet", quiet), ("loaded_once", loaded_once), ("loaded_always", loaded_always),
                       ("sleeps", sleeps)):
        out = tmp_path / name / "corpus.jsonl"
        out.parent.mkdir()
        ex = _Executor(plan)
        figures = corpus.build(_tiny_task(), candidates, out, [ex], Limits(), "base+plus", log=lambda line: None,
                               oracle="exact")
        built[name] = (out.read_text(), figures, ex.runs)
    assert built["quiet"][0].count("\n") == 2 and built["quiet"][1]["whole"]
    assert built["loaded_once"][0] == built["quiet"][0]  # the same bytes as on a quiet machine
    assert runs_of_2 == [corpus.RERUN_WALL_FACTOR] * 2  # each run with the larger wall bound, the first too
    assert built["loaded_always"][0] == "" and built["loaded_always"][1]["left_out"] == ["T/0"]
    assert not built["loaded_always"][1]["whole"]
    # the same load stops on a machine that is not overloaded: the program's own time-outs
    monkeypatch.setattr(corpus, "machine_load", lambda: 0.5)
    lines = []
    out = tmp_path / "quiet_machine" / "corpus.jsonl"
    figures = corpus.build(_tiny_task(), candidates, out, [_Executor(loaded_always)], Limits(), "base+plus",
                           log=lines.append, oracle="exact")
    assert figures["left_out"] == [] and out.read_text() == built["sleeps"][0], lines
    assert any("were stopped by the wall clock again, run alone at load 0.5" in line for line in lines), lines
    assert built["sleeps"][1]["left_out"] == [] and len(built["sleeps"][2]) == 3  # reference and two programs, once
    assert '"program": 2' in built["sleeps"][0] and '[1,' not in json.loads(built["sleeps"][0].splitlines()[1])["bopi"]


def test_a_mirror_may_serve_the_corpus_only_against_the_pinned_hash(tmp_path, monkeypatch):
    """No upstream publishes the corpus: a user's mirror (SPECBENCH_DATA_MIRROR) may, and
    the download keeps it only when its manifest digest is the pin's; without a pin it is
    not fetched, and the line names the build command.  The long outputs its lines name
    (``corpus.jsonl.long/<digest>.xz``) come with it, each kept only if it is the text its
    name says; a missing or wrong one is one line naming the file."""
    import hashlib
    import lzma
    import threading
    from functools import partial
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    from pytest_specbench.data import fetch, sources

    served = tmp_path / "mirror" / "nl2postcond"
    (served / "corpus.jsonl.long").mkdir(parents=True)
    texts = {name: name * (corpus.DIGEST_STRINGS_OVER + 1) for name in "abc"}  # a: served right, b: wrong, c: absent
    digest = {name: wire.string_digest(text) for name, text in texts.items()}
    for name, text in (("a", texts["a"]), ("b", texts["a"])):
        (served / "corpus.jsonl.long" / f"{digest[name]}.xz").write_bytes(lzma.compress(text.encode()))
    bopi = [[i, [name], {"h" if i else "v": [digest[name], len(texts[name])]}] for i, name in enumerate("abc")]
    (served / "corpus.jsonl").write_text(json.dumps({"task_id": "T/0", "program": 1, "natural": True,
                                                     "bopi": json.dumps(bopi + [[3, ["{\"h\":[\"x"], "{\"v\":["]], separators=(",", ":"))}) + "\n")
    from pytest_specbench.data.corpus_pin import manifest_digest

    good = manifest_digest({"T/0": hashlib.sha256((served / "corpus.jsonl").read_bytes()).hexdigest()})
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(SimpleHTTPRequestHandler, directory=str(tmp_path / "mirror")))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        lines = {}
        for name, pin in (("none", None), ("other", "0" * 64), ("pinned", good)):
            monkeypatch.setattr(sources, "NL2POSTCOND_CORPUS_MANIFEST", pin)
            root, staging = tmp_path / name, tmp_path / name / ".partial"
            staging.mkdir(parents=True)
            lines[name] = (fetch.nl2postcond_corpus_line(root, base, staging), (root / "nl2postcond" / "corpus.jsonl").is_file())
    finally:
        server.shutdown()
    assert lines["none"][1] is False and "build-corpus" in lines["none"][0]
    assert lines["other"][1] is False and "does not match the pinned" in lines["other"][0], lines["other"]
    assert lines["pinned"][1] is True and "verified (from the mirror" in lines["pinned"][0], lines["pinned"]
    said = lines["pinned"][0].splitlines()
    assert "1 of its 3 long outputs verified" in said[0] and "(1 fetched from the mirror)" in said[0], said
    kept = tmp_path / "pinned" / "nl2postcond" / "corpus.jsonl.long"
    assert [f.name for f in kept.iterdir()] == [f"{digest['a']}.xz"]
    assert said[1:] == sorted(said[1:]) and len(said) == 3, said  # one line each, naming the file
    assert any(f"{kept / digest['b']}.xz: long output" in line and "is not the text its name says" in line
               for line in said[1:]), said
    assert any(f"{kept / digest['c']}.xz: long output" in line and "HTTP 404" in line for line in said[1:]), said


def test_a_resumed_build_takes_no_part_built_under_other_rules(tmp_path):
    """HumanEval/1's parts of two builds differed (program 62: 12 bad outputs, then 4): the
    first was built before the stop rule, and a resume joins whatever parts it finds.  A
    parts folder records its rules; parts of other rules, or of none, stop the build with
    one line naming the folder (nothing is removed), and the same rules resume."""
    from pytest_specbench.errors import DataError
    from pytest_specbench.execution.limits import Limits

    candidates = tmp_path / "c.jsonl"
    candidates.write_text(json.dumps({"task_id": "T/0", "response_num": 1, "solution": "def f(x):\n    return x + 1\n"})
                          + "\n")
    out = tmp_path / "corpus.jsonl"

    def build(oracle="exact", time_rule="flat", stop_after=corpus.STOP_AFTER_TIMEOUTS):
        return corpus.build(_tiny_task(), candidates, out, [_Executor(lambda code, wf, i: ("ok", i + 2))], Limits(),
                            "base+plus", log=lambda line: None, oracle=oracle, time_rule=time_rule,
                            stop_after=stop_after)

    assert build()["skipped_tasks"] == 0 and build()["skipped_tasks"] == 1  # the same rules resume
    parts = out.with_name(out.name + ".parts")
    first = (parts / "T_0.jsonl").read_text()
    for other in ({"oracle": "evalplus"}, {"time_rule": "upstream"}, {"stop_after": (50, 150)}):
        with pytest.raises(DataError, match=r"corpus\.jsonl\.parts: its parts were built under other rules"):
            build(**other)
    # the rules before long strings were stored apart: the same bytes while no part holds one
    older = {k: v for k, v in json.loads((parts / corpus.RULES_FILE).read_text()).items() if k != "long_outputs"}
    (parts / corpus.RULES_FILE).write_text(json.dumps(older))
    assert build()["skipped_tasks"] == 1 and json.loads((parts / corpus.RULES_FILE).read_text())["long_outputs"]
    (parts / corpus.RULES_FILE).write_text(json.dumps(older))
    (parts / "T_1.jsonl").write_text(corpus.Kept("T/1", 1, True, (corpus.Bopi(0, (), "x" * 70000),)).line() + "\n")
    with pytest.raises(DataError, match=r"other rules \(long_outputs differ\)"):
        build()
    (parts / "T_1.jsonl").unlink()
    (parts / corpus.RULES_FILE).unlink()  # a folder of older code: parts, no rules
    with pytest.raises(DataError, match="parts without rules.json"):
        build()
    assert (parts / "T_0.jsonl").read_text() == first


def test_the_agreement_script_counts_a_repeated_input_once_beside_the_default():
    """HumanEval+ 0.1.10 repeats a base input among the plus inputs (98 of 164 tasks); upstream's
    bopi_run on HumanEval/10, /11, /14 is the count with that input once (docs/nl2postcond.md)."""
    from pytest_specbench.benchmarks.nl2postcond.corpus import Bopi, Kept
    from pytest_specbench.benchmarks.nl2postcond.evaluate import added_outputs, bad_outputs

    task = {"base_input": [[""], ["a"]], "plus_input": [["b"], [""]]}  # input 3 repeats input 0
    programs = [Kept("T/0", 1, True, (Bopi(0, ("",), "x"),)),
                Kept("T/0", 2, True, (Bopi(3, ("",), "x"),)),  # adds a pair by position, none by value
                Kept("T/0", 3, False, (Bopi(1, ("a",), "y"), Bopi(2, ("b",), None)))]
    assert len(bad_outputs(programs)[0]) == 4 and [len(a) for a in added_outputs(programs)] == [1, 1, 2]
    assert agreement.counts_by_input_value(programs, task) == (2, 3, 1)


def test_a_bad_output_is_keyed_by_the_text_str_prints_for_it_by_default():
    """Upstream keyed a bad output by what ``str()`` prints: ``True`` and ``"True"`` on one input are
    one pair, and a program adding only such pairs is not a program of the count (HumanEval/92: 8
    programs and 1,132 pairs, upstream's, against 9 and 2,024 by value and type).  A set prints
    in one order in every process; an opaque value stays its own program's; a long int prints."""
    from pytest_specbench.benchmarks.nl2postcond.corpus import Bopi, Kept
    from pytest_specbench.benchmarks.nl2postcond.evaluate import bad_outputs, pair_key_of, python_text, str_pair_key
    from pytest_specbench.execution.wire import Opaque

    task = {"base_input": [[1], [2]], "plus_input": []}
    programs = [Kept("T/0", 1, True, (Bopi(0, (1,), True), Bopi(1, (2,), None))),
                Kept("T/0", 2, True, (Bopi(0, (1,), "True"), Bopi(1, (2,), "None"))),  # prints as program 1's
                Kept("T/0", 3, False, (Bopi(0, (1,), 1), Bopi(1, (2,), (None,))))]  # "1", "(None,)": its own
    assert agreement.counts_by_input_value(programs, task) == (2, 4, 1)
    assert agreement.counts_by_input_value(programs, task, "value") == (3, 6, 2)
    pairs, members = bad_outputs(programs, [0, 1], str_pair_key)
    assert [out for _, _, out in pairs] == [True, None, 1, (None,)] and members == [[0, 1], [2, 3]]
    assert pair_key_of("value") is not str_pair_key is pair_key_of("str")
    # one text for equal values, whatever order a set iterates in
    assert python_text({"b", "a", "c"}) == python_text({"c", "a", "b"}) == "{'a', 'b', 'c'}"
    assert python_text([frozenset(), set(), {1: (2,)}, b"x", 1.5]) == "[frozenset(), set(), {1: (2,)}, b'x', 1.5]"
    assert python_text(10 ** 5000).startswith("\0int 0x")  # str() refuses it (over 4,300 digits)
    opaque = [Opaque("filter", "<filter object>")]
    assert python_text(opaque) is None and str_pair_key(1, 0, opaque) != str_pair_key(2, 0, opaque)
    # an object equal only to itself, given on an input listed twice, is two objects: two pairs under
    # every rule (HumanEval/42's map on its repeated input, /17's reversed lists: upstream's figures)
    twice = {"base_input": [[1]], "plus_input": [[1]]}
    objects = [Kept("T/0", 1, True, (Bopi(0, (1,), opaque[0]), Bopi(1, (1,), opaque[0])))]
    values = [Kept("T/0", 1, True, (Bopi(0, (1,), 5), Bopi(1, (1,), 5)))]
    for rule in ("str", "value"):
        assert agreement.counts_by_input_value(objects, twice, rule) == (1, 2, 1)
        assert agreement.counts_by_input_value(values, twice, rule) == (1, 1, 1)


def test_under_the_json_key_a_tuple_and_a_list_of_the_same_items_are_one_bad_output():
    """``--nl2postcond-pairs=json`` keys a bad output by the text of what a JSON file gives back for
    it (a hypothesis about upstream's saved files the sheet refutes on /35, /68, /106): HumanEval/20's program 297 returns
    ``[4.0, 3.9]`` where program 201 returned ``(4.0, 3.9)``, one pair there and not a program of
    the count (str: 15,014 pairs; json: 14,726; upstream 14,719).  What ``str`` merges stays merged
    (``True`` and ``"True"``); a dict's keys are JSON's strings; a set, which JSON cannot hold, and an
    opaque value keep ``str``'s key."""
    from pytest_specbench.benchmarks.nl2postcond.corpus import Bopi, Kept
    from pytest_specbench.benchmarks.nl2postcond.evaluate import as_json_gave_it_back, json_pair_key, pair_key_of
    from pytest_specbench.execution.wire import Opaque

    task = {"base_input": [[[3.9, 4.0]], [[1.0, 2.0]]], "plus_input": []}
    programs = [Kept("T/0", 201, False, (Bopi(0, ([3.9, 4.0],), (4.0, 3.9)),)),
                Kept("T/0", 297, False, (Bopi(0, ([3.9, 4.0],), [4.0, 3.9]),)),  # the same text as a JSON list
                Kept("T/0", 298, False, (Bopi(0, ([3.9, 4.0],), [3.9, 4.1]), Bopi(1, ([1.0, 2.0],), True))),
                Kept("T/0", 299, False, (Bopi(1, ([1.0, 2.0],), "True"),))]  # prints as 298's True
    assert agreement.counts_by_input_value(programs, task) == (3, 4, 0)
    assert agreement.counts_by_input_value(programs, task, "json") == (2, 3, 0)
    assert pair_key_of("json") is json_pair_key
    assert as_json_gave_it_back({1: (2, [3]), None: {True: 1.5}, "k": (), 2.5: 0}) == \
        {"1": [2, [3]], "null": {"true": 1.5}, "k": [], "2.5": 0}
    assert json_pair_key(1, 0, {1: "a"}) == json_pair_key(2, 0, {"1": "a"})
    assert json_pair_key(1, 0, {(1, 2): 3}) == (0, "{(1, 2): 3}")  # a key JSON cannot hold: left as it is
    assert json_pair_key(1, 0, {1, 2}) == json_pair_key(2, 0, {2, 1}) == (0, "{1, 2}")
    opaque = [Opaque("filter", "<filter object>")]
    assert json_pair_key(1, 0, opaque) != json_pair_key(2, 0, opaque)


def test_each_input_gets_upstreams_time_limit_from_the_references_least_cpu(tmp_path):
    """``--time-rule upstream`` is upstream's script's rule (max(0.2 s, 2x the reference's time on
    that input)): a candidate hanging on HumanEval/13's large inputs pays 0.2 CPU s per input, not
    the flat rule's 1 s.  Where the reference's time may lift a limit above the floor it is timed
    again and the least figure taken; the flat rule (the default) is recorded as session 17's was."""
    from pytest_specbench.execution.limits import Limits

    candidates = tmp_path / "c.jsonl"
    candidates.write_text(json.dumps({"task_id": "T/0", "response_num": 1, "solution": "def f(x):\n    return x + 1\n"})
                          + "\n")
    class Timed(_Executor):  # the reference (x) and program 1 (x + 1) with CPU figures per call
        def run(self, prepared, job, on_outcome):
            self.runs.append((job.code, list(job.call_cpu)))
            cpu = next(reference_cpu) if "+ 1" not in job.code else [0.0] * 3
            outcomes = {i: CallOutcome(i, "ok", wire.dumps([[i], i + 1 + ("+ 1" in job.code)]).encode(), cpu=cpu[i])
                        for i in job.indices}
            for outcome in outcomes.values():
                on_outcome(outcome)
            return JobResult(outcomes)

    built = {}
    for rule in corpus.TIME_RULES:
        reference_cpu = iter([[0.01, 0.3, 0.01], [0.01, 0.25, 0.01], [0.01, 0.4, 0.01]])  # three timings
        ex, out = Timed(None), tmp_path / rule / "corpus.jsonl"
        corpus.build(_tiny_task(), candidates, out, [ex], Limits(), "base+plus", log=lambda line: None,
                     oracle="exact", time_rule=rule)
        built[rule] = ([limits for code, limits in ex.runs if "+ 1" in code],
                       json.loads((out.with_name(out.name + ".parts") / corpus.RULES_FILE).read_text())["call_cpu"],
                       out.read_text())
    assert built["upstream"][0] == [[0.2, 0.5, 0.2]]  # the floor, 2x the least of 0.3, 0.25, 0.4, the floor
    assert built["flat"][0] == [[1.0, 1.0, 1.0]] and built["flat"][1] == 1.0  # session 17's rules, as recorded then
    assert isinstance(built["upstream"][1], str) and "max(0.2, 2.0 x" in built["upstream"][1]
    assert built["upstream"][2] == built["flat"][2] != ""


def test_each_tasks_run_columns_get_the_cause_arithmetic_shows():
    """docs/nl2postcond.md's per-task causes are written by tools/causes.py: a repeat counted
    once that gives upstream's figures (HumanEval/10), upstream's pairs beyond programs x
    distinct inputs (HumanEval/1: inputs EvalPlus dropped after upstream's HumanEval+), a count
    upstream gives two ways (HumanEval/15), and otherwise 'not shown' with the differences."""
    from pytest_specbench.benchmarks.nl2postcond.tools.causes import run_cause

    inputs = [[""], ["a"], [""]]  # the first listed twice
    assert run_cause("T/0", (6, 10, 2), (6, 10, 2), (6, 9, 2), inputs, {10}) == "agrees"
    assert run_cause("T/0", (6, 10, 2), (6, 9, 2), (6, 9, 2), inputs, {9}).startswith(
        "repeat: 1 input(s) listed twice in 0.1.10; counted once, 9 pairs = upstream's (ours +1")
    assert run_cause("T/0", (2, 4, 0), (3, 7, 0), (2, 4, 0), inputs, {7}).startswith(
        "more inputs: upstream's 7 pairs from 3 programs exceed 3 x 2 distinct inputs of 0.1.10 = 6")
    assert run_cause("T/0", (2, 4, 0), (3, 5, 0), (2, 4, 0), inputs, {5, 6}).startswith("upstream varies by row (5, 6")
    assert run_cause("T/0", (2, 4, 0), (3, 5, 0), (2, 4, 0), inputs, {5}) == \
        "not shown (codes -1, bopi -1; a repeat counted once: bopi -1); not the inputs: unchanged since upstream's HumanEval+"
    # a task whose inputs EvalPlus dropped after upstream's run (its fix_v0NN.py scripts): upstream above
    # programs x inputs, above ours, or below ours (which more inputs cannot give)
    assert run_cause("HumanEval/1", (2, 4, 0), (3, 7, 0), (2, 4, 0), inputs, {7}) == (
        "inputs dropped since upstream's: EvalPlus v0.1.10 (fix_v019.py) dropped plus inputs its contract "
        "(v0.1.8: balanced) refuses; upstream's 7 pairs from 3 programs exceed 3 x 2 distinct inputs of 0.1.10 = 6")
    assert run_cause("HumanEval/53", (2, 4, 0), (3, 5, 0), (2, 4, 0), inputs, {5}).startswith(
        "consistent with inputs dropped since upstream's: EvalPlus v0.1.3 (fix_v012.py) dropped plus inputs whose x or y")
    assert run_cause("HumanEval/28", (2, 5, 0), (2, 3, 0), (2, 4, 0), inputs, {3}) == (
        "not shown (bopi +2; a repeat counted once: bopi +1); not the inputs EvalPlus v0.1.10 dropped alone: "
        "more inputs cannot give fewer distinct pairs")
    # /75's drop (v0.1.2) is not after upstream's HumanEval+: its inputs are unchanged since
    assert run_cause("HumanEval/75", (2, 4, 0), (3, 5, 0), (2, 4, 0), inputs, {5}).endswith(
        "not the inputs: unchanged since upstream's HumanEval+")


def test_a_corpus_whose_pinned_task_is_not_the_pinned_part_is_refused_with_one_line(tmp_path):
    """The pin (registry/corpus/nl2postcond.txt, written by tools/pin_corpus.py from a parts
    folder of the default rules) holds each task's part sha256 and their manifest digest, which
    a corpus file has exactly when it is the pinned parts joined in task order: a corpus
    whose pinned task differs (other rules, another machine's time-out) is refused with one
    line naming the task; unpinned tasks pass; a folder of other rules is never pinned.  A
    later build's parts join the pin (``--add``) without the earlier parts' bytes: the
    manifest digest is then the one pinning every part at once gives."""
    from pytest_specbench.benchmarks.nl2postcond.tools import pin_corpus
    from pytest_specbench.benchmarks.nl2postcond.tools.pin_corpus import pin_of
    from pytest_specbench.data.corpus_pin import corpus_digest, read_pin, write_pin
    from pytest_specbench.errors import DataError

    parts = tmp_path / "corpus.jsonl.parts"
    parts.mkdir()
    lines = {t: "".join(json.dumps({"task_id": t, "program": n, "natural": True, "bopi": "[]"}) + "\n" for n in (1, 2))
             for t in ("HumanEval/2", "HumanEval/10")}
    for t, text in lines.items():
        (parts / (t.replace("/", "_") + ".jsonl")).write_text(text)
    rules = {"format": corpus.FORMAT, "call_cpu": 1.0, "candidates": "c",
             "stop_after_timeouts": list(corpus.STOP_AFTER_TIMEOUTS), "inputs": "base+plus", "oracle": "exact"}
    (parts / corpus.RULES_FILE).write_text(json.dumps(rules))  # a folder of the rules before long_outputs:
    rules["long_outputs"] = corpus.LONG_RULE  # its parts hold no long string, so they are pinned as today's
    write_pin(pin_of(parts), tmp_path / "pin.txt")
    pin = read_pin(tmp_path / "pin.txt")
    joined = tmp_path / "corpus.jsonl"
    joined.write_text(lines["HumanEval/2"] + lines["HumanEval/10"])  # task order: 2 before 10
    assert pin.manifest == corpus_digest(joined) and pin.rules == rules
    for wrong in (lines["HumanEval/10"] + lines["HumanEval/2"],  # out of task order
                  lines["HumanEval/2"], lines["HumanEval/2"] + lines["HumanEval/10"] + lines["HumanEval/2"][:40] + "\n",
                  # HumanEval/2's lines apart, around HumanEval/10's: each task's lines hash as pinned
                  lines["HumanEval/2"].splitlines(True)[0] + lines["HumanEval/10"] + lines["HumanEval/2"].splitlines(True)[1]):
        (tmp_path / "wrong.jsonl").write_text(wrong)
        assert corpus_digest(tmp_path / "wrong.jsonl") != pin.manifest
    corpus.check_pinned(joined, pin)  # the pinned build passes

    # the pin of HumanEval/2 alone, then HumanEval/10 added from another folder: the same pin
    later = tmp_path / "later.parts"
    later.mkdir()
    (parts / "HumanEval_10.jsonl").rename(later / "HumanEval_10.jsonl")
    (later / corpus.RULES_FILE).write_text((parts / corpus.RULES_FILE).read_text())
    assert pin_corpus.main([str(parts), "--out", str(tmp_path / "grown.txt"), "--add"]) == 0  # no pin yet
    assert pin_corpus.main([str(later), "--out", str(tmp_path / "grown.txt"), "--add"]) == 0
    assert read_pin(tmp_path / "grown.txt") == pin
    assert pin_corpus.main([str(later), "--out", str(tmp_path / "grown.txt"), "--add"]) == 0  # again: no change
    assert read_pin(tmp_path / "grown.txt") == pin
    (later / "HumanEval_10.jsonl").write_text(lines["HumanEval/10"].replace('"program": 2', '"program": 3'))
    with pytest.raises(SystemExit, match=r"1 task\(s\) have another part in the pin \(HumanEval/10\)"):
        pin_corpus.main([str(later), "--out", str(tmp_path / "grown.txt"), "--add"])
    # --replace takes the folder's part there (a change of the code that changed a part's bytes)
    assert pin_corpus.main([str(later), "--out", str(tmp_path / "replaced.txt"), "--replace"]) == 0  # no pin yet
    (tmp_path / "replaced.txt").write_text((tmp_path / "grown.txt").read_text())
    assert pin_corpus.main([str(later), "--out", str(tmp_path / "replaced.txt"), "--replace"]) == 0
    replaced = read_pin(tmp_path / "replaced.txt")
    assert replaced.parts["HumanEval/2"] == pin.parts["HumanEval/2"] and replaced.manifest != pin.manifest
    assert replaced.parts["HumanEval/10"] == hashlib.sha256((later / "HumanEval_10.jsonl").read_bytes()).hexdigest()
    (later / "HumanEval_10.jsonl").rename(parts / "HumanEval_10.jsonl")
    (parts / "HumanEval_10.jsonl").write_text(lines["HumanEval/10"])
    other = tmp_path / "other.jsonl"
    other.write_text(lines["HumanEval/2"] + lines["HumanEval/10"].replace('"program": 2', '"program": 3')
                     + json.dumps({"task_id": "HumanEval/200", "program": 1, "natural": True, "bopi": "[]"}) + "\n")
    with pytest.raises(DataError, match=r"other\.jsonl: HumanEval/10: not the pinned build's part \(sha256 [0-9a-f]{16}"):
        corpus.check_pinned(other, pin)
    # --nl2postcond-corpus-pin=warn: the differing task is taken, named in one warning line
    assert corpus.check_pinned(joined, pin, warn=True) == []
    warned = corpus.check_pinned(other, pin, warn=True)
    assert len(warned) == 1 and "1 task(s) not the pinned build's parts" in warned[0], warned
    assert warned[0].endswith("HumanEval/10; their kill columns may differ from the pinned corpus's"), warned
    (parts / corpus.RULES_FILE).write_text(json.dumps({**rules, "call_cpu": corpus.time_rule_stamp("upstream", 1.0)}))
    with pytest.raises(SystemExit, match="not the default build's rules \\(call_cpu\\)"):
        pin_of(parts)


def test_a_candidates_right_outputs_are_dropped_as_soon_as_it_is_done():
    """The build held every program's every output until its task's selection (HumanEval/15's
    strings of up to 6.9 MB took it to 3.9 GB); only the bad outputs are kept now."""
    task = _tiny_task()["T/0"]
    ex = _Executor(lambda code, wf, i: ("ok", i + 1 if i != 1 else 99))  # right on inputs 0 and 2, wrong on 1
    seen = corpus.observe_bad(ex, "def f(x):\n    return x\n", task, "k", [((1,), {}), ((2,), {}), ((3,), {})],
                              [0.2] * 3, (10, 30), 20.0, [1, 2, 3], "exact")
    assert [o.status for o in seen] == ["good", "ok", "good"] and seen[1].result == 99


class _ObservingExecutor:
    """The python executor's surface for observe(), running the observed program (our own
    text around the test's own candidates) in-process; ``sent`` records the longest string
    each job's outcomes carried whole, by candidate; ``RUN`` (1, 2, ...) is the job's number
    for that candidate, visible to it."""

    def __init__(self):
        self.jobs: dict[str, int] = {}
        self.sent: list[tuple[str, int]] = []

    def run(self, prepared, job, on_outcome):
        who = job.code.split("\n")[1]  # the candidate's "# k" line (the reference's first line)
        self.jobs[who] = self.jobs.get(who, 0) + 1
        namespace: dict = {"RUN": self.jobs[who]}
        exec(compile(job.code, "<observed>", "exec"), namespace)
        outcomes, longest = {}, 0
        for i in job.indices:
            args, kwargs = job.calls()[i]
            value = namespace[job.entry_point](*args, **kwargs)
            longest = max([longest] + [len(v) for v in value if isinstance(v, str)])
            outcomes[i] = CallOutcome(i, "ok", wire.dumps(value).encode())
            if not on_outcome(outcomes[i]):
                break
        self.sent.append((who, longest))
        return JobResult(outcomes)


def test_long_string_outputs_cross_as_digests_and_are_stored_once_beside_the_parts(tmp_path):
    """HumanEval/15's candidates return strings of up to 6.9 MB on 21 inputs (147 MB a program):
    a long string comes back as its digest, a right one never crosses whole, and a kept program's
    bad ones are fetched whole (run again, digest checked) only when no earlier program's were
    the same string: each is stored once beside the parts (``long/<digest>.txt``), the lines name
    it, and the corpus read back is the build's without digests.  A program whose second run
    gives another output leaves its task out."""
    from pytest_specbench.execution.limits import Limits

    n = corpus.DIGEST_STRINGS_OVER + 10
    task = {"T/0": {"task_id": "T/0", "entry_point": "f", "prompt": "def f(x):\n",
                    "canonical_solution": f"def f(x):\n    return x * {n}\n", "base_input": [["a"], ["\u00e9"], ["b"]],
                    "plus_input": [["c"]], "atol": 0}}
    programs = {1: f"    return x * {n}\n",  # right everywhere
                2: f"    return (x * {n}).upper()\n",  # wrong on every input
                3: f"    return (x * {n}).upper() if x != 'b' else 'short'\n",  # a, c as 2's; b: a new short pair
                4: f"    return (x * {n}).upper() if x == 'a' else x * {n}\n",  # nothing new: not kept
                5: f"    return [x] * {n}\n"}  # a long list: its wire text stored
    candidates = tmp_path / "c.jsonl"
    candidates.write_text("".join(json.dumps({"task_id": "T/0", "response_num": k, "solution": f"def f(x):\n# {k}\n{body}"})
                                  + "\n" for k, body in programs.items()))
    parts = {}
    for name in ("digests", "whole"):
        out = tmp_path / name / "corpus.jsonl"
        ex = _ObservingExecutor()
        if name == "whole":
            corpus.str_digest_over, saved = (lambda task, oracle: None), corpus.str_digest_over
        try:
            figures = corpus.build(task, candidates, out, [ex], Limits(), "base+plus", log=lambda line: None, oracle="exact")
        finally:
            if name == "whole":
                corpus.str_digest_over = saved
        parts[name] = (out.read_text(), figures, ex.sent)
    text, figures, sent = parts["digests"]
    assert figures["kept"] == 3 and [json.loads(line)["program"] for line in text.splitlines()] == [2, 3, 5]
    # long outputs are stored once beside the parts, the lines name them (without digests too: the
    # strings as wire text); read back, the two builds' corpora are the same values
    store = tmp_path / "digests" / "corpus.jsonl.parts" / "long"
    import lzma
    sizes = sorted(len(lzma.decompress(f.read_bytes())) for f in store.iterdir())
    assert sizes[:4] == [n, n, n, 2 * n] and len(sizes) == 8  # A, B, C and É (2 bytes) x n; 4 lists' texts
    assert sum(f.stat().st_size for f in store.iterdir()) < n  # compressed
    assert len(text) < 2000 and json.loads(json.loads(text.splitlines()[0])["bopi"])[0][2]["h"][1] == n and len(parts["whole"][0]) < 2000
    loaded = {name: _texts_read(corpus.CorpusFile(tmp_path / name / "corpus.jsonl")["T/0"]) for name in parts}
    assert loaded["digests"] == loaded["whole"] and loaded["digests"][1][0][2] == "A" * n
    whole_long = [(who, longest) for who, longest in sent if who.startswith("#") and longest > corpus.DIGEST_STRINGS_OVER]
    assert whole_long == [("# 2", n)]  # program 2's second run only: program 3's long outputs are 2's, stored
    assert all(longest <= 100 for who, longest in sent if who in ("# 1", "# 4"))
    assert any(longest == n for who, longest in parts["whole"][2] if who == "# 1")  # without digests it crossed whole
    # a missing or altered string is one line naming the corpus's line
    from pytest_specbench.errors import DataError
    victim = min(store.iterdir())
    victim.write_bytes(lzma.compress(b"B" * n))
    # (a string's file is read when a job's cases are encoded: the same line then)
    with pytest.raises(DataError, match=r"corpus\.jsonl:1: not a corpus line .*: .*is not the string its name says"):
        _texts_read(corpus.CorpusFile(tmp_path / "digests" / "corpus.jsonl")["T/0"])
    victim.unlink()
    with pytest.raises(DataError, match=r"corpus\.jsonl:1: .*long output [0-9a-f]{32} is not in"):
        corpus.CorpusFile(tmp_path / "digests" / "corpus.jsonl")["T/0"]

    flaky = tmp_path / "flaky.jsonl"
    flaky.write_text(json.dumps({"task_id": "T/0", "response_num": 2,
                                 "solution": f"def f(x):\n# 2\n    return (x * {n}).upper() + str(RUN)\n"}) + "\n")
    lines = []
    figures = corpus.build(task, flaky, tmp_path / "flaky" / "corpus.jsonl", [_ObservingExecutor()], Limits(),
                           "base+plus", log=lines.append, oracle="exact")
    assert figures["left_out"] == ["T/0"] and not (tmp_path / "flaky" / "corpus.jsonl.parts" / "T_0.jsonl").exists()
    assert "program 2, input #0: run again to fetch its" in lines[0] and "it gave another output" in lines[0]


def test_a_long_bad_value_is_stored_as_it_is_observed_and_the_part_is_the_one_its_value_writes(tmp_path, monkeypatch):
    """HumanEval/163's programs return lists of millions of ints: held decoded from each run to
    the task's selection they took the build past 8.5 GB.  A bad output whose text is long goes
    into the store as soon as its program is done, the run holds its digest (in the journal
    too), and the part is the same bytes as a build that held the values.  A resumed build whose
    store lost such an output drops the task's journal and runs the task again."""
    from pytest_specbench.execution.limits import Limits

    n = corpus.DIGEST_STRINGS_OVER
    task = {"T/0": {"task_id": "T/0", "entry_point": "f", "prompt": "def f(x):\n",
                    "canonical_solution": "def f(x):\n    return [x]\n", "base_input": [[1], [2]],
                    "plus_input": [[3]], "atol": 0}}
    programs = {1: f"    return [x] * {n}\n",  # long on every input
                2: f"    return [x] * {n} if x != 2 else [x, x]\n",  # nothing new on 1 and 3; 2: a short pair
                3: f"    return [x + 1] * {n} if x == 3 else [x]\n"}  # a new long pair on 3
    candidates = tmp_path / "c.jsonl"
    candidates.write_text("".join(json.dumps({"task_id": "T/0", "response_num": k, "solution": f"def f(x):\n# {k}\n{body}"})
                                  + "\n" for k, body in programs.items()))
    real, returned = corpus.observe_bad, []

    def observe_bad(*args):
        returned.append(real(*args))
        return returned[-1]

    monkeypatch.setattr(corpus, "observe_bad", observe_bad)
    out = tmp_path / "at_once" / "corpus.jsonl"
    figures = corpus.build(task, candidates, out, [_ObservingExecutor()], Limits(), "base+plus", log=lambda _: None,
                           oracle="exact")
    assert figures["kept"] == 3
    held = [o.result for obs in returned for o in obs if o.status == "ok"]
    assert len(held) == 7 and sum(isinstance(v, corpus.StoredValue) for v in held) == 6  # [2, 2] held as it is
    assert all(len(repr(v)) < 200 for v in held)
    # a build that held each value decoded until the selection writes the same part
    monkeypatch.setattr(corpus, "_stored_at_once", lambda observation, store: observation)
    returned[:] = []
    decoded = tmp_path / "decoded" / "corpus.jsonl"
    corpus.build(task, candidates, decoded, [_ObservingExecutor()], Limits(), "base+plus", log=lambda _: None,
                 oracle="exact")
    assert any(isinstance(o.result, list) and len(o.result) == n for obs in returned for o in obs)
    assert out.read_text() == decoded.read_text() and len(out.read_text()) < 2000
    assert sorted(p.name for p in (out.parent / "corpus.jsonl.parts" / "long").iterdir()) == \
        sorted(p.name for p in (decoded.parent / "corpus.jsonl.parts" / "long").iterdir())
    assert _texts_read(corpus.CorpusFile(out)["T/0"])[0][0] == (0, (1,), [1] * n)
    # a journal naming outputs its store no longer holds: the task is left, the journal dropped, then rebuilt
    monkeypatch.undo()
    parts = out.parent / "corpus.jsonl.parts"
    (parts / "T_0.jsonl").unlink()

    class Stopped(Exception):
        pass

    def stopped(*args):
        raise Stopped  # a build stopped after its programs ran, before the part was written

    monkeypatch.setattr(corpus, "select", stopped)
    with pytest.raises(Stopped):
        corpus.build(task, candidates, out, [_ObservingExecutor()], Limits(), "base+plus", log=lambda _: None,
                     oracle="exact")
    monkeypatch.undo()
    journal = parts / "T_0.runs"
    assert journal.stat().st_size < 5000  # digests, not the lists
    import shutil
    shutil.rmtree(parts / "long")
    lines = []
    figures = corpus.build(task, candidates, out, [_ObservingExecutor()], Limits(), "base+plus", log=lines.append,
                           oracle="exact")
    assert any("3 of 3 distinct programs' runs taken from T_0.runs" in line for line in lines), lines
    assert figures["left_out"] == ["T/0"] and not journal.exists(), lines
    assert any(line.startswith("T/0: program 1, input #0: its ") and "is not in " in line and "any more" in line
               for line in lines), lines
    corpus.build(task, candidates, out, [_ObservingExecutor()], Limits(), "base+plus", log=lambda _: None, oracle="exact")
    assert out.read_text() == decoded.read_text()


def test_a_long_output_is_fetched_after_the_calls_the_first_run_made_before_it(tmp_path):
    """A call's outcome can depend on what ran before it in its process: HumanEval/44's program
    295 took 0.2 CPU s on input #117 after inputs #0-#116 and over 20 s alone, so the build, which
    ran the kept program again on the fetched inputs only, left the task out.  The second run
    replays the first one's calls up to the last fetched output (here a count of the calls made:
    only the last input's output is long), and only that output crosses whole."""
    from pytest_specbench.execution.limits import Limits

    n = corpus.DIGEST_STRINGS_OVER + 10
    task = {"T/0": {"task_id": "T/0", "entry_point": "f", "prompt": "def f(x):\n",
                    "canonical_solution": f"def f(x):\n    return x * {n}\n", "base_input": [["a"], ["b"], ["c"]],
                    "plus_input": [["d"], ["e"]], "atol": 0}}
    body = ("    global CALLS\n    CALLS = globals().get('CALLS', 0) + 1\n"
            f"    return x * {n} + str(CALLS) if x in 'bd' else 'short'\n")
    candidates = tmp_path / "c.jsonl"
    candidates.write_text(json.dumps({"task_id": "T/0", "response_num": 0, "solution": f"def f(x):\n# 0\n{body}"}) + "\n")
    ex, lines = _ObservingExecutor(), []
    figures = corpus.build(task, candidates, tmp_path / "corpus.jsonl", [ex], Limits(), "base+plus",
                           log=lines.append, oracle="exact")
    assert figures["left_out"] == [] and figures["kept"] == 1, lines
    assert ex.jobs["# 0"] == 2 and ex.sent[-1] == ("# 0", n + 1)  # the second run: each long output whole
    bad = _texts_read(corpus.CorpusFile(tmp_path / "corpus.jsonl")["T/0"])[0]
    assert [(i, out) for i, _, out in bad if len(out) > n] == [(1, "b" * n + "2"), (3, "d" * n + "4")]


def _texts_read(programs):
    """Each program's bad outputs as (index, args after, output), a long output read from its
    store (the reader leaves it there: :class:`corpus.StoredStr`, :class:`corpus.StoredValue`)."""
    def held(out):
        return out.held() if isinstance(out, (corpus.StoredStr, corpus.StoredValue)) else out
    return [[(b.index, b.args_after, held(b.output)) for b in k.bopi] for k in programs]


def test_the_observers_digest_is_the_wires_and_survives_a_program_that_rebinds_builtins():
    """The digest is computed in the child by the observed program's own text: it must be
    :func:`wire.string_digest` (non-ASCII, a lone surrogate), and a program whose module binds
    ``str``, ``type`` or ``len`` must not change what the observer sends (run in-process: our text)."""
    from pytest_specbench.benchmarks.nl2postcond.observe import OBSERVER, observed_program

    text = "\u00e9\ud800" + "x" * 100
    code = ("str, type, len = bytes, lambda v: int, lambda v: 0\n"
            f"def f(k):\n    return {text!r} if k else 'short'\n")
    namespace: dict = {}
    exec(compile(observed_program(code, "f", str_digest_over=50), "<observed>", "exec"), namespace)
    assert namespace[OBSERVER](1) == [[1], None, [wire.string_digest(text), len(text)]]
    assert namespace[OBSERVER](0) == [[0], "short"]


def test_a_corpus_is_read_task_by_task_and_a_bad_line_is_named_when_its_task_is_read(tmp_path):
    """The family reads one task's programs at a time (``corpus.load`` indexes the file and
    parses a task when asked): a corpus whose HumanEval/15 part is several GB costs a task of
    another part only its own lines.  A damaged line of another task is not even parsed
    (the old loader parsed every line: it refused the whole file); asked for, it is one line
    naming the file and line.  A file whose task's lines are apart is refused (no build writes it)."""
    from pytest_specbench.errors import DataError

    good = corpus.Kept("T/2", 7, True, (corpus.Bopi(0, ([1],), 3), corpus.Bopi(1, (), "x")))
    path = tmp_path / "corpus.jsonl"
    path.write_text('{"task_id": "T/1", "program": 1, "natural": true, "bopi": "[[0, [], oops"}\n\n'
                    + good.line() + "\n", encoding="utf-8")
    built = corpus.load(path)
    assert list(built) == ["T/1", "T/2"] and "T/2" in built and len(built) == 2
    assert built["T/2"] == [good] and built.get("T/3", []) == []
    with pytest.raises(DataError) as raised:
        built["T/1"]
    assert str(raised.value) == f"{path}:1: not a corpus line (task_id, program, natural, bopi)"
    path.write_text(good.line() + "\n" + good.line().replace("T/2", "T/1") + "\n" + good.line() + "\n", encoding="utf-8")
    with pytest.raises(DataError, match="T/2's lines are not together"):
        corpus.CorpusFile(path)


def test_the_agreement_script_can_run_the_corpus_tier_alone_and_take_a_corpus_under_warn(tmp_path):
    """The kill columns need the paper's checks only; the family's default tiers add the pbt
    tier's search (session 20's kill run paid for it): ``--spec-tiers corpus`` passes through."""
    rows = [{"task_id": "HumanEval/0", "r_num": 0, "postcondition": "assert True"}]
    argv = agreement.plugin_args(tmp_path, rows, tmp_path, "base+plus", tmp_path / "c.jsonl", 0, spec_tiers="corpus")
    assert "--spec-tiers=corpus" in argv
    assert not any(a.startswith("--spec-tiers") for a in agreement.plugin_args(tmp_path, rows, tmp_path, "base+plus", None, 0))
    # a corpus this machine built otherwise (HumanEval/49's part): the pin's mode passes through too
    assert "--nl2postcond-corpus-pin=warn" in agreement.plugin_args(tmp_path, rows, tmp_path, "base+plus",
                                                                     tmp_path / "c.jsonl", 0, corpus_pin="warn")
    assert not any(a.startswith("--nl2postcond-corpus-pin") for a in argv)


def test_programs_that_differ_only_in_their_own_local_names_share_one_run_and_no_others_do():
    """``corpus.run_key``: a parameter, a loop variable, a lambda's or a comprehension's name,
    a closure's, renamed in one program and not the other: one run.  Each pair below differs only
    so too, yet computes another thing (the name is read as text, or is another scope's global,
    a keyword, a class attribute, a match capture, a frame's): two runs.  (Each pair has one key
    with every bound name renamed: the screens in ``corpus._renamable`` are what keep them apart.)"""
    same = ["def f(n):\n    total = 0\n    for i in range(n):\n        total += i\n"
            "    g = lambda v: v * 2\n    def h():\n        return total + n\n    return [g(k) for k in range(h())]\n",
            "def f(m):\n    s = 0\n    for j in range(m):\n        s += j\n"
            "    g = lambda w: w * 2\n    def h():\n        return s + m\n    return [g(q) for q in range(h())]\n"]
    assert corpus.run_key(same[0]) == corpus.run_key(same[1]) != corpus.program_key(same[0])
    groups = corpus.distinct_programs([corpus.Candidate("T", 9, same[1]), corpus.Candidate("T", 4, same[0])])
    assert [[c.program for c in g] for g in groups.values()] == [[4, 9]]
    differ = {
        "locals()": ("def f(n):\n    x = n\n    return sorted(locals())\n", "def f(n):\n    y = n\n    return sorted(locals())\n"),
        "a message": ("def f(n):\n    try:\n        x += 1\n    except Exception as e:\n        return str(e)\n    x = n\n",
                      "def f(n):\n    try:\n        y += 1\n    except Exception as e:\n        return str(e)\n    y = n\n"),
        "a keyword": ("def g(a):\n    return a\ndef f(n):\n    return g(a=n)\n",
                      "def g(b):\n    return b\ndef f(n):\n    return g(a=n)\n"),
        "a builtin": ("def f(n):\n    g = lambda len: len\n    return g(n) + len([1])\n",
                      "def f(n):\n    g = lambda q: q\n    return g(n) + q([1])\n"),
        "a class attribute": ("def f(n):\n    class C:\n        x = n\n    return C.x\n",
                              "def f(n):\n    class C:\n        y = n\n    return C.x\n"),
        "a match capture": ("def f(n):\n    x = 0\n    match [n]:\n        case [x]:\n            pass\n    return x\n",
                            "def f(n):\n    y = 0\n    match [n]:\n        case [x]:\n            pass\n    return y\n"),
        "a ** argument": ("def g(a):\n    return a\ndef f(n):\n    return g(**{'a': n})\n",
                          "def g(b):\n    return b\ndef f(n):\n    return g(**{'a': n})\n"),
        "a frame": ("import sys\ndef f(n):\n    x = n\n    return sorted(sys._getframe().f_locals)\n",
                    "import sys\ndef f(n):\n    y = n\n    return sorted(sys._getframe().f_locals)\n"),
    }
    for why, (a, b) in differ.items():
        assert corpus.run_key(a) != corpus.run_key(b), why


def test_the_selection_works_out_each_shared_observations_text_once_and_writes_the_same_bytes(monkeypatch):
    """Copies of a program share one run's observations: the selection keys each bad output once,
    not once per copy, and the line it writes is ``stable_text`` of the whole list as before."""
    from pytest_specbench.benchmarks.nl2postcond.observe import Observation
    from pytest_specbench.execution.wire import Opaque

    outputs = [{"b", "a", frozenset({2, 1})}, (1, [2.5, float("nan")], {"k": -0.0}), 2 ** 5000, "é\n\"\\",
               [None, True, b"\x00", 1j], Opaque("generator", "<generator object f at 0x7f00>"), float("inf")]
    task = {"task_id": "T/0", "base_input": [[i] for i in range(len(outputs) + 1)], "plus_input": []}
    reference = [0] * (len(outputs) + 1)
    shared = [Observation(i, "ok", ([i, {"x"}],), out) for i, out in enumerate(outputs)] + \
        [Observation(len(outputs), "ok", ([0],), 0)]  # a right output
    texts = []
    real = corpus.stable_text
    monkeypatch.setattr(corpus, "stable_text", lambda v: texts.append(v) or real(v))
    kept = corpus.select(task, reference, [corpus.Candidate("T/0", n, "") for n in (5, 9, 2)],
                         {5: shared, 9: shared, 2: shared}, "exact")
    assert len(texts) == len(outputs)  # once per bad output, not per copy
    monkeypatch.setattr(corpus, "stable_text", real)
    # program 2 first; 5 and 9 add only their own opaque output's pair (equal only to itself)
    assert [k.program for k in kept] == [2, 5, 9]
    for k in kept:
        whole = [[b.index, list(b.args_after), b.output] for b in k.bopi]
        assert k.line() == json.dumps({"task_id": "T/0", "program": k.program, "natural": True,
                                       "bopi": real(whole)})


def test_the_causes_tool_names_a_missing_corpus_or_report_in_one_line(tmp_path):
    """A mistyped path is one line before the minutes of reading a corpus (it was a traceback after them)."""
    from pytest_specbench.benchmarks.nl2postcond.tools import causes

    (tmp_path / "corpus.jsonl").write_text("")
    with pytest.raises(SystemExit, match=r"^causes: .*missing\.json: no such file or folder$"):
        causes.main([str(tmp_path), "--corpus", str(tmp_path / "corpus.jsonl"), "--report", str(tmp_path / "missing.json")])
    with pytest.raises(SystemExit, match=r"^causes: .*absent\.jsonl: no such file or folder$"):
        causes.main([str(tmp_path), "--corpus", str(tmp_path / "absent.jsonl")])


def test_long_bad_outputs_are_told_apart_by_value_without_a_second_copy_of_their_text():
    """A pair's key (corpus.pair_key) holds a long output (over DIGEST_STRINGS_OVER characters)
    by its text's digest, as the build keyed a long string, so evaluation's index does not hold
    each of HumanEval/15's 3.4 GB of long strings a second time; the pairs are the same as by
    text: equal strings one pair, strings that differ in one character two."""
    from pytest_specbench.benchmarks.contract.evalplus import DIGEST_STRINGS_OVER
    from pytest_specbench.benchmarks.nl2postcond.corpus import Bopi, Kept, pair_key
    from pytest_specbench.benchmarks.nl2postcond.evaluate import bad_outputs

    long = "7 " * DIGEST_STRINGS_OVER
    programs = [Kept("T/0", 1, True, (Bopi(0, (9,), long), Bopi(1, (8,), long))),
                Kept("T/0", 2, True, (Bopi(0, (9,), "".join([long]) + ""),)),  # equal, not the same object
                Kept("T/0", 3, False, (Bopi(0, (9,), long[:-1] + "x"), Bopi(0, (9,), [long])))]
    pairs, members = bad_outputs(programs)
    assert len(pairs) == 4 and members == [[0, 1], [0], [2, 3]]
    assert len(pair_key(3, 0, "a" * DIGEST_STRINGS_OVER)[1]) < 100  # its text: the string and two quotes
    short = "a" * (DIGEST_STRINGS_OVER - 2)
    assert pair_key(3, 0, short) == (0, f'"{short}"')


def test_the_corpus_reader_holds_no_long_output_decoded_and_a_job_reads_each_whole(tmp_path, monkeypatch):
    """HumanEval/15's 9.7 MB of lines name 3.4 GB of long outputs (3.2 GB of strings, 190 MB of
    list texts that decoded took 1.5 GB): read decoded, a worker held them (and kept them through
    the tasks after).  A long output is read back as a reference into the store
    (:class:`StoredStr`, :class:`StoredValue`), read when a job's cases are encoded, with the
    text the case had when the output was held; the reader keeps the last tasks within
    KEEP_BYTES of their lines."""
    from pytest_specbench.benchmarks.contract.evalplus import DIGEST_STRINGS_OVER
    from pytest_specbench.benchmarks.nl2postcond.corpus import (Bopi, Kept, LongStore, StoredStr, StoredValue, load,
                                                                pair_key, stable_text)
    from pytest_specbench.benchmarks.nl2postcond.evaluate import case_text
    from pytest_specbench.benchmarks.nl2postcond.observe import LongStr, as_case
    from pytest_specbench.execution import wire

    path = tmp_path / "corpus.jsonl"
    store = LongStore.beside(path)
    text = "1 " * DIGEST_STRINGS_OVER
    store.put(text)
    long = LongStr(wire.string_digest(text), len(text))
    big = [{3, 1, 2}] + list(range(DIGEST_STRINGS_OVER))  # a long value, not a string (a set: its text's order)
    opaque = [(i for i in ())] * DIGEST_STRINGS_OVER  # its text names no address: the same in every build
    lines = [Kept("T/0", 1, True, (Bopi(0, (3,), long), Bopi(1, (4,), big))),
             Kept("T/0", 2, True, (Bopi(1, (4,), big), Bopi(2, (5,), opaque))),
             Kept("T/0", 3, True, (Bopi(2, (5,), opaque),)),
             Kept("T/1", 1, True, (Bopi(0, (3,), "short"),)), Kept("T/2", 1, True, (Bopi(0, (3,), "short"),))]
    path.write_text("".join(k.line(store) + "\n" for k in lines))
    read = load(path)
    got = read["T/0"]
    out, value, opaque_value = got[0].bopi[0].output, got[0].bopi[1].output, got[1].bopi[1].output
    assert isinstance(out, StoredStr) and (out.digest, out.length) == (long.digest, len(text)) and out.held() == text
    assert isinstance(value, StoredValue) and value.held() == big and not value.opaque and opaque_value.opaque
    assert got[1].bopi[0].output is value  # one reference per distinct output
    # a job's text is the text of the case with the output held
    for stored, held in ((out, text), (value, wire.loads(stable_text(big))), (opaque_value, wire.loads(stable_text(opaque)))):
        assert case_text(as_case(["x"], (3,), stored)) == wire.dumps(as_case(["x"], (3,), held))
    with pytest.raises(ValueError, match="known by its digest only"):
        case_text(as_case(["x"], (3,), long))
    # keys as the held values': equal values, equal keys; an opaque one is its program's own pair
    assert pair_key(1, 1, value) == pair_key(2, 1, value) == (1, "\0text " + wire.string_digest(stable_text(big)))
    assert pair_key(2, 2, opaque_value) != pair_key(3, 2, opaque_value)
    monkeypatch.setattr(corpus.CorpusFile, "KEEP_BYTES", 2_000)  # above all the tasks' lines
    read = corpus.CorpusFile(path)
    read["T/0"], read["T/1"], read["T/2"]
    assert read.held() == ["T/0", "T/1", "T/2"]  # lines only: no long output counted
    monkeypatch.setattr(corpus.CorpusFile, "KEEP_BYTES", 400)  # below T/0's lines with T/1's
    read = corpus.CorpusFile(path)
    read["T/0"], read["T/1"], read["T/2"]
    assert read.held() == ["T/1", "T/2"]


def test_the_causes_table_takes_the_run_columns_the_evaluation_counted():
    """The corpus holds the build's exact outputs by position; the evaluation counts by input
    value and Python's == (--nl2postcond-pairs, --nl2postcond-oracle). The per-task table states
    the run columns a kept run counted, which are what its kill columns were counted on."""
    from pytest_specbench.benchmarks.nl2postcond.tools.causes import kill_summary

    row = {"task_id": "T/1", "r_num": 0, "test_set_correct": True, "num_codes_run": 2, "num_bopi_run": 5,
           "num_natural_codes_run": 1, "num_codes_killed": 2, "num_bopi_killed": 5, "num_natural_codes_killed": 1}
    counts = {"codes_run": 2, "bopi_run": 5, "natural_codes_run": 1, "codes_killed": 2, "bopi_killed": 5,
              "natural_codes_killed": 1}
    bench = {"tasks": {"T/1": {"samples": [{"index": 0, "checks": {
        "correct": {"passed": True, **counts}, "complete": {"applicable": True, **counts}}}]}}}
    summary = kill_summary([row], bench)["T/1"]
    assert summary["evaluated"] == (2, 5, 1) and summary["correct"] == "1/1" and summary["kill_rows"] == []


def test_kills_above_upstreams_by_the_opaque_bad_outputs_get_that_cause():
    """HumanEval/22: 956 of the corpus's bad outputs are ``filter`` objects, which the wire carries
    as placeholders; ``all(isinstance(i, int) for i in return_value)`` raises on each (killed),
    where upstream's ran on the object and held: every row's ``bopi_killed`` is 956 above."""
    from pytest_specbench.benchmarks.nl2postcond.corpus import Bopi, Kept
    from pytest_specbench.benchmarks.nl2postcond.tools.causes import kill_cause, opaque_outputs
    from pytest_specbench.execution.wire import Opaque

    task = {"base_input": [[[1, "a"]], [[2]]], "plus_input": []}
    programs = [Kept("T/1", 0, True, (Bopi(0, ([1, "a"],), Opaque("builtins.filter", "<filter>")),
                                      Bopi(1, ([2],), Opaque("builtins.filter", "<filter>")))),
                Kept("T/1", 1, True, (Bopi(0, ([1, "a"],), []),)),
                # as a corpus line reads back: the build's placeholder, carried as an opaque object itself
                Kept("T/1", 2, True, (Bopi(1, ([2],), Opaque("pytest_specbench.execution.wire.Opaque",
                                                             "<builtins.map <map object at 0x>>")),))]
    assert opaque_outputs(programs, task) == {"filter": 2, "map": 1}
    rows = [(0, "bopi_killed", 12, 10), (1, "bopi_killed", 12, 10), (0, "codes_killed", 2, 1)]
    assert kill_cause({"kill_rows": rows}, True, {"filter": 2}).startswith(
        "objects the wire cannot carry: 2 bad outputs (filter x2) reach the postcondition as placeholders")
    assert kill_cause({"kill_rows": rows}, True, {"filter": 3}) == \
        "same corpus counts, kills differ (upstream below ours on every such row): not shown (3 opaque bad outputs)"
    assert kill_cause({"kill_rows": rows}, False, {"filter": 2}) == "kills follow the corpus (its run columns differ)"
    # HumanEval/57: a kept program that draws random numbers (upstream's kill run drew again)
    from pytest_specbench.benchmarks.nl2postcond.tools.causes import _imports_random
    assert _imports_random("import random\ndef f(l):\n    return random.randint(1, 10) % 2 == 0\n")
    assert _imports_random("def f(l):\n    from random import randint\n    return randint(1, 2)\n")
    assert not _imports_random("def f(l):\n    return 'random'\n")
    assert kill_cause({"kill_rows": [(1, "bopi_killed", 1030, 1028)]}, True, {}, [], [214]).startswith(
        "consistent with a buggy program that draws random numbers (program(s) 214)")
    # HumanEval/95 r_num 2: programs naming their parameter otherwise (the corpus's params) are named
    assert kill_cause({"kill_rows": [(2, "bopi_killed", 1, 84)]}, True, {}, [13, 51]).startswith(
        "consistent with the buggy programs' own parameter names: program(s) 13, 51 name theirs otherwise")


def test_the_build_counts_the_programs_the_stop_rule_ended():
    """The stop rule ends a program after 10 time-outs in a row or 30 in all; the inputs after are
    time-outs it may not have had (HumanEval/94's programs 208 and 229: 420 bad outputs each).
    ``stop_decided`` tells such a program from one whose last inputs simply timed out."""
    from types import SimpleNamespace as O

    ok, out = O(status="ok"), O(status="timeout")
    assert corpus.stop_decided([ok] * 3 + [out] * 10 + [out] * 5, (10, 30))  # ended at its 10th in a row
    assert not corpus.stop_decided([ok] * 3 + [out] * 10, (10, 30))  # its 10th was its last input
    assert corpus.stop_decided(([out] * 9 + [ok]) * 4, (10, 30))  # 30 in all, then stopped
    assert not corpus.stop_decided([out] * 9 + [ok] + [out] * 9, (10, 30))


def test_with_the_stop_rule_off_a_program_that_hangs_on_many_inputs_keeps_its_later_bad_outputs(tmp_path):
    """``--stop-after-timeouts off``: every program runs on every input, as upstream's EvalPlus
    run did (HumanEval/44: upstream's 11,578 pairs exactly, against 11,329 under 10/30; session 31).
    A program that hangs on twelve inputs in a row and then answers wrongly gives that bad
    output only with the rule off; the rules record the choice, and a part of one is not resumed
    under the other."""
    from pytest_specbench.errors import DataError
    from pytest_specbench.execution.limits import Limits

    task = {"T/0": {**_tiny_task()["T/0"], "base_input": [[i] for i in range(14)]}}
    candidates = tmp_path / "c.jsonl"
    candidates.write_text(json.dumps({"task_id": "T/0", "response_num": 1, "solution": "def f(x):\n    return x + 1\n"})
                          + "\n")

    def plan(code, wall_factor, i):  # the reference (x) answers everywhere; the program hangs on 0-11
        return ("ok", i) if "+ 1" not in code else ("cpu", None) if i < 12 else ("ok", i + 1)

    def build(out, stop_after):
        said = []
        figures = corpus.build(task, candidates, out, [_Executor(plan)], Limits(), "base+plus", log=said.append,
                               stop_after=stop_after)
        return figures, out.with_name(out.name + ".parts")

    figures, parts = build(tmp_path / "on.jsonl", corpus.STOP_AFTER_TIMEOUTS)
    assert figures["stopped"] == 1 and figures["kept"] == 0 and not (parts / "T_0.jsonl").read_text()
    figures, parts = build(tmp_path / "off.jsonl", None)
    assert figures["stopped"] == 0 and figures["kept"] == 1
    (line,) = (parts / "T_0.jsonl").read_text().splitlines()
    assert [b[0] for b in json.loads(json.loads(line)["bopi"])] == [12, 13]
    assert json.loads((parts / corpus.RULES_FILE).read_text())["stop_after_timeouts"] is None
    with pytest.raises(DataError, match="other rules"):
        build(tmp_path / "off.jsonl", corpus.STOP_AFTER_TIMEOUTS)
    # how a user says it: two positive counts or off; 0 would end every program at its first call
    assert corpus.parse_stop_rule(["off"]) is None and corpus.parse_stop_rule(["50", "150"]) == (50, 150)
    for bad in (["0", "0"], ["10"], ["10", "x"], ["-1", "30"], ["10", "30", "5"]):
        with pytest.raises(ValueError, match=r"^--stop-after-timeouts: two positive counts \(IN_A_ROW IN_ALL\) or off"):
            corpus.parse_stop_rule(bad)
    assert corpus.corpus_key(candidates, candidates, "base+plus") == corpus.corpus_key(
        candidates, candidates, "base+plus", stop_after=(10, 30)) != corpus.corpus_key(
        candidates, candidates, "base+plus", stop_after=None)
