"""parbench: measure how real workloads scale across threads, processes and native
schedulers, and turn the measurements into a reproducible paper."""

__version__ = "0.1.0"
