"""Training: batch assembly (with hard negatives and hard images), the optimisation loop, kNN mining."""
