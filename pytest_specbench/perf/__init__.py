"""Performance measurements (plugin vs EvalPlus vs a no-isolation floor): ``python -m pytest_specbench.perf``.

Benchmark scripts that print figures; never imported by the plugin.
"""
