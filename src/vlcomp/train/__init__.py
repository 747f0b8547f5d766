"""Training: named-block batches and the sampler, the optimisation loop, checkpoints, validation retrieval, kNN."""
