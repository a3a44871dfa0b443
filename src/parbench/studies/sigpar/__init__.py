"""sigpar: sign/verify throughput of classical and post-quantum signatures across
worker counts, threading against multiprocessing."""
