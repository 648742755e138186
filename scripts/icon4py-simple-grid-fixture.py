#!/usr/bin/env python3
"""Writes fixtures/icon4py/simple_grid.json: the neighbour tables, sizes and
settings of ICON4Py's simple grid (`icon4py.model.common.grid.simple`, the
installed icon4py-common), read through its own `simple_grid()`, so that
python/tests/test_torus.py compares sdfgc's torus at 3x3 with it without
ICON4Py installed (CI's test venv has only NumPy). Run once, in a venv with
ICON4Py (../shared/icon4py/README.md):

    build/venv-icon4py/bin/python scripts/icon4py-simple-grid-fixture.py [--check]

`--check`: compare with the fixture on disk instead of writing it (exit 1 if
they differ).
"""

import json
import sys
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "fixtures" / "icon4py" / "simple_grid.json"


def extract():
    from icon4py.model.common import dimension as dims
    from icon4py.model.common.grid import horizontal as h_grid, simple

    grid = simple.simple_grid()
    tables = {}
    for name, conn in sorted(grid.connectivities.items()):
        arr = getattr(conn, "ndarray", None)
        if arr is None:  # not a neighbour table
            continue
        tables[name] = arr.tolist()
    bounds = {}
    for dim in (dims.CellDim, dims.EdgeDim, dims.VertexDim):
        for zone in h_grid.Zone:
            try:
                domain = h_grid.domain(dim)(zone)
            except Exception:  # a zone the dimension does not have
                continue
            bounds[f"{dim.value}:{zone.name}"] = [int(grid.start_index(domain)), int(grid.end_index(domain))]
    return {
        "source": f"icon4py-common {metadata.version('icon4py-common')}: "
                  "icon4py.model.common.grid.simple.simple_grid()",
        "sizes": {"vertex": grid.num_vertices, "edge": grid.num_edges, "cell": grid.num_cells},
        "limited_area": bool(grid.limited_area),
        "id": grid.id,
        "bounds": bounds,
        "tables": tables,
    }


def main():
    data = extract()
    text = json.dumps(data, indent=None, separators=(",", ":"), sort_keys=True) + "\n"
    if "--check" in sys.argv[1:]:
        same = OUT.exists() and json.loads(OUT.read_text()) == json.loads(text)
        print(f"{OUT}: {'up to date' if same else 'differs'}")
        sys.exit(0 if same else 1)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(text)
    print(f"wrote {OUT}: {len(data['tables'])} tables, {len(data['bounds'])} bounds")


if __name__ == "__main__":
    main()
