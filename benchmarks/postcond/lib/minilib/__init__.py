"""minilib: a tiny library written for pytest-specbench's bundled PostcondBench suite."""
