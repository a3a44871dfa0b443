"""The seed's output block, written and parsed (the same writer as the binary's
`seed_format.rs`):

    ML-KEM-512 Benchmark Results
    ============================
    keypair cycles = 34938
    encaps cycles = 38331
    decaps cycles = 43913
              percentile     1    10    20    30    40    50    60    70    80    90    99
    keypair percentiles: 34129 34462 34632 34754 34848 34938 35039 35154 35286 35497 37627
    encaps  percentiles: 37450 37895 38046 38152 38243 38331 38443 38547 38680 38946 43106
    decaps  percentiles: 43110 43420 43591 43698 43811 43913 44016 44142 44283 44510 46454

The statistics are the seed's: the median is `sorted[n // 2]`, percentile p the element
at `min(n * p // 100, n - 1)`. Values wider than 5 digits widen every column alike.
Before the blocks, `preamble` writes the seed's two lines and one naming the counter
and its unit: the values are counter ticks, core cycles only when the counter counts
them.
"""

from __future__ import annotations

import re

PERCENTILES = (1, 10, 20, 30, 40, 50, 60, 70, 80, 90, 99)


def median(sorted_sample) -> int:
    return sorted_sample[len(sorted_sample) // 2]


def percentile(sorted_sample, p: int) -> int:
    return sorted_sample[min(len(sorted_sample) * p // 100, len(sorted_sample) - 1)]


def block(title: str, ops: list[tuple[str, list[int]]]) -> str:
    """The block of `title` (e.g. "ML-KEM-512") for [(operation, ascending sample)]."""
    return block_from_statistics(title, [(op, median(s), {p: percentile(s, p) for p in PERCENTILES})
                                         for op, s in ops])


def block_from_statistics(title: str, ops: list[tuple[str, int, dict]]) -> str:
    """The block from [(operation, median, {percentile: value})]."""
    width = max([5] + [len(str(v)) for _, _, pcts in ops for v in pcts.values()])
    heading = f"{title} Benchmark Results"
    lines = [heading, "=" * len(heading)]
    lines += [f"{op} cycles = {med}" for op, med, _ in ops]
    lines.append(f"{'percentile':>20}" + "".join(f" {p:>{width}}" for p in PERCENTILES))
    lines += [f"{op:<7} percentiles:" + "".join(f" {pcts[p]:>{width}}" for p in PERCENTILES) for op, _, pcts in ops]
    return "\n".join(lines) + "\n"


def counter_line(counter: dict) -> str:
    """The line naming the counter and its unit (the binary writes the same)."""
    how = "forced by CYCLE_COUNTER" if counter["forced"] else "best available"
    rate = f", {counter['tsc_hz'] / 1e9:.3f} GHz" if counter["name"] == "TSC" and counter.get("tsc_hz") else ""
    return f"Cycle counter: {counter['name']} ({how}): values are {counter['describe']}{rate}"


def preamble(implementation: str, iterations: int, counter_line: str) -> str:
    return (f"Running ML-KEM benchmarks with {implementation} implementation\n"
            f"Iterations per test: {iterations}\n{counter_line}\n")


_TITLE = re.compile(r"^(?P<title>\S+) Benchmark Results$")
_MEDIAN = re.compile(r"^(?P<op>\w+) cycles = (?P<value>\d+)$")
_HEADER = re.compile(r"^\s+percentile((?:\s+\d+)+)\s*$")
_ROW = re.compile(r"^(?P<op>\w+)\s+percentiles:((?:\s+\d+)+)\s*$")


class SeedFormatError(ValueError):
    """The text is not in the seed's format; the message says where."""


def parse(text: str) -> dict[str, dict]:
    """Every block of `text`: {title: {"medians": {op: value}, "percentiles": {op: {p: value}}}}.
    Other lines (the preamble) are skipped; a block that breaks the format raises."""
    out: dict[str, dict] = {}
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = _TITLE.match(lines[i])
        if not m:
            i += 1
            continue
        title = m.group("title")
        where = f"block {title!r} (line {i + 1})"
        if i + 1 >= len(lines) or not re.fullmatch(r"=+", lines[i + 1]):
            raise SeedFormatError(f"{where}: the title is not underlined with '='")
        i += 2
        medians, percentiles = {}, {}
        while i < len(lines) and (mm := _MEDIAN.match(lines[i])):
            medians[mm.group("op")] = int(mm.group("value"))
            i += 1
        if i >= len(lines) or not (hm := _HEADER.match(lines[i])):
            raise SeedFormatError(f"{where}: expected the percentile header after the medians")
        columns = [int(x) for x in hm.group(1).split()]
        if tuple(columns) != PERCENTILES:
            raise SeedFormatError(f"{where}: percentile columns {columns}, expected {list(PERCENTILES)}")
        i += 1
        while i < len(lines) and (rm := _ROW.match(lines[i])):
            values = [int(x) for x in rm.group(2).split()]
            if len(values) != len(PERCENTILES):
                raise SeedFormatError(f"{where}: {rm.group('op')} has {len(values)} percentiles, expected 11")
            percentiles[rm.group("op")] = dict(zip(PERCENTILES, values))
            i += 1
        if set(percentiles) != set(medians):
            raise SeedFormatError(f"{where}: medians for {sorted(medians)} but percentiles for {sorted(percentiles)}")
        out[title] = {"medians": medians, "percentiles": percentiles}
    return out
