"""Run a paper's report template (``notebooks/<paper>.py``, jupytext percent format) with papermill for one profile,
and render it to self-contained HTML with nbconvert.

One template serves both profiles. Its ``parameters`` cell declares ``profile``; a cell tagged
``profile-<name>`` (:func:`profile_tag`: ``profile-toy``, ``profile-real``) belongs to that profile's sections
only and is dropped before the other profile's run; untagged cells run for both.
"""

from __future__ import annotations

import re
from pathlib import Path

_REMOTE_SCRIPT = re.compile(r"<script[^>]*\bsrc=\"https?://[^\"]*\"[^>]*>\s*</script>", re.IGNORECASE)
PROFILE_TAG_PREFIX = "profile-"


def report_template(paper: str, notebooks_dir: str | Path = "notebooks") -> Path:
    """The report template of ``paper``: ``<notebooks_dir>/<paper>.py``, the same file for every profile."""
    template = Path(notebooks_dir) / f"{paper}.py"
    if not template.exists():
        raise FileNotFoundError(f"{template}: no report template for paper {paper!r}")
    return template


def profile_tag(profile: str) -> str:
    """The cell tag of a profile's sections (``toy`` -> ``profile-toy``)."""
    return f"{PROFILE_TAG_PREFIX}{profile}"


def cell_profiles(cell) -> set[str]:
    """The profiles a notebook cell is tagged for (empty: the cell runs for every profile)."""
    return {t[len(PROFILE_TAG_PREFIX):] for t in cell.metadata.get("tags", []) if t.startswith(PROFILE_TAG_PREFIX)}


def select_profile(nb, profile: str, source: str | Path):
    """``nb`` without the cells tagged for other profiles only, and without the profile tags (the rendered report
    is the same as a template of that profile alone). Raises ValueError naming ``source`` when no cell is tagged
    for ``profile`` although some are tagged for others."""
    tagged = set().union(*(cell_profiles(c) for c in nb.cells))
    if tagged and profile not in tagged:
        raise ValueError(f"{source}: no cells tagged {profile_tag(profile)!r} (profiles: {', '.join(sorted(tagged))})")
    nb.cells = [c for c in nb.cells if not cell_profiles(c) or profile in cell_profiles(c)]
    for c in nb.cells:
        tags = [t for t in c.metadata.get("tags", []) if not t.startswith(PROFILE_TAG_PREFIX)]
        if tags:
            c.metadata["tags"] = tags
        else:
            c.metadata.pop("tags", None)
    return nb


def strip_remote_scripts(html: str) -> str:
    """Drop ``<script src="https://...">`` tags (MathJax, require.js from a CDN): the report is static tables and
    embedded images, and must open offline without trying the network."""
    return _REMOTE_SCRIPT.sub("", html)


def render_report(template: str | Path, out_dir: str | Path, parameters: dict, *,
                  final_dir: str | Path | None = None) -> Path:
    """Execute ``template`` (a jupytext percent ``.py``) for ``parameters["profile"]`` (:func:`select_profile`)
    with ``parameters`` and write ``index.html`` (no input cells; figures embedded, so it opens offline) plus the
    executed notebook into ``out_dir``. ``final_dir``: where ``out_dir`` (a temporary build folder) will end up;
    the executed notebook then names that folder, not the temporary one (:func:`deterministic`)."""
    import jupytext
    import nbformat
    import papermill as pm
    from nbconvert import HTMLExporter

    if "profile" not in parameters:
        raise ValueError(f"{template}: the parameters name no profile")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    nb = select_profile(jupytext.read(template), parameters["profile"], template)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    src = out_dir / "template.ipynb"
    nbformat.write(deterministic(nb), src)
    executed = out_dir / "executed.ipynb"
    pm.execute_notebook(str(src), str(executed), parameters=parameters, kernel_name="python3", cwd=str(Path.cwd()),
                        progress_bar=False)
    src.unlink()
    rename = {str(out_dir): str(final_dir)} if final_dir is not None else {}
    done = deterministic(nbformat.read(executed, as_version=4), rename)
    nbformat.write(done, executed)
    exporter = HTMLExporter(exclude_input=True)
    exporter.exclude_input_prompt = True
    exporter.exclude_output_prompt = True
    body, _ = exporter.from_notebook_node(done)
    (out_dir / "index.html").write_text(strip_remote_scripts(body))
    return out_dir / "index.html"


#: Per-run notebook metadata that would make a report differ between two runs of the same inputs: papermill's and
#: nbclient's timestamps and durations (the stage's wall time goes to MLflow and ``runs/<stage>.json`` instead).
TIMING_KEYS = ("start_time", "end_time", "duration")


def deterministic(nb, rename: dict[str, str] | None = None):
    """``nb`` with cell ids numbered in order (``cell-0``, ``cell-1``, ...: nbformat and papermill draw random ids,
    which end up in the HTML), the timing metadata removed (:data:`TIMING_KEYS`, and nbclient's per-cell
    ``execution`` timestamps) and every ``rename`` key (a temporary build folder) replaced by its value in the cell
    sources and papermill's metadata, so a report is a pure function of its inputs; modified in place and
    returned."""

    def renamed(value):
        if isinstance(value, str):
            for old, new in (rename or {}).items():
                value = value.replace(old, new)
            return value
        if isinstance(value, dict):
            return {k: renamed(v) for k, v in value.items()}
        if isinstance(value, list):
            return [renamed(v) for v in value]
        return value

    papermill = nb.metadata.get("papermill")
    if papermill is not None:
        for key in TIMING_KEYS:
            papermill.pop(key, None)
        nb.metadata["papermill"] = renamed(dict(papermill))
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{i}"
        cell["source"] = renamed(cell.source)
        cell.metadata.pop("execution", None)
        for key in TIMING_KEYS:
            cell.metadata.get("papermill", {}).pop(key, None)
    return nb
