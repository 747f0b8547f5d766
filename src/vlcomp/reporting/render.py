"""Writing report artifacts: tables as CSV (numbers), Markdown, LaTeX and HTML (for reading), each with the legend
line under it; figures as byte-stable PNG and PDF; the formats of a reproduced and of a printed number.

A :class:`Table` keeps its numbers (``data``: what the CSV holds, one number per cell, NaN as an empty cell) apart
from the text a reader sees (``shown``: ``0.515 ± 0.008`` cells), with its ``legend`` (what ``±`` is over, n;
:func:`vlcomp.reporting.collect.spread_legend`) and ``notes`` (e.g. the paper's own inconsistencies about it).
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

PNG_META = {"Software": None}
PDF_META = {"CreationDate": None, "Producer": None, "Creator": None}
DIGITS = 3
EMPTY = ""  # what an empty (NaN) cell shows: nothing, never "nan"


def _missing(v: object) -> bool:
    """None, NaN or pandas' NA."""
    return v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v))


def number(v: float | None, digits: int = DIGITS, signed: bool = False) -> str:
    """A number with ``digits`` decimals (``+`` for ``signed``); an empty string for None or NaN."""
    if _missing(v):
        return EMPTY
    return f"{v:+.{digits}f}" if signed else f"{v:.{digits}f}"


def cell(mean: float, spread: float = math.nan, n: float = math.nan, digits: int = DIGITS) -> str:
    """A reproduced cell: ``mean ± spread`` over n >= 2 runs; ``mean (n=1)`` for a single run; ``mean`` when n is
    not given (a value that is no statistic over runs); empty for NaN."""
    if _missing(mean):
        return EMPTY
    if not _missing(n) and n == 1:
        return f"{mean:.{digits}f} (n=1)"
    if _missing(spread):
        return f"{mean:.{digits}f}"
    return f"{mean:.{digits}f} ± {spread:.{digits}f}"


def printed(value: float | None, std: float | None = None) -> str:
    """A paper's printed number as printed (``0.59``, ``0.595 ± 0.006``); empty when the paper prints none."""
    if _missing(value):
        return EMPTY
    return f"{value:.3f} ± {std:.3f}" if not _missing(std) else f"{value:g}"


@dataclass
class Table:
    """A report table: numbers for the CSV, text for reading, and the lines under it."""

    data: pd.DataFrame
    shown: pd.DataFrame | None = None
    legend: str = ""
    notes: Sequence[str] = ()

    @property
    def view(self) -> pd.DataFrame:
        return self.data if self.shown is None else self.shown


@dataclass
class Figure:
    """A report figure: the Matplotlib figure (saved by :func:`save_figure`) and the lines under it."""

    figure: plt.Figure
    legend: str = ""
    notes: Sequence[str] = ()


def _text_frame(df: pd.DataFrame) -> pd.DataFrame:
    """Every cell as text: whole numbers as integers, other numbers to 4 significant digits, NaN empty (text cells,
    such as formatted ``mean ± spread``, as they are)."""
    def fmt(v: object) -> str:
        if _missing(v):
            return EMPTY
        if isinstance(v, bool | str):
            return str(v)
        if isinstance(v, int) or (isinstance(v, float) and v.is_integer()):
            return str(int(v))
        if isinstance(v, float):
            return f"{v:.4g}"
        return str(v)

    return pd.DataFrame({c: [fmt(v) for v in df[c]] for c in df.columns}, columns=df.columns)


