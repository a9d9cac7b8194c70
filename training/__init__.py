"""Training: the PPO self-play loop, its config, opponent pool, warm start, checkpoints and run report."""
