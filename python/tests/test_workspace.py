"""sdfgc.Workspace: one buffer for several external-mode programs."""
import os

import pytest

import sdfgc
from conftest import CORPUS, case, run_case

import numpy as np  # noqa: E402


def external(name, cache):
    return sdfgc.build(os.path.join(CORPUS, name, "program.sdfg"), mode="external", build_dir=cache)


def test_one_workspace_grows_to_the_largest_program(cache):
    sizes = {n: sdfgc.plan(os.path.join(CORPUS, n, "program.sdfg"), symbols=case(n)[1]["symbols"])
             ["CPU_Heap"]["max_bytes"] for n in ("jacobi_2d", "heat_3d")}
    small, large = sorted(sizes, key=sizes.get)
    assert sizes[small] < sizes[large]
    ws = sdfgc.Workspace("CPU_Heap")
    run_case(external(small, cache), small, workspace=ws)
    assert ws.nbytes == sizes[small]
    run_case(external(large, cache), large, workspace=ws)
    assert ws.nbytes == sizes[large]  # grew for the larger program
    grown = ws.nbytes
    run_case(external(small, cache), small, workspace=ws)  # the small one fits in the grown buffer
    assert ws.nbytes == grown and ws.address % ws.alignment == 0


def test_plan_sizes_it_up_front(cache):
    sdfgs = [os.path.join(CORPUS, n, "program.sdfg") for n in ("jacobi_2d", "heat_3d")]
    # the largest N the application will call them with
    symbols = {"N": max(case(n)[1]["symbols"]["N"] for n in ("jacobi_2d", "heat_3d"))}
    calls = []

    def allocator(nbytes, alignment):
        calls.append(nbytes)
        return sdfgc._workspace.numpy_allocator(nbytes, alignment)

    ws = sdfgc.Workspace("CPU_Heap", allocator=allocator)
    planned = ws.plan(sdfgs, symbols=symbols)
    assert planned > 0 and ws.nbytes == planned
    run_case(external("heat_3d", cache), "heat_3d", workspace=ws)
    run_case(external("jacobi_2d", cache), "jacobi_2d", workspace=ws)
    assert calls == [planned]  # the plan was exact: no reallocation


def test_plan_without_symbol_values_names_the_formula():
    ws = sdfgc.Workspace("CPU_Heap")
    with pytest.raises(sdfgc.SdfgcError, match="symbols"):
        ws.plan([os.path.join(CORPUS, "heat_3d", "program.sdfg")])


