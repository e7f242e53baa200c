"""nl2postcond's declared options (``--nl2postcond-*``), importable without the adapter."""
from __future__ import annotations

from ..base import Option
from ..tier_options import TIER_OPTIONS

OPTIONS = (
    Option("nl2postcond_prompt", "prompt form (paper: simple, or base with its examples of format)",
           default="simple", choices=("simple", "base")),
    Option("nl2postcond_reference", "whether the prompt shows the reference implementation",
           default="with", choices=("with", "without")),
    Option("nl2postcond_inputs", "test inputs of test-set correctness: base+plus (what upstream's sheet was "
                                 "decided on) or base (the released script's main())",
           default="base+plus", choices=("base+plus", "base")),
    Option("nl2postcond_kill", "a bad output is rejected when the postcondition raises any exception (any, "
                               "upstream's counts) or AssertionError only (assertion)",
           default="any", choices=("any", "assertion")),
    Option("nl2postcond_codes", "a buggy program is rejected when one of the bad outputs it added (added, "
                                "upstream's counts) or of all its bad outputs (all) is rejected",
           default="added", choices=("added", "all")),
    Option("nl2postcond_pairs", "what makes a bad output distinct: str (an (input, bad output) pair by the "
                                "input's value and the text str() prints for the output: True and 'True' are one, "
                                "and an input HumanEval+ lists twice is one, as upstream's counts), value (by the "
                                "output's value and type), position (value, with inputs by their place in the "
                                "list, as upstream's script names pairs) or json (str, of the output as a JSON file "
                                "gives it back: a tuple is a list; nearer upstream on HumanEval/20, off it on /35, /68, /106)",
           default="str", choices=("str", "value", "position", "json")),
    Option("nl2postcond_names", "the names a bad output's inputs are bound to: reference (the task's, as for "
                                "the reference's outputs: a postcondition tells them apart by value alone) or "
                                "program (the buggy program's own parameter names, where the corpus records them: "
                                "upstream's kill run)",
           default="reference", choices=("reference", "program")),
    Option("nl2postcond_oracle", "what a recorded bad output must be to count: eq (unequal to the reference's "
                                 "under Python's ==, as upstream's counts: 2.0 for 2 is not bad) or exact (unequal "
                                 "in value or type: the corpus's own selection)",
           default="eq", choices=("eq", "exact")),
    Option("nl2postcond_time", "per-input time rule of test-set correctness: paper (none; the job's budget "
                               "only) or upstream (the postcondition within max(0.2 s, 2x the reference's time) "
                               "less the reference's time on each input, as upstream's script)",
           default="paper", choices=("paper", "upstream")),
    Option("nl2postcond_long_ints", "outputs holding an int of more than 4,300 digits (HumanEval/83): paper "
                                    "(values, compared as any other) or upstream (the case fails, as in upstream's "
                                    "run, whose harness could not render them as text)",
           default="paper", choices=("paper", "upstream")),
    Option("nl2postcond_corpus", "the buggy-program corpus `specbench nl2postcond build-corpus` wrote "
                                 "(default: the bundled suite's, or ROOT/nl2postcond/corpus.jsonl)", default=None),
    Option("nl2postcond_corpus_pin", "check (a corpus whose task differs from the pinned build's part is refused, "
                                     "registry/corpus/nl2postcond.txt), warn (such tasks are taken, named in one "
                                     "warning: e.g. a part this machine builds otherwise) or off (a corpus of other "
                                     "rules, e.g. build-corpus --inputs base)", default="check",
           choices=("check", "warn", "off")),
) + TIER_OPTIONS  # the tiers of evidence (issue #47), shared with the other Python-spec families

