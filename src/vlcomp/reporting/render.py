"""Writing report artifacts: tables as Markdown, CSV and LaTeX; figures as byte-stable PNG and PDF."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

PNG_META = {"Software": None}
PDF_META = {"CreationDate": None, "Producer": None, "Creator": None}


def save_table(df: pd.DataFrame, out_dir: str | Path, name: str) -> pd.DataFrame:
    out = Path(out_dir) / "tables"
    out.mkdir(parents=True, exist_ok=True)
    df.to_csv(out / f"{name}.csv", index=False)
    (out / f"{name}.md").write_text(df.to_markdown(index=False) + "\n")
    (out / f"{name}.tex").write_text(df.to_latex(index=False, escape=True, na_rep="--"))
    return df


def save_figure(fig: plt.Figure, out_dir: str | Path, name: str) -> Path:
    out = Path(out_dir) / "figures"
    out.mkdir(parents=True, exist_ok=True)
    fig.savefig(out / f"{name}.png", dpi=130, bbox_inches="tight", metadata=PNG_META)
    fig.savefig(out / f"{name}.pdf", bbox_inches="tight", metadata=PDF_META)
    plt.close(fig)
    return out / f"{name}.png"


def fmt(mean: float, std: float | None = None, digits: int = 3) -> str:
    if mean != mean:  # NaN
        return "--"
    if std is None or std != std or std == 0:
        return f"{mean:.{digits}f}"
    return f"{mean:.{digits}f} ± {std:.{digits}f}"
