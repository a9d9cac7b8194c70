"""Training, evaluation, benchmark and command-line scripts."""