def save_table(table: Table | pd.DataFrame, out_dir: str | Path, name: str) -> Table:
    """``<out_dir>/tables/<name>.csv`` (``data``, full precision, NaN empty), ``.md`` and ``.tex`` (``shown``, with
    the legend and notes under it); returns the :class:`Table`."""
    table = table if isinstance(table, Table) else Table(table)
    out = Path(out_dir) / "tables"
    out.mkdir(parents=True, exist_ok=True)
    table.data.to_csv(out / f"{name}.csv", index=False)
    shown = _text_frame(table.view)
    below = [line for line in (table.legend, *table.notes) if line]
    md = shown.to_markdown(index=False, disable_numparse=True) if len(shown) else "*(no rows)*"
    (out / f"{name}.md").write_text(md + "".join(f"\n\n{line}" for line in below) + "\n")
    tex = shown.to_latex(index=False, escape=True) if len(shown) else ""
    (out / f"{name}.tex").write_text(tex + "".join(f"% {line}\n" for line in below))
    return table


_CODE = re.compile(r"`([^`]+)`")
_LINK = re.compile(r"\[([^\]]+)\]\((#[A-Za-z0-9_-]+)\)")  # a link to an anchor of the same page
_EMPH = re.compile(r"\*([^*]+)\*")
_BOLD = re.compile(r"\*\*([^*]+)\*\*")


def inline_html(text: str) -> str:
    """One line of the Markdown the legends use (backticks, ``**bold**``, ``*emphasis*``) as escaped HTML."""
    out = html.escape(text, quote=False)
    out = _CODE.sub(r"<code>\1</code>", out)
    out = _BOLD.sub(r"<strong>\1</strong>", out)
    return _EMPH.sub(r"<em>\1</em>", out)


TABLE_STYLE = "table-layout:auto;font-size:12px;margin:0"
LEGEND_STYLE = "font-size:12px;color:#333;margin:0.3em 0 1.2em 0"


_KEEP_TOGETHER = ((" ± ", "\u00a0±\u00a0"), (" (n=", "\u00a0(n="))


def table_html(table: Table) -> str:
    """The table for the HTML report: in a horizontally scrolling box (a wide table scrolls, it is never cut off or
    squeezed: a ``mean ± spread (n=1)`` cell does not break), its cells as :func:`_text_frame` shows them (backticks
    as code), the legend and notes under it."""
    shown = _text_frame(table.view)
    for old, new in _KEEP_TOGETHER:
        shown = shown.apply(lambda col, o=old, n=new: col.str.replace(o, n, regex=False))
    body = shown.to_html(index=False, escape=True, border=0) if len(shown) else "<p><em>(no rows)</em></p>"
    body = body.replace('<table class="dataframe">', f'<table class="dataframe" style="{TABLE_STYLE}">', 1)
    body = _LINK.sub(r'<a href="\2">\1</a>', _CODE.sub(r"<code>\1</code>", body))
    below = "".join(f'<p style="{LEGEND_STYLE}">{inline_html(line)}</p>' for line in (table.legend, *table.notes)
                    if line)
    return f'<div style="overflow-x:auto;max-width:100%">{body}</div>{below}'


def show(out_dir: str | Path, name: str, table: Table) -> str:
    """Save ``table`` as ``tables/<name>.{csv,md,tex}`` and return its HTML (legend and notes under it): what every
    report notebook displays a table with."""
    return table_html(save_table(table, out_dir, name))


def figure_html(png: str | Path, legend: str = "", notes: Sequence[str] = ()) -> str:
    """A saved figure for the HTML report, embedded (the report opens offline), with its legend lines."""
    import base64

    data = base64.b64encode(Path(png).read_bytes()).decode()
    below = "".join(f'<p style="{LEGEND_STYLE}">{inline_html(line)}</p>' for line in (legend, *notes) if line)
    return f'<img style="max-width:100%" alt="{html.escape(Path(png).stem)}" src="data:image/png;base64,{data}"/>{below}'


def save_figure(fig: plt.Figure, out_dir: str | Path, name: str) -> Path:
    out = Path(out_dir) / "figures"
    out.mkdir(parents=True, exist_ok=True)
    fig.savefig(out / f"{name}.png", dpi=130, bbox_inches="tight", metadata=PNG_META)
    fig.savefig(out / f"{name}.pdf", bbox_inches="tight", metadata=PDF_META)
    plt.close(fig)
    return out / f"{name}.png"
