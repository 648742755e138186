"""pytest plugin: ICON4Py's tests on a periodic triangular torus of any size
(`sdfgc.torus`), and any number of levels.

    python -m pytest -p sdfgc.icon4py_grid --grid=torus:128x80 --levels 80 ... stencil_tests

`--grid=torus:NxM` (N columns, M rows of rhombi, both at least 3; also
`torus:NxM:K`, ICON4Py's `name:levels` form): the torus in place of
ICON4Py's simple grid (which is `torus:3x3`, numbered the same way), with the
simple grid's start and end indices and no grid manager, so tests that need
a grid file's geometry skip as they do on the simple grid. `--levels K`: the
number of levels, on any grid (ICON4Py's default is 40). Other `--grid`
values go to ICON4Py unchanged.

ICON4Py's `grid` fixture (`icon4py.model.testing.fixtures.stencil_tests`,
which the test folders' conftests import) reads the option through that
module's `_evaluate_grid_option` and builds the simple grid through its
`simple_grid` module; both are replaced in that module at configure time, in
every process (pytest-xdist workers too). `-p sdfgc.icon4py_modes` loads
this plugin as well.
"""

import types

from . import torus

_grid = None  # (n, m) while a torus is selected


def parse_grid(spec):
    """`torus:NxM[:K]` -> (n, m, K or None); any other spec -> None."""
    if not spec or not spec.startswith("torus:"):
        return None
    parts = spec.split(":")
    if len(parts) > 3:
        raise ValueError(f"--grid={spec}: expected torus:NxM or torus:NxM:LEVELS")
    n, m = torus.parse_shape(parts[1])
    levels = int(parts[2]) if len(parts) == 3 and parts[2].strip() else None
    return n, m, levels


def pytest_addoption(parser):
    group = parser.getgroup("sdfgc")
    group.addoption("--levels", dest="sdfgc_levels", type=int, default=None,
                    help="number of vertical levels of the grid (any --grid; ICON4Py's default 40)")


def _options(config):
    spec = config.getoption("grid", default=None)
    try:
        parsed = parse_grid(spec)
    except ValueError as e:
        import pytest
        raise pytest.UsageError(str(e)) from None
    levels = config.getoption("sdfgc_levels", default=None)
    if parsed and parsed[2] is not None:
        if levels is not None and levels != parsed[2]:
            import pytest
            raise pytest.UsageError(f"--grid={spec} and --levels {levels} disagree")
        levels = parsed[2]
    if levels is not None and levels < 1:
        import pytest
        raise pytest.UsageError(f"--levels {levels}: at least 1")
    return parsed, levels


def pytest_configure(config):
    global _grid
    parsed, levels = _options(config)
    if parsed is None and levels is None:
        return
    from icon4py.model.testing.fixtures import stencil_tests as fixtures

    original = getattr(fixtures._evaluate_grid_option, "sdfgc_original", fixtures._evaluate_grid_option)

    def evaluate_grid_option(request):
        if parsed is not None:
            return "simple", levels or fixtures.DEFAULT_NUM_LEVELS
        name, num_levels = original(request)
        return name, levels or num_levels

    evaluate_grid_option.sdfgc_original = original
    fixtures._evaluate_grid_option = evaluate_grid_option
    if parsed is not None:
        _grid = parsed[:2]
        simple = getattr(fixtures.simple_grid, "sdfgc_original", fixtures.simple_grid)

        def torus_grid(*, allocator=None, num_levels):
            return torus.icon4py_grid(*_grid, num_levels=num_levels, allocator=allocator)

        # the `simple_grid` module the fixture calls, with the torus's factory
        fixtures.simple_grid = types.SimpleNamespace(simple_grid=torus_grid, sdfgc_original=simple)
    config._sdfgc_grid = (parsed, levels)


def pytest_report_header(config):
    parsed, levels = getattr(config, "_sdfgc_grid", (None, None))
    if parsed is None:
        return f"sdfgc.icon4py_grid: {levels} levels" if levels else None
    n, m, _ = parsed
    s = torus.sizes(n, m)
    return (f"sdfgc.icon4py_grid: torus {n}x{m} ({s['cell']} cells, {s['edge']} edges, "
            f"{s['vertex']} vertices), {levels or 'default'} levels")
