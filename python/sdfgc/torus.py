"""A periodic triangular torus of any size, numbered as ICON4Py's simple
grid (`icon4py.model.common.grid.simple`, which is this torus at 3x3), with
every neighbour table gt4py's ICON programs use.

    tables = torus.neighbor_tables(128, 80)       # NumPy int32 arrays by offset name
    grid = torus.icon4py_grid(128, 80, num_levels=80)   # an ICON4Py `base.Grid`

`N x M` rhombi: N columns, M rows (both at least 3), each rhombus split into
an upper and a lower triangle: `N*M` vertices, `3*N*M` edges, `2*N*M` cells.
`torus:128x80` is 10,240 vertices, 30,720 edges, 20,480 cells.

Numbering (the simple grid's, whose drawing has rows going down): vertex
`v = r*N + c` at row r, column c; its neighbours R (right, c+1), L (c-1),
D (down, r+1), U (r-1), DR (r+1, c+1), UL (r-1, c-1), all modulo the torus.
Vertex v owns three edges, `3v` (horizontal, v->R), `3v+1` (diagonal,
v->DR) and `3v+2` (vertical, v->D), and the rhombus whose upper-left corner it
is: the upper cell `up(v) = 2N*r + c` (v, R, DR) and the lower cell
`lo(v) = 2N*r + N + c` (v, D, DR).

Orientation and order of each row:
- E2V: an edge's two vertices in its direction (v first); E2C: the cell on
  its left, then the one on its right, as drawn (the simple grid's table
  swaps some rows: it lists the two cells by index except across the wrap);
  E2C2V: E2V, then the vertex opposite the edge in E2C[0], then in E2C[1];
- C2V: up(v) = [v, R, DR], lo(v) = [v, D, DR] (upper cells turn clockwise as
  drawn, lower ones counter-clockwise, as in the simple grid);
  C2E: up(v) = [3v, 3v+1, vert(R)], lo(v) = [3v+1, 3v+2, horiz(D)];
- C2E2C: the cells across C2E[0], C2E[2], C2E[1] (the simple grid's order);
  C2E2CO: C2E2C and the cell itself;
- E2C2E: the other two edges of E2C[0] (in C2E order), then of E2C[1];
  E2C2EO: C2E of E2C[0] (the edge itself among them), then E2C[1]'s others;
- V2E: [3v, 3v+1, 3v+2, horiz(L), diag(UL), vert(U)] (E, SE, S, W, NW, N:
  clockwise as drawn); V2C: cell i lies between V2E[i] and V2E[i+1]:
  [up(v), lo(v), up(L), lo(UL), up(UL), lo(U)];
- C2E2C2E: C2E of each C2E2C cell, in the order C2E2C[0], [2], [1];
- C2E2C2E2C: C2E2C, then for each C2E2C cell its C2E2C less the cell itself
  (9 distinct cells).

At 3x3 every table equals the simple grid's row by row as sets, except row 8
of C2E2C2E2C: the simple grid's row lists cell 3, which is not a neighbour
of any neighbour of cell 8 in its own C2E2C table, instead of cell 6 (and
its C2E2C2E2C is not symmetric there: 3's row does not list 8).
`python/tests/test_torus.py` checks this against the simple grid's tables
(`fixtures/icon4py/simple_grid.json`, written by
`scripts/icon4py-simple-grid-fixture.py`).

Start and end indices are the simple grid's: every domain starts at 0 and
ends at the dimension's size; a halo zone starts at the size (empty). No
limited area (`limited_area=False`), no skip values.
"""

import uuid

import numpy as np

OFFSETS = ("C2V", "E2C", "E2V", "C2E", "C2E2C", "C2E2CO", "E2C2E", "E2C2EO", "E2C2V",
           "V2C", "V2E", "C2E2C2E", "C2E2C2E2C")


def parse_shape(text):
    """'128x80' -> (128, 80)."""
    parts = text.lower().split("x")
    if len(parts) != 2 or not all(p.strip().isdigit() for p in parts):
        raise ValueError(f"torus size {text!r}: expected NxM (columns x rows of rhombi), e.g. 128x80")
    n, m = (int(p) for p in parts)
    if n < 3 or m < 3:
        raise ValueError(f"torus size {text!r}: both sides must be at least 3 (3x3 is ICON4Py's simple grid)")
    return n, m


def sizes(n, m):
    """{'vertex': N*M, 'edge': 3*N*M, 'cell': 2*N*M}."""
    return {"vertex": n * m, "edge": 3 * n * m, "cell": 2 * n * m}


