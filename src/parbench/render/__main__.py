"""``python -m parbench.render paper/ [--renderer auto|quarto|pandoc] [--output PATH]``"""

from __future__ import annotations

import argparse
import sys

from . import RENDERERS, RenderError, render_paper


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m parbench.render",
        description="Render the paper (a Quarto project) to HTML and PDF, with Quarto when it "
        "is on PATH and with the built-in pandoc and typst renderer otherwise.",
    )
    parser.add_argument("paper_dir", nargs="?", default="paper", help="the Quarto project directory (default: paper)")
    parser.add_argument("--renderer", choices=RENDERERS, default="auto",
                        help="auto (default): Quarto if on PATH, else pandoc")
    parser.add_argument("--output", "-o", default=None,
                        help="output HTML (default: <paper_dir>/<output-dir>/index.html); the PDF goes beside it")
    parser.add_argument("--no-pdf", action="store_true", help="render the HTML only")
    args = parser.parse_args(argv)
    try:
        render_paper(args.paper_dir, args.output, renderer=args.renderer, pdf=not args.no_pdf)
    except RenderError as exc:
        print(f"parbench.render: error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
