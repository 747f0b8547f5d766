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
