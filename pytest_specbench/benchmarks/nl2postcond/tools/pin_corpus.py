"""Write the corpus pin (``pytest_specbench/data/registry/corpus/nl2postcond.txt``) from a
build's parts folder: each task's part sha256, the folder's rules and the manifest digest
(``data/corpus_pin.manifest_digest``; docs/nl2postcond.md, "The corpus pin").

    python -m pytest_specbench.benchmarks.nl2postcond.tools.pin_corpus PARTS_FOLDER [--out FILE] [--add | --replace]

Only parts of the default rules are pinned (base+plus inputs, the exact oracle, the flat
1 s time rule, this code's stop rule and format): the family and the build compare against them.
``--add`` keeps the pin's parts and adds the folder's (the same rules; a task both hold must
have the same part): a later build's new tasks join the pin without the earlier parts' bytes.
``--replace`` does the same and takes the folder's part where a task has another in the pin: for
a change of the code that changes some parts' bytes (session 29: an iterator a program returns is
recorded with its items, which changed the parts of the seven tasks whose programs return one), each
task it replaces named.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

from ....data.corpus_pin import PIN_FILE, CorpusPin, manifest_digest, read_pin, write_pin
from ....execution.limits import Limits
from .. import corpus
from . import one_line_errors


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
    digests = {corpus.part_task(part): hashlib.sha256(part.read_bytes()).hexdigest()
               for part in corpus.parts_in_order(parts)}
    return CorpusPin(rules, manifest_digest(digests), digests)


def added(pin: CorpusPin, new: CorpusPin, replace: bool = False) -> CorpusPin:
    """``pin`` with ``new``'s parts added, in task order; refused (one line) when the rules
    differ (the candidates' digest included), or a task both hold has another part.  Added
    to a pin of no parts (no file yet), ``new`` is the pin."""
    if not pin.parts:
        return new
    differ = sorted(k for k in set(pin.rules) | set(new.rules) if pin.rules.get(k) != new.rules.get(k))
    if differ:
        raise SystemExit(f"pin_corpus --add: the folder's rules differ from the pin's ({', '.join(differ)}): nothing pinned")
    clash = [t for t, sha in new.parts.items() if pin.parts.get(t, sha) != sha]
    if clash and not replace:
        raise SystemExit(f"pin_corpus --add: {len(clash)} task(s) have another part in the pin ({', '.join(clash[:5])}): "
                         "nothing pinned (docs/nl2postcond.md 'Deterministic')")
    parts = dict(sorted({**pin.parts, **new.parts}.items(), key=lambda item: corpus.task_order(item[0])))
    return CorpusPin(pin.rules, manifest_digest(parts), parts)


@one_line_errors("pin_corpus")
def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="pin_corpus", description=__doc__.split("\n\n")[0])
    p.add_argument("parts", type=Path)
    p.add_argument("--out", type=Path, default=PIN_FILE)
    how = p.add_mutually_exclusive_group()
    how.add_argument("--add", action="store_true", help="keep the pin's parts (--out) and add the folder's")
    how.add_argument("--replace", action="store_true",
                     help="as --add, and the folder's part replaces the pin's where a task has another")
    args = p.parse_args(argv)
    pin = pin_of(args.parts)
    if args.add or args.replace:
        before = read_pin(args.out)
        replaced = [t for t, sha in pin.parts.items() if before.parts.get(t, sha) != sha]
        pin = added(before, pin, replace=args.replace)
        print(f"{args.out}: {len(pin.parts) - len(before.parts)} parts added"
              + (f", {len(replaced)} replaced ({', '.join(replaced)})" if args.replace else ""))
    write_pin(pin, args.out)
    print(f"{args.out}: {len(pin.parts)} parts pinned, manifest digest {pin.manifest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
