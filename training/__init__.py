"""Training: the PPO self-play loop, its config, opponent pool, warm start and run report."""
