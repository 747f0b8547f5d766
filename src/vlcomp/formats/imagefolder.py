"""Zero-shot classification suites as image folders (CLIP_benchmark's custom-dataset layout).

A suite is one folder::

    <root>/classnames.json         {"<task>": ["class name 0", "class name 1", ...], ...}
    <root>/templates.json          {"<prompt set>": ["a photo of a {c}.", ...], ...}   (CLIP_benchmark's ``{c}``)
    <root>/<task>/<label>/<file>   images of class ``label`` (a zero-padded class index, torchvision ImageFolder)
    <root>/class_groups.json       optional: {"<task>": {"<group>": [class index, ...], ...}, ...}; every class of a
                                   listed task in exactly one group (the toy twins: classes naming a concept only
                                   the web split shows, ``web_only``, and the rest, ``coco``)

Label folders are the class *indices* (``000``, ``001``, ...), so the label order is the ``classnames.json`` order
whatever the class names are (torchvision's ImageFolder sorts folder names). A real dataset (CIFAR, ImageNet, ...)
exported this way, with its class names and prompt templates, runs through the same benchmark record as the toy
twins. Errors name the file (and the task or class).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..io import write_json
from .records import RecordError, read_json_strict

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg")


@dataclass(frozen=True)
class ClassificationSplit:
    task: str
    classnames: list[str]
    files: list[Path]  # absolute image paths
    labels: list[int]
    class_groups: list[str] | None = None  # group of each class (class_groups.json), None when the suite has none


def label_folder(label: int) -> str:
    return f"{label:03d}"


def _strings(value: object, what: str, path: Path) -> list[str]:
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v.strip() for v in value):
        raise RecordError(f"{path}: {what} must be a non-empty list of non-empty strings")
    return list(value)


def read_templates(root: str | Path) -> dict[str, list[str]]:
    """``templates.json``: prompt set -> templates, each with one ``{c}``."""
    path = Path(root) / "templates.json"
    data = read_json_strict(path)
    if not isinstance(data, dict) or not data:
        raise RecordError(f"{path}: expected an object prompt set -> list of templates")
    out = {}
    for name, ts in data.items():
        ts = _strings(ts, f"prompt set {name!r}", path)
        bad = [t for t in ts if t.count("{c}") != 1]
        if bad:
            raise RecordError(f"{path}: prompt set {name!r}: template {bad[0]!r} must contain '{{c}}' exactly once")
        out[name] = ts
    return out


def read_suite(root: str | Path, tasks: Sequence[str] | None = None) -> dict[str, ClassificationSplit]:
    """Every task of ``classnames.json`` (or ``tasks``), with its image files and labels, checked: each label
    folder is a class index of the task, each class has at least one image."""
    root = Path(root)
    path = root / "classnames.json"
    data = read_json_strict(path)
    if not isinstance(data, dict) or not data:
        raise RecordError(f"{path}: expected an object task -> list of class names")
    names = list(tasks) if tasks is not None else list(data)
    groups = _class_groups(root, data)
    out = {}
    for task in names:
        if task not in data:
            raise RecordError(f"{path}: no task {task!r} (has: {', '.join(data)})")
        classes = _strings(data[task], f"task {task!r}", path)
        if len(set(classes)) != len(classes):
            raise RecordError(f"{path}: task {task!r} repeats a class name")
        folder = root / task
        if not folder.is_dir():
            raise FileNotFoundError(f"{folder}: image folder of task {task!r} not found")
        files, labels = [], []
        for sub in sorted(p for p in folder.iterdir() if p.is_dir()):
            if not sub.name.isdigit() or int(sub.name) >= len(classes):
                raise RecordError(f"{sub}: label folder must be a class index in 0..{len(classes) - 1}")
            imgs = sorted(p for p in sub.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
            files += imgs
            labels += [int(sub.name)] * len(imgs)
        missing = sorted(set(range(len(classes))) - set(labels))
        if missing:
            raise RecordError(f"{folder}: class {missing[0]} ({classes[missing[0]]!r}) has no image")
        out[task] = ClassificationSplit(task, classes, files, labels, groups.get(task) if groups else None)
    return out


def _class_groups(root: Path, classnames: Mapping[str, Sequence[str]]) -> dict[str, list[str]]:
    """``class_groups.json`` (when present) as task -> group of each class, checked against the class lists."""
    path = root / "class_groups.json"
    if not path.exists():
        return {}
    data = read_json_strict(path)
    if not isinstance(data, dict):
        raise RecordError(f"{path}: expected an object task -> {{group: [class index, ...]}}")
    out = {}
    for task, groups in data.items():
        if task not in classnames:
            raise RecordError(f"{path}: task {task!r} is not in classnames.json")
        n = len(classnames[task])
        of: list[str | None] = [None] * n
        if not isinstance(groups, dict) or not groups:
            raise RecordError(f"{path}: task {task!r}: expected an object group -> [class index, ...]")
        for group, idx in groups.items():
            if not isinstance(idx, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in idx):
                raise RecordError(f"{path}: task {task!r} group {group!r}: expected a list of class indices")
            for i in idx:
                if not 0 <= i < n:
                    raise RecordError(f"{path}: task {task!r} group {group!r}: class {i} not in 0..{n - 1}")
                if of[i] is not None:
                    raise RecordError(f"{path}: task {task!r}: class {i} is in groups {of[i]!r} and {group!r}")
                of[i] = group
        if None in of:
            raise RecordError(f"{path}: task {task!r}: class {of.index(None)} ({classnames[task][of.index(None)]!r}) "
                              "is in no group")
        out[task] = of
    return out


def write_suite(root: str | Path, classnames: Mapping[str, Sequence[str]],
                templates: Mapping[str, Sequence[str]],
                class_groups: Mapping[str, Mapping[str, Sequence[int]]] | None = None) -> Path:
    """Write ``classnames.json``, ``templates.json`` and, when given, ``class_groups.json`` (images go to
    ``root/<task>/<label_folder(label)>/``)."""
    root = Path(root)
    write_json(root / "classnames.json", {t: list(c) for t, c in classnames.items()})
    write_json(root / "templates.json", {n: list(ts) for n, ts in templates.items()})
    if class_groups:
        write_json(root / "class_groups.json", {t: {g: list(i) for g, i in gs.items()} for t, gs in class_groups.items()})
    return root
