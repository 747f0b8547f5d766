"""Run a jupytext report template with papermill and render it to self-contained HTML with nbconvert."""

from __future__ import annotations

import re
from pathlib import Path

_REMOTE_SCRIPT = re.compile(r"<script[^>]*\bsrc=\"https?://[^\"]*\"[^>]*>\s*</script>", re.IGNORECASE)


def strip_remote_scripts(html: str) -> str:
    """Drop ``<script src="https://...">`` tags (MathJax, require.js from a CDN): the report is static tables and
    embedded images, and must open offline without trying the network."""
    return _REMOTE_SCRIPT.sub("", html)


def render_report(template: str | Path, out_dir: str | Path, parameters: dict) -> Path:
    """Execute ``template`` (a jupytext percent ``.py``) with ``parameters`` and write ``index.html``
    (no input cells; figures embedded, so it opens offline) plus the executed notebook into ``out_dir``."""
    import jupytext
    import nbformat
    import papermill as pm
    from nbconvert import HTMLExporter

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    nb = jupytext.read(template)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    src = out_dir / "template.ipynb"
    nbformat.write(nb, src)
    executed = out_dir / "executed.ipynb"
    pm.execute_notebook(str(src), str(executed), parameters=parameters, kernel_name="python3", cwd=str(Path.cwd()),
                        progress_bar=False)
    src.unlink()
    exporter = HTMLExporter(exclude_input=True)
    exporter.exclude_input_prompt = True
    exporter.exclude_output_prompt = True
    body, _ = exporter.from_notebook_node(nbformat.read(executed, as_version=4))
    (out_dir / "index.html").write_text(strip_remote_scripts(body))
    return out_dir / "index.html"