def neighbor_tables(n, m):
    """Every neighbour table, by offset name (int32, one row per element)."""
    if n < 3 or m < 3:
        raise ValueError(f"torus {n}x{m}: both sides must be at least 3")
    r, c = np.divmod(np.arange(n * m, dtype=np.int64), n)

    def vert(dr, dc):  # the vertex at (r + dr, c + dc)
        return ((r + dr) % m) * n + (c + dc) % n

    def up(v):
        return 2 * n * (v // n) + v % n

    def lo(v):
        return up(v) + n

    v = vert(0, 0)
    R, L, D, U, DR, UL = vert(0, 1), vert(0, -1), vert(1, 0), vert(-1, 0), vert(1, 1), vert(-1, -1)

    def horiz(x):
        return 3 * x

    def diag(x):
        return 3 * x + 1

    def vertical(x):
        return 3 * x + 2

    nv, ne, nc = n * m, 3 * n * m, 2 * n * m
    t = {}

    def rows(width, *groups):
        """A table from per-vertex columns: one group is a vertex table, two
        give up(v)'s and lo(v)'s rows, three give the rows of 3v, 3v+1, 3v+2."""
        if len(groups) == 1:
            at = [v]
        elif len(groups) == 2:
            at = [up(v), lo(v)]
        else:
            at = [3 * v, 3 * v + 1, 3 * v + 2]
        out = np.empty((nv * len(groups), width), dtype=np.int64)
        for index, g in zip(at, groups):
            out[index] = np.stack(g, axis=1)
        return out

    t["V2E"] = rows(6, [horiz(v), diag(v), vertical(v), horiz(L), diag(UL), vertical(U)])
    t["V2C"] = rows(6, [up(v), lo(v), up(L), lo(UL), up(UL), lo(U)])
    t["C2V"] = rows(3, [v, R, DR], [v, D, DR])
    t["C2E"] = rows(3, [horiz(v), diag(v), vertical(R)], [diag(v), vertical(v), horiz(D)])
    t["E2V"] = rows(2, [v, R], [v, DR], [v, D])
    t["E2C"] = rows(2, [lo(U), up(v)], [up(v), lo(v)], [lo(v), up(L)])
    # the vertex opposite the edge in each of its two cells
    t["E2C2V"] = rows(4, [v, R, U, DR], [v, DR, R, D], [v, D, DR, L])
    # across C2E[0], C2E[2], C2E[1]
    t["C2E2C"] = rows(3, [lo(U), lo(R), lo(v)], [up(v), up(D), up(L)])

    t["C2E2CO"] = np.concatenate([t["C2E2C"], np.arange(nc)[:, None]], axis=1)
    c2e, e2c, c2e2c = t["C2E"], t["E2C"], t["C2E2C"]
    e = np.arange(ne)[:, None]
    first, second = c2e[e2c[:, 0]], c2e[e2c[:, 1]]
    t["E2C2E"] = np.concatenate([_without(first, e, 2), _without(second, e, 2)], axis=1)
    t["E2C2EO"] = np.concatenate([first, _without(second, e, 2)], axis=1)
    t["C2E2C2E"] = c2e[c2e2c[:, [0, 2, 1]]].reshape(nc, 9)  # across C2E[0], C2E[1], C2E[2]
    cells = np.arange(nc)[:, None]
    t["C2E2C2E2C"] = np.concatenate(
        [c2e2c] + [_without(c2e2c[c2e2c[:, k]], cells, 2) for k in range(3)], axis=1)
    return {k: np.ascontiguousarray(t[k], dtype=np.int32) for k in OFFSETS}


def _without(table, value, width):
    """Each row of `table` less `value[row]` (which it holds exactly once),
    in order: `width` entries a row."""
    keep = table != value
    if not np.all(keep.sum(axis=1) == width):
        raise AssertionError("a row does not hold its element exactly once")
    return table[keep].reshape(len(table), width)


def grid_id(n, m):
    """A fixed UUID per size (ICON grids carry one; the simple grid has a
    synthetic one too)."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"sdfgc:torus:{n}x{m}"))


def icon4py_grid(n, m, *, num_levels, allocator=None):
    """The torus as an ICON4Py `base.Grid`, built as `simple.simple_grid`
    builds the simple grid (ICON4Py's own classes; needs icon4py-common)."""
    import gt4py.next as gtx
    from icon4py.model.common import dimension as dims
    from icon4py.model.common.grid import base
    from icon4py.model.common.grid.vertical import VerticalGridConfig

    size = {dims.CellDim: 2 * n * m, dims.EdgeDim: 3 * n * m, dims.VertexDim: n * m}

    def start_index(domain):
        return gtx.int32(size[domain.dim]) if domain.zone.is_halo() else gtx.int32(0)

    def end_index(domain):
        return gtx.int32(size[domain.dim])

    config = base.GridConfig(
        horizontal_config=base.HorizontalGridSize(
            num_vertices=n * m, num_edges=3 * n * m, num_cells=2 * n * m),
        vertical_size=VerticalGridConfig(num_levels=num_levels).num_levels,
        limited_area=False,
    )
    on_gpu = False
    if allocator is not None:
        from icon4py.model.common.utils import device_utils
        on_gpu = device_utils.is_cupy_device(allocator)
    tables = neighbor_tables(n, m)
    if on_gpu:
        import cupy
        tables = {k: cupy.asarray(t) for k, t in tables.items()}
    connectivities = {
        getattr(dims, name).value: base.construct_connectivity(
            getattr(dims, name), table, skip_value=None, allocator=allocator)
        for name, table in tables.items()
    }
    return base.Grid(
        id=grid_id(n, m),
        config=config,
        connectivities=connectivities,
        start_index=start_index,
        end_index=end_index,
    )
