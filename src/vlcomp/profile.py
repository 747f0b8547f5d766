"""``python -m vlcomp.profile [toy|paper]``: show or switch the active profile.

DVC reads ``params.yaml``; the profiles are complete params files in ``profiles/`` (``toy.yaml``, identical to
the repository's ``params.yaml``, and ``paper.yaml``). Switching copies one of them over ``params.yaml``, after
which plain ``dvc repro`` (or ``dvc exp run``, which records the changed params.yaml as an experiment) runs
that profile: same DAG, same stage scripts, which switch on ``profile``. The two profiles' variant sets differ,
so one params file per profile is simpler and safer than ``-S`` overrides of a dozen nested keys.

A ``params.yaml`` with edits of its own (equal to no profile file) is never overwritten silently: the switch
refuses, naming the file, unless ``--force``, which first keeps it as ``params.yaml.bak``.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from .config import PROFILES, load_params
from .io import atomic_path

PROFILE_DIR = "profiles"


def profile_file(name: str, root: str | Path = ".") -> Path:
    if name not in PROFILES:
        raise ValueError(f"profile {name!r}: must be one of {', '.join(PROFILES)}")
    path = Path(root) / PROFILE_DIR / f"{name}.yaml"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: profile file not found")
    return path


def active(root: str | Path = ".") -> str | None:
    """The profile whose file ``params.yaml`` is byte-identical to, or None (edited, or missing)."""
    params = Path(root) / "params.yaml"
    if not params.is_file():
        return None
    data = params.read_bytes()
    for name in PROFILES:
        path = Path(root) / PROFILE_DIR / f"{name}.yaml"
        if path.is_file() and path.read_bytes() == data:
            return name
    return None


def switch(name: str, root: str | Path = ".", *, force: bool = False) -> Path | None:
    """Make ``params.yaml`` the profile ``name``; returns the backup path when ``force`` kept an edited file."""
    src = profile_file(name, root)
    loaded = load_params(src)  # a broken profile file fails here, before params.yaml is touched
    if loaded.get("profile") != name:
        raise ValueError(f"{src}: says profile: {loaded.get('profile')!r}, expected {name!r}")
    params = Path(root) / "params.yaml"
    backup = None
    if params.is_file() and active(root) is None:
        if not force:
            raise ValueError(f"{params}: has edits that are in no profile file ({PROFILE_DIR}/*.yaml); copy them "
                             f"into the profile they belong to, or rerun with --force (keeps it as params.yaml.bak)")
        backup = params.with_name("params.yaml.bak")
        shutil.copy2(params, backup)
    with atomic_path(params) as tmp:
        shutil.copyfile(src, tmp)
        tmp.chmod(0o644)
    return backup


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("name", nargs="?", choices=PROFILES, help="the profile to switch to (omit to show the active one)")
    p.add_argument("--force", action="store_true", help="overwrite an edited params.yaml (kept as params.yaml.bak)")
    p.add_argument("--root", default=".", help="the repository root (default: .)")
    args = p.parse_args(argv)
    try:
        if args.name is None:
            now = active(args.root)
            declared = load_params(Path(args.root) / "params.yaml").get("profile", "toy")
            print(f"params.yaml: profile {declared}" + ("" if now else " (edited: equal to no profiles/*.yaml file)"))
            return 0
        backup = switch(args.name, args.root, force=args.force)
    except (ValueError, FileNotFoundError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if backup:
        print(f"kept the edited params.yaml as {backup}")
    print(f"params.yaml is now the {args.name} profile ({PROFILE_DIR}/{args.name}.yaml). Next: "
          f"python -m vlcomp.doctor, then dvc repro (or dvc exp run).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
