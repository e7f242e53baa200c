"""The Python-spec service (placeholder on this branch; see blocks.py)."""
from .blocks import BlockOutcome, check_blocks  # noqa: F401
