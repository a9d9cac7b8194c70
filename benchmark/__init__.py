"""Speed benchmarks of the engine and environments against peers measured in the same run."""
