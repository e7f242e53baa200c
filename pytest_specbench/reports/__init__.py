"""Results: the run journal, the JSON report and the terminal summary."""
