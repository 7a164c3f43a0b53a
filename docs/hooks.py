"""mkdocs hooks: pages that show bench/results' tables get them from bench/table.py at build
time, so the site never shows a stale figure."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MARKERS = {"<!-- bench.table: latest -->": "full_table", "<!-- bench.table: headline -->": "headline_table"}


def on_page_markdown(markdown: str, page, config, files) -> str:
    if not any(marker in markdown for marker in MARKERS):
        return markdown
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from bench import table

    for marker, function in MARKERS.items():
        markdown = markdown.replace(marker, getattr(table, function)())
    return markdown
