"""Players for Scopa: baselines and learned agents."""
