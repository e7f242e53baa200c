"""The adapter interface, as adapters import it: every name is defined in
:mod:`pytest_specbench.types` (the shared vocabulary, which the shared services
import without importing ``benchmarks/``) and re-exported here, because adapters
in this repository and in other packages (``specbench.benchmarks`` entry points)
import from ``pytest_specbench.benchmarks.base``."""
from ..types import (Benchmark, CheckContext, CheckResult, CheckSkipped, Message, Option, Prompt,  # noqa: F401
                     RoleModel, RoleRequest, Task, TaskSet, existing_folder, positive_int,
                     positive_seconds)
