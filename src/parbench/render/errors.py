"""Errors raised by the paper renderer.

Every error message names the thing that is wrong (the file, the reference, the
missing program) so that a failed pipeline step says what to fix.
"""

from __future__ import annotations


class RenderError(RuntimeError):
    """The paper could not be rendered."""


class QuartoNotFoundError(RenderError):
    """renderer="quarto" was asked for but no ``quarto`` executable is on PATH."""


class MissingIncludeError(RenderError):
    """An ``{{< include >}}`` shortcode names a file that does not exist."""


class CrossRefError(RenderError):
    """A cross reference (``@fig-x``, ``@tbl-x``, ...) or citation cannot be resolved."""


class UnsupportedSyntaxError(RenderError):
    """The sources use Quarto syntax the pandoc fallback does not render faithfully."""
