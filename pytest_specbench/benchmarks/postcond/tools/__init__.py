"""Scripts of the postcond family that print figures or rebuild its bundled suite (run with `python -m`); not loaded by the plugin."""
