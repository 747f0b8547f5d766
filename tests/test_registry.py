"""Registry: registration, duplicate and unknown names, listing."""

from __future__ import annotations

import pytest

from vlcomp.registry import Registry


def test_register_add_get_and_list() -> None:
    reg: Registry = Registry("loss")

    @reg.register("zeta")
    def zeta() -> str:
        return "z"

    reg.add("alpha", 1)
    assert reg.get("zeta") is zeta and zeta() == "z"  # the decorator returns the object unchanged
    assert reg.get("alpha") == 1
    assert reg.names() == ["alpha", "zeta"]
    assert list(reg) == ["alpha", "zeta"]
    assert len(reg) == 2
    assert "alpha" in reg and "beta" not in reg


def test_duplicate_registration_is_an_error() -> None:
    reg: Registry = Registry("benchmark")
    reg.add("vg_relation", 1)
    with pytest.raises(ValueError, match="benchmark 'vg_relation' is registered twice"):
        reg.add("vg_relation", 2)
    with pytest.raises(ValueError, match="registered twice"):
        reg.register("vg_relation")(3)
    assert reg.get("vg_relation") == 1  # the first registration survives


def test_unknown_name_lists_the_known_names() -> None:
    reg: Registry = Registry("architecture")
    for name in ("toy-vit-p8", "toy-rn16"):
        reg.add(name, name)
    with pytest.raises(ValueError, match=r"unknown architecture 'rn50'; known: toy-rn16, toy-vit-p8$"):
        reg.get("rn50")


def test_unknown_name_in_an_empty_registry() -> None:
    with pytest.raises(ValueError, match=r"unknown loss 'clip'; known: \(none\)"):
        Registry("loss").get("clip")


def test_plugin_modules_rule() -> None:
    from vlcomp.registry import plugin_modules

    assert plugin_modules("tsvlc_analogy") == ["tsvlc_analogy", "tsvlc"]
    assert plugin_modules("clip") == ["clip"]
    assert plugin_modules("a_b_c") == ["a_b_c", "a_b", "a"]
    assert plugin_modules("toy-rn16") == []


def test_a_plugin_registry_imports_a_module_only_when_its_name_is_asked_for(tmp_path, monkeypatch) -> None:
    import sys

    pkg = tmp_path / "plugpkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from vlcomp.registry import Registry\nREG = Registry('thing', package=__name__)\n")
    (pkg / "alpha.py").write_text("from . import REG\nREG.add('alpha', 1)\nREG.add('alpha_two', 2)\n")
    (pkg / "beta.py").write_text("from . import REG\nREG.add('beta', 3)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    for m in [m for m in sys.modules if m.startswith("plugpkg")]:
        monkeypatch.delitem(sys.modules, m)
    import plugpkg

    assert "plugpkg.alpha" not in sys.modules and "plugpkg.beta" not in sys.modules
    assert plugpkg.REG.get("alpha_two") == 2  # found in module alpha by the prefix rule
    assert "plugpkg.alpha" in sys.modules and "plugpkg.beta" not in sys.modules
    assert "beta" in plugpkg.REG and "plugpkg.beta" in sys.modules
    assert "gamma" not in plugpkg.REG
    with pytest.raises(ValueError, match=r"unknown thing 'gamma'; known: alpha, alpha_two, beta$"):
        plugpkg.REG.get("gamma")
    assert plugpkg.REG.names() == ["alpha", "alpha_two", "beta"] and len(plugpkg.REG) == 3


def test_the_library_registries_load_their_plugins_by_name() -> None:
    """Importing a plugin package imports none of its plugins (in a fresh interpreter)."""
    import subprocess
    import sys

    code = ("import sys, vlcomp.losses, vlcomp.generators, vlcomp.reporting.papers\n"
            "print(sorted(m for m in sys.modules if m.split('.')[:2] in (['vlcomp','losses'], ['vlcomp','generators'])"
            " or m.startswith('vlcomp.reporting.papers.')))\n"
            "from vlcomp.losses import LOSSES\nLOSSES.get('negclip')\n"
            "print(sorted(m for m in sys.modules if m.startswith('vlcomp.losses.')))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.splitlines()
    assert out[0] == "['vlcomp.generators', 'vlcomp.losses']"
    assert out[1] == "['vlcomp.losses.clip', 'vlcomp.losses.negclip']"  # negclip's own import of the CLIP loss
