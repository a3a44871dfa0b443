"""Telemetry probes: per-core CPU sampling, RSS, temperature, energy, affinity and a
capability summary of the machine.

One concern per module:

- ``procfs``: tolerant readers for /proc and /sys under an injectable root.
- ``cpu``: background per-core CPU utilisation sampler (psutil).
- ``memory``: resident set size of a process.
- ``temperature``: CPU temperature from psutil's hwmon view.
- ``rapl``: RAPL powercap package counters (Linux), unwrapped.
- ``powermetrics``: parse and run Apple's powermetrics (macOS).
- ``energy``: the ``EnergyMeter`` facade that picks RAPL, powermetrics or none at run
  time (and re-exports the names of the two modules above).
- ``affinity``: worker-to-core plans and per-thread pinning.
- ``capabilities``: what this machine can measure, and one warning per gap.

Every probe degrades to ``None`` plus a human-readable reason instead of raising when a
source is missing; nothing here is imported by ``parbench`` on its own, so importing the
package stays cheap.
"""
