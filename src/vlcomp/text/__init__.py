"""Text processing: tokenizers, caption cleaning, ARO perturbations and hard-negative swaps."""
