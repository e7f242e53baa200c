"""Sandboxed executors, one per language (Python now; Java and Lean later).

Kept free of heavy imports: the sandbox zygote imports this package too.
"""
