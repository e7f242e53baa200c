"""EvalPlus tasks whose inputs are decoded when first used (issue #28: every process of a
run decoded all of HumanEval+/MBPP+ at start, whatever it selected).

The first load of a file's content checks every line and writes an index (every field but
the inputs) keyed by the file's sha256; later loads read the index and decode a task's
inputs from the same bytes when they are first read.  What a task holds must not change.
"""
from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from pytest_specbench.benchmarks.contract import evalplus_data as D
from pytest_specbench.benchmarks.contract.evalplus import EvalPlusData, bundled_folder, functional_cost
from pytest_specbench.data.jsonl import file_digest
from pytest_specbench.errors import DataError

BUNDLED = bundled_folder("contract") / "evalplus"
FILES = sorted(BUNDLED.glob("*.jsonl"))


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_indexed_tasks_equal_the_decoded_ones_and_decode_their_inputs_only_when_read(path, tmp_path):
    plain = D.load_evalplus(path)
    first, digest = D.load_evalplus_indexed(path, tmp_path)  # decodes everything, writes the index
    assert digest == file_digest(path)
    assert [p.name for p in tmp_path.iterdir()] == [f"v{D.INDEX_FORMAT}-{digest}.json"]
    second, _ = D.load_evalplus_indexed(path, tmp_path)  # from the index
    assert list(first) == list(second) == list(plain)
    assert all(t._inputs is None for t in second.values())  # nothing decoded yet
    for task_id, task in second.items():
        assert D.input_count(task) == D.input_count(plain[task_id])
    assert all(t._inputs is None for t in second.values())  # counting decodes nothing
    for task_id in plain:
        # equal to load_evalplus's dicts, MBPP's tuple/set conversions included
        assert dict(second[task_id]) == dict(first[task_id]) == plain[task_id]
        assert list(second[task_id]) == list(plain[task_id])  # same keys, same order


def test_a_bad_line_is_one_error_naming_it_and_no_index_is_written(tmp_path):
    good = FILES[0].read_text().splitlines()
    path = tmp_path / "HumanEvalPlus.jsonl.gz"
    path.write_bytes(gzip.compress(("\n".join([good[0], '{"task_id": "X/1", "prompt": ', good[1]]) + "\n").encode()))
    index = tmp_path / "index"
    with pytest.raises(DataError, match=r"HumanEvalPlus.jsonl.gz:2: malformed JSON"):
        D.load_evalplus_indexed(path, index)
    assert not index.exists() or not list(index.iterdir())


def test_an_index_of_other_bytes_is_not_used(tmp_path):
    """The index is found by the sha256 of the bytes read, so an edited file is decoded
    again (and checked) rather than described by the old index."""
    path = tmp_path / "HumanEvalPlus.jsonl"
    path.write_bytes(FILES[0].read_bytes())
    before, d1 = D.load_evalplus_indexed(path, tmp_path / "index")
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    rows[0]["prompt"] = "edited"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    after, d2 = D.load_evalplus_indexed(path, tmp_path / "index")
    assert d1 != d2 and after[rows[0]["task_id"]]["prompt"] == "edited"
    assert len(list((tmp_path / "index").iterdir())) == 2


def test_a_run_s_data_keeps_its_digests_and_plans_without_decoding_inputs(tmp_path):
    """What the plugin loads (EvalPlusData with the run's cache folder): digests per task
    as before; the controller's dispatch cost of every item reads no input."""
    EvalPlusData._cache.pop(BUNDLED.resolve(), None)
    D.load_evalplus_indexed(FILES[0], tmp_path)  # an earlier process wrote the index
    try:
        data = EvalPlusData.load(BUNDLED, tmp_path)
        assert {data.digest[t] for t in data.tasks} == {file_digest(f) for f in data.files}

        class Ctx:
            settings = None

            def cache_dir(self, *parts):
                return tmp_path / "cache"
        lazy = [t for t in data.tasks.values() if isinstance(t, D.EvalPlusTask) and t._inputs is None]
        assert lazy  # the file indexed earlier: its tasks' inputs are not decoded yet
        for task in lazy:
            assert functional_cost(task, data.digest[task["task_id"]], Ctx()) > 0
        assert all(t._inputs is None for t in lazy)
    finally:
        EvalPlusData._cache.pop(BUNDLED.resolve(), None)
