"""nl2postcond's scripts for researchers (agreement with upstream's sheet, causes, the corpus's pin...)."""
from __future__ import annotations

import functools
from typing import Callable

from ....errors import SpecbenchError


def one_line_errors(tool: str) -> Callable:
    """A script's ``main`` whose data fault (a corpus line, a sheet row, an option) ends it with
    one line naming the file and line, as the plugin reports it, not a traceback."""
    def wrap(main: Callable[..., int]) -> Callable[..., int]:
        @functools.wraps(main)
        def run(*args, **kwargs) -> int:
            try:
                return main(*args, **kwargs)
            except SpecbenchError as exc:
                raise SystemExit(f"{tool}: {exc}") from None
        return run
    return wrap
