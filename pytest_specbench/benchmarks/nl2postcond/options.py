"""nl2postcond's declared options (``--nl2postcond-*``), importable without the adapter."""
from __future__ import annotations

from ...pyspec.tiers.options import SPEC_TIERS
from ..base import Option

OPTIONS = (
    Option("nl2postcond_prompt", "prompt form (paper: simple, or base with its examples of format)",
           default="simple", choices=("simple", "base")),
    Option("nl2postcond_reference", "whether the prompt shows the reference implementation",
           default="with", choices=("with", "without")),
    Option("nl2postcond_inputs", "test inputs of test-set correctness: base+plus (what upstream's sheet was "
                                 "decided on) or base (the released script's main())",
           default="base+plus", choices=("base+plus", "base")),
    Option("nl2postcond_kill", "a bad output is rejected when the postcondition raises AssertionError "
                               "(assertion) or any exception (any)",
           default="assertion", choices=("assertion", "any")),
    Option("nl2postcond_corpus", "the buggy-program corpus `specbench nl2postcond build-corpus` wrote "
                                 "(default: the bundled suite's, or ROOT/nl2postcond/corpus.jsonl)", default=None),
    SPEC_TIERS,
)
