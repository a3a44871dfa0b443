"""The stylesheet of the pandoc fallback, kept as a string so that it needs no
package data (it is written next to the intermediate files and embedded in the HTML)."""

PAPER_CSS = """\
html { font-size: 17px; }
body {
  font-family: "Iowan Old Style", "Palatino Linotype", Palatino, "Book Antiqua",
    Georgia, "Times New Roman", serif;
  line-height: 1.55;
  color: #1d1d1f;
  background: #fff;
  max-width: 50em;
  margin: 0 auto;
  padding: 2.5em 1.5em 4em;
  hyphens: auto;
  overflow-wrap: break-word;
  text-rendering: optimizeLegibility;
}
h1, h2, h3, h4, h5, h6 { line-height: 1.25; margin: 1.6em 0 0.6em; font-weight: 600; }
h1 { font-size: 1.6em; }
h2 { font-size: 1.3em; }
h3 { font-size: 1.1em; }
p { margin: 0.8em 0; }
a { color: #1a5fb4; text-decoration: none; }
a:hover { text-decoration: underline; }
header#title-block-header { margin-bottom: 2.5em; text-align: center; }
header#title-block-header h1.title { font-size: 2em; margin: 0 0 0.3em; }
header#title-block-header .subtitle { font-size: 1.25em; margin: 0 0 0.8em; color: #444; }
header#title-block-header .author, header#title-block-header .date { margin: 0.2em 0; color: #444; }
header#title-block-header .abstract { text-align: left; margin: 1.8em 2em 0; font-size: 0.95em; }
header#title-block-header .abstract-title { font-weight: 600; text-align: center; margin-bottom: 0.3em; }
nav#TOC { border: 1px solid #ddd; background: #fafafa; padding: 0.6em 1.2em; margin: 0 0 2em; font-size: 0.95em; }
nav#TOC h2 { font-size: 1em; margin: 0.3em 0; }
nav#TOC ul { list-style: none; padding-left: 1.2em; margin: 0.2em 0; }
nav#TOC > ul { padding-left: 0; }
.header-section-number { margin-right: 0.4em; }
figure { margin: 1.8em 0; text-align: center; }
figure img, figure svg { max-width: 100%; height: auto; }
img { max-width: 100%; height: auto; }
figcaption, table caption {
  font-size: 0.92em;
  color: #333;
  text-align: left;
  margin: 0.6em auto 0;
  max-width: 42em;
}
table caption { caption-side: top; margin-bottom: 0.5em; }
table { border-collapse: collapse; margin: 1.5em auto; font-size: 0.92em; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid #bbb; padding: 0.3em 0.7em; }
thead th { background: #f0f0f0; border-bottom: 2px solid #888; }
tbody tr:nth-child(even) { background: #fafafa; }
code { font-family: "JetBrains Mono", Menlo, Consolas, monospace; font-size: 0.88em; }
pre { background: #f6f6f6; border: 1px solid #e2e2e2; padding: 0.8em 1em; overflow-x: auto; line-height: 1.35; }
blockquote { margin: 1em 0; padding-left: 1em; border-left: 3px solid #ccc; color: #444; }
.callout { margin: 1.4em 0; border: 1px solid #ddd; border-left: 5px solid #1a5fb4; border-radius: 4px; background: #f7f9fc; }
.callout-header { font-weight: 600; padding: 0.45em 1em; border-bottom: 1px solid #e4e8ef; font-family: sans-serif; font-size: 0.92em; }
.callout-body { padding: 0.1em 1em; }
.callout-note { border-left-color: #0d6efd; background: #f3f7fe; }
.callout-warning { border-left-color: #e0a800; background: #fffaeb; }
.quarto-xref { white-space: nowrap; }
@media print {
  body { max-width: none; padding: 0; font-size: 11pt; }
  nav#TOC { display: none; }
  a { color: inherit; }
}
"""
