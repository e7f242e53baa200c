"""pytest-specbench: specification benchmarks for code LLMs as pytest suites."""
__version__ = "0.1.0"
