"""Write or print the pipeline's stage dependencies (vlcomp.dag).

Usage: python scripts/stage_deps.py [STAGE ...]   # print the code deps each root dvc.yaml stage should declare
       python scripts/stage_deps.py --write       # rewrite the root dvc.yaml's code deps and every generated
                                                  # pipelines/<paper>[/<method>]/dvc.yaml (after moving code, adding
                                                  # a method or a paper, or switching profile)
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(REPO / "src"))
    from vlcomp import dag
    from vlcomp.config import profile_params

    if argv == ["--write"]:
        for path in dag.write_all(REPO):
            print(f"written: {path}")
        print("check with `git diff` and `dvc status`")
        return 0
    wanted = dag.suggestions({p: profile_params(p, REPO) for p in dag.PROFILES})
    for name, deps in wanted.items():
        if not argv or name in argv:
            print(f"{name}:", *(f"  - {d}" for d in deps), sep="\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
