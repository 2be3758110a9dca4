"""Review services: the lifecycle function, reviewer decisions, the queue and record views."""
