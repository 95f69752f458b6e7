"""slotted.made_by_field: objects a field at a time equal those ``__init__`` makes."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from kassign.assignor.slotted import made_by_field


@dataclass(frozen=True, slots=True)
class _Row:
    name: str
    size: int
    tags: tuple[str, ...] = ()
    where: str = field(default="here", compare=False)


def test_objects_made_by_field_equal_those_made_one_by_one() -> None:
    columns = {"name": ["a", "b"], "size": [1, 2], "tags": [(), ("x",)], "where": ["p", "q"]}
    made = made_by_field(_Row, columns, 2)
    assert made == [_Row("a", 1, (), "p"), _Row("b", 2, ("x",), "q")]
    assert [r.where for r in made] == ["p", "q"]  # not compared, still set
    with pytest.raises(AttributeError):
        made[0].name = "c"  # type: ignore[misc]  # still frozen


def test_every_field_and_a_full_column_is_needed() -> None:
    with pytest.raises(TypeError):
        made_by_field(_Row, {"name": ["a"], "size": [1], "tags": [()]}, 1)
    with pytest.raises(ValueError):
        made_by_field(_Row, {"name": ["a"], "size": [1], "tags": [()], "where": []}, 1)
