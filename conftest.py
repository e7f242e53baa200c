"""Top-level conftest: keeps the repository's bundled suites and perf scripts out of test collection."""
collect_ignore = ["benchmarks", "docs"]
