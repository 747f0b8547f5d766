"""Model architectures (open_clip configs shipped as data), loading and batched encoding."""
