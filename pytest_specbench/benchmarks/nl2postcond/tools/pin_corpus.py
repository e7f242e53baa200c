"""Write the corpus pin (``pytest_specbench/data/registry/corpus/nl2postcond.txt``) from a
build's parts folder: each task's part sha256, the folder's rules and the sha256 of the
parts joined in task order (docs/nl2postcond.md, "The corpus pin").

    python -m pytest_specbench.benchmarks.nl2postcond.tools.pin_corpus PARTS_FOLDER [--out FILE]

Only parts of the default rules are pinned (base+plus inputs, the exact oracle, the flat
1 s time rule, this code's stop rule and format): the family and the build compare against them.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

from ....data.corpus_pin import PIN_FILE, CorpusPin, write_pin
from ....execution.limits import Limits
from .. import corpus


def default_rules_differ(rules: dict) -> list[str]:
    """The keys of a parts folder's rules that are not the default build's (the candidates'
    digest is whatever the folder names: upstream's zip, checked by the download)."""
    want = {"format": corpus.FORMAT, "call_cpu": corpus.time_rule_stamp("flat", Limits().call_cpu),
            "stop_after_timeouts": list(corpus.STOP_AFTER_TIMEOUTS), "inputs": "base+plus", "oracle": "exact",
            "long_outputs": corpus.LONG_RULE}
    return sorted(k for k, v in want.items() if rules.get(k) != v)


def pin_of(parts: Path) -> CorpusPin:
    rules = json.loads((parts / corpus.RULES_FILE).read_text(encoding="utf-8"))
    if "long_outputs" not in rules and not corpus.holds_long_output(parts):
        rules["long_outputs"] = corpus.LONG_RULE  # the same bytes under both (corpus.upgrade_rules)
    differ = default_rules_differ(rules)
    if differ:
        raise SystemExit(f"pin_corpus: {parts}: not the default build's rules ({', '.join(differ)}): nothing pinned")
    files = corpus.parts_in_order(parts)
    whole = hashlib.sha256()
    digests = {}
    for part in files:
        data = part.read_bytes()
        whole.update(data)
        digests[corpus.part_task(part)] = hashlib.sha256(data).hexdigest()
    return CorpusPin(rules, whole.hexdigest(), digests)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="pin_corpus", description=__doc__.split("\n\n")[0])
    p.add_argument("parts", type=Path)
    p.add_argument("--out", type=Path, default=PIN_FILE)
    args = p.parse_args(argv)
    pin = pin_of(args.parts)
    write_pin(pin, args.out)
    print(f"{args.out}: {len(pin.parts)} parts pinned, joined sha256 {pin.whole}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
