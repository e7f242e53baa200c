"""nl2postcond's declared options (``--nl2postcond-*``), importable without the adapter."""
from __future__ import annotations

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
)

# The tiers of evidence (issue #47), shared with the other Python-spec families.
from ..tier_options import TIER_OPTIONS  # noqa: E402 - kept apart from the family's own options

OPTIONS = OPTIONS + TIER_OPTIONS

from ..search_tier_options import SEARCH_TIER_OPTIONS  # noqa: E402 - the crosshair and z3 tiers'

OPTIONS = OPTIONS + SEARCH_TIER_OPTIONS