def test_too_small_buffer_raises_with_the_librarys_message(cache):
    lib = external("heat_3d", cache)
    ws = sdfgc.Workspace("CPU_Heap", allocator=lambda n, a: sdfgc._workspace.numpy_allocator(n // 2, a))
    with pytest.raises(sdfgc.SdfgcError, match="too small"):
        run_case(lib, "heat_3d", workspace=ws)


def test_misaligned_buffer_raises_with_the_librarys_message(cache):
    lib = external("heat_3d", cache)

    def misaligned(n, a):
        return sdfgc._workspace.numpy_allocator(n + 8, a)[8:]

    ws = sdfgc.Workspace("CPU_Heap", allocator=misaligned)
    with pytest.raises(sdfgc.SdfgcError, match="align"):
        run_case(lib, "heat_3d", workspace=ws)


def test_a_library_without_a_workspace_is_refused_by_name(cache):
    lib = sdfgc.build(os.path.join(CORPUS, "heat_3d", "program.sdfg"), build_dir=cache)  # not external
    with pytest.raises(sdfgc.SdfgcError, match="external mode"):
        run_case(lib, "heat_3d", workspace=sdfgc.Workspace("CPU_Heap"))


def test_gpu_workspace_without_cupy_or_allocator_is_an_error():
    try:
        import cupy  # noqa: F401
        pytest.skip("cupy installed")
    except ImportError:
        pass
    with pytest.raises(sdfgc.SdfgcError, match="cupy"):
        sdfgc.Workspace("GPU_Global", nbytes=1024)


def test_follow_hands_every_growth_to_a_program_until_it_is_gone():
    # A library without sdfgc's checked setter (DaCe's own): its setter is a callback.
    ws = sdfgc.Workspace("CPU_Heap", nbytes=64)
    seen, alive = [], [True]
    ws.follow(lambda: alive[0], lambda w: seen.append((w.address, w.nbytes)))
    assert seen == [(ws.address, 64)]  # handed the buffer at once
    ws.reserve(4096)
    assert seen[-1] == (ws.address, 4096) and len(seen) == 2
    ws.reserve(1024)  # fits: no new buffer, nothing handed
    assert len(seen) == 2
    alive[0] = False
    ws.reserve(8192)
    assert len(seen) == 2  # gone: never handed a buffer again


SVG = "{http://www.w3.org/2000/svg}"


def _with_class(root, tag, cls):
    return [e for e in root.iter(SVG + tag) if e.get("class") == cls]


def test_svg_draws_the_planned_programs(tmp_path):
    import xml.etree.ElementTree as ET
    sdfgs = [os.path.join(CORPUS, n, "program.sdfg") for n in ("jacobi_2d", "heat_3d")]
    ws = sdfgc.Workspace("CPU_Heap")
    with pytest.raises(sdfgc.SdfgcError, match="plan"):
        ws.svg()  # nothing planned, nothing given
    planned = ws.plan(sdfgs, symbols={"N": 32})
    out = tmp_path / "plan.svg"
    text = ws.svg(path=out)  # what was planned, with its symbols
    assert out.read_text() == text
    assert ws.svg() == text  # deterministic
    root = ET.fromstring(text)
    assert root.tag == SVG + "svg"
    allocate = _with_class(root, "text", "allocate")
    assert [int(a.get("data-bytes")) for a in allocate] == [planned]
    assert sorted(p.get("data-name") for p in _with_class(root, "text", "program")) == ["cases_dev_heat_3d", "cases_dev_jacobi_2d"]
    transients = _with_class(root, "rect", "transient")
    assert transients and all(int(t.get("data-bytes")) > 0 for t in transients)
    # Per-file symbol values: each program sized with its own N.
    small = ws.svg(sdfgs, file_symbols={sdfgs[0]: {"N": 8}, sdfgs[1]: {"N": 8}})
    needs = {n.get("data-name"): int(n.get("data-bytes")) for n in _with_class(ET.fromstring(small), "rect", "need")}
    assert max(needs.values()) < planned
    # Without symbol values the picture is drawn, not to scale, with formulas.
    assert "not to scale" in sdfgc._workspace.svg(sdfgs[0])


def test_icon4py_plugin_report_has_a_picture(tmp_path, monkeypatch):
    """The plugin keeps each served program's SDFG with the symbols of its
    largest call and draws them all at the end of the session (FILE.svg)."""
    import shutil
    import xml.etree.ElementTree as ET

    from sdfgc import icon4py_modes as plugin

    report = str(tmp_path / "workspace.json")
    monkeypatch.setattr(plugin, "_report", (report, "external", "cpp"))
    monkeypatch.setattr(plugin, "_pictured", {})
    source = os.path.join(CORPUS, "heat_3d", "program.external.sdfg")

    class Sdfg:
        name = "heat_3d"

        def save(self, path):
            shutil.copy(source, path)

    class Compiled:
        sdfg = Sdfg()
        _free_symbols = {"N"}

    plugin._keep_for_picture(Compiled(), 100, {"N": np.int64(12), "A": np.zeros(3)})
    plugin._keep_for_picture(Compiled(), 50, {"N": np.int64(4)})  # smaller: the first stays
    saved, symbols, need = plugin._pictured["heat_3d"]
    assert symbols == {"N": 12} and need == 100 and os.path.exists(saved)
    plugin._write_picture()
    root = ET.parse(report + ".svg").getroot()
    assert [p.get("data-name") for p in _with_class(root, "text", "program")] == ["cases_dev_heat_3d"]
    assert _with_class(root, "rect", "transient")
