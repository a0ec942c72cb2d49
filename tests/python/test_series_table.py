"""The engine's series tables (libebssim/include/ebssim/series_table.hpp, bound as
``_core.VOLUME_SERIES_TABLE`` and ``_core.INSTANCE_SERIES_TABLE``) are the only list of the
per-step series: the bound classes, the stub, the results' properties and DataFrame columns and
docs/model.md are checked against them here."""

from __future__ import annotations

import ast
import pathlib

import ebssim
import pytest
from ebssim import ClosedLoop, Recording, Simulation, _core, gp2, gp3, recording
from ebssim.results import _MS_COLUMNS

ROOT = pathlib.Path(__file__).resolve().parents[2]
AGGREGATIONS = ("rate", "latency", "level", "majority", "max", "min")
EXTREMES = ("max", "min")
TABLES = {
    "volume": (_core.VOLUME_SERIES_TABLE, ebssim.VolumeSeries, ebssim.VolumeResult),
    "instance": (_core.INSTANCE_SERIES_TABLE, ebssim.InstanceSeries, ebssim.InstanceResult),
}


def names(table) -> tuple[str, ...]:
    return tuple(row[0] for row in table)


@pytest.mark.parametrize("kind", TABLES)
def test_rows_are_well_formed(kind):
    table = TABLES[kind][0]
    assert all(len(row) == 4 and all(isinstance(x, str) and x for x in row) for row in table)
    assert len(set(names(table))) == len(table)
    assert all(agg in AGGREGATIONS for _, agg, _, _ in table)
    assert [agg for _, agg, _, _ in table].count("majority") == 1
    for name, agg, source, _ in table:
        # An extreme is of a series before it that is not the bound; any other row is its own source.
        assert source == name if agg not in EXTREMES else source in names(table)[: names(table).index(name)]
    # The extremes come last, so that adding one keeps the bits (Recording's masks) of the others.
    kinds = [agg in EXTREMES for _, agg, _, _ in table]
    assert kinds == sorted(kinds)


def test_names_and_default_recording_come_from_the_tables():
    assert ebssim.VOLUME_SERIES == recording.VOLUME_SERIES == names(_core.VOLUME_SERIES_TABLE)
    assert ebssim.INSTANCE_SERIES == recording.INSTANCE_SERIES == names(_core.INSTANCE_SERIES_TABLE)
    for table, default in (
        (_core.VOLUME_SERIES_TABLE, recording.DEFAULT_VOLUME_SERIES),
        (_core.INSTANCE_SERIES_TABLE, recording.DEFAULT_INSTANCE_SERIES),
    ):
        assert default == tuple(name for name, agg, _, _ in table if agg not in EXTREMES)


@pytest.mark.parametrize("kind", TABLES)
def test_bound_series_properties_are_the_rows(kind):
    table, cls, _ = TABLES[kind]
    props = {name: attr for name, attr in vars(cls).items() if isinstance(attr, property)}
    assert tuple(props) == names(table)
    for name, _, _, doc in table:
        assert props[name].__doc__ == doc


def _stub_properties(cls_name: str) -> tuple[str, ...]:
    tree = ast.parse((ROOT / "bindings/python/ebssim/_core.pyi").read_text())
    (cls,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls_name]
    props = [f for f in cls.body if isinstance(f, ast.FunctionDef)]
    return tuple(f.name for f in props if any(isinstance(d, ast.Name) and d.id == "property" for d in f.decorator_list))


@pytest.mark.parametrize("kind", TABLES)
def test_stub_declares_the_rows(kind):
    table, cls, _ = TABLES[kind]
    assert _stub_properties(cls.__name__) == names(table)


@pytest.mark.parametrize("kind", TABLES)
def test_results_have_a_property_per_row(kind):
    _, _, result = TABLES[kind]
    missing = [name for name in names(TABLES[kind][0]) if not isinstance(getattr(result, name, None), property)]
    assert missing == []


def _column(name: str) -> str:
    return _MS_COLUMNS.get(name, name)


def test_to_pandas_has_a_column_per_recorded_row():
    pytest.importorskip("pandas")
    r = ebssim.simulate(gp2(100), ClosedLoop(32, "4k"), duration_s=20, record=Recording(series=ebssim.VOLUME_SERIES))
    cols = set(r.to_pandas().columns)
    assert [n for n in ebssim.VOLUME_SERIES if _column(n) not in cols] == []
    # The default recording: the rows but the extremes.
    cols = set(ebssim.simulate(gp2(100), ClosedLoop(32, "4k"), duration_s=20).to_pandas().columns)
    assert {n for n in ebssim.VOLUME_SERIES if _column(n) in cols} == set(recording.DEFAULT_VOLUME_SERIES)

    sim = Simulation([gp3(100)], instance="m5.large")
    run = sim.run([ClosedLoop(8, "16k")], duration_s=20, record=Recording(instance_series=ebssim.INSTANCE_SERIES))
    assert run.instance is not None
    assert tuple(run.instance.to_pandas().columns) == ebssim.INSTANCE_SERIES


def _doc_rows(table) -> list[str]:
    return [
        f"| `{name}` | {f'{agg} of `{source}`' if agg in EXTREMES else agg} | {doc} |"
        for name, agg, source, doc in table
    ]


def test_model_md_lists_the_rows():
    lines = (ROOT / "docs/model.md").read_text().splitlines()
    head = "| series | aggregation | meaning |"
    tables = []
    for i, line in enumerate(lines):
        if line == head:
            rows = []
            for row in lines[i + 2 :]:
                if not row.startswith("|"):
                    break
                rows.append(row)
            tables.append(rows)
    assert tables == [_doc_rows(_core.VOLUME_SERIES_TABLE), _doc_rows(_core.INSTANCE_SERIES_TABLE)]
