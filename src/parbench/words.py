"""Counts written as English, for the console and the paper alike: "1 time", "3 times",
never "3 time(s)" (the count is known where the line is written)."""

from __future__ import annotations


def counted(number, noun: str, plural: str | None = None) -> str:
    """The number and the noun, in the plural unless the number is one ("1 time", "3
    times"; `plural` where an "s" does not make it: "launch", "launches"); a fact (anything
    with a `value`) writes itself and counts by its value."""
    value = getattr(number, "value", number)
    return f"{number} {noun if value == 1 else (plural or noun + 's')}"
