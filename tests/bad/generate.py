#!/usr/bin/env python3
"""Regenerates the bad-input suite in tests/bad/ from a minimised real fixture.

Run from the repository root: python3 tests/bad/generate.py
The base is fixtures/corpus/jacobi_1d/program.sdfg (DaCe 1.0.2) cut down to
one map (A -> map -> tasklet -> __tmp0) inside its time loop; every case
below applies one defect to a fresh copy and writes tests/bad/NN_name.sdfg.
The manifest tests/bad/expected.txt is written from CASES.
"""

import copy
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def strip(o):
    """Drops debuginfo/guid noise recursively."""
    if isinstance(o, dict):
        return {k: strip(v) for k, v in o.items() if k not in ("debuginfo", "guid", "hash")}
    if isinstance(o, list):
        return [strip(x) for x in o]
    return o


def base():
    with open(os.path.join(ROOT, "fixtures/corpus/jacobi_1d/program.sdfg")) as f:
        d = json.load(f)
    a = d["attributes"]
    a["name"] = "jacobi_min"
    a["_arrays"] = {k: v for k, v in a["_arrays"].items() if k in ("TSTEPS", "A", "B", "__tmp0")}
    body = d["nodes"][3]
    body["nodes"] = body["nodes"][:5]
    keep = {"0", "1", "2", "3", "4"}
    body["edges"] = [e for e in body["edges"] if e["src"] in keep and e["dst"] in keep]
    body["scope_dict"] = {"-1": [0, 3, 4], "0": [1, 2]}
    return strip(d)


BASE = base()


def state(d):
    """The state holding the map."""
    return d["nodes"][3]


def node(d, i):
    return state(d)["nodes"][i]


def tasklet(d):
    return node(d, 1)


def arr(d, name="A"):
    return d["attributes"]["_arrays"][name]


def edge(d, src, dst):
    return next(e for e in state(d)["edges"] if e["src"] == str(src) and e["dst"] == str(dst))


def memlet(e):
    return e["attributes"]["data"]["attributes"]


def with_code(code):
    def f(d):
        tasklet(d)["attributes"]["code"]["string_data"] = code
    return f


def set_path(path, value):
    """A mutation that sets d[path...] = value."""
    def f(d):
        o = d
        for k in path[:-1]:
            o = o[k]
        o[path[-1]] = value
    return f


def conditional_block(d):
    """Appends a ConditionalBlock (DaCe 2.x) whose branch body is a state."""
    st = {"type": "SDFGState", "label": "then_state", "id": 0, "nodes": [], "edges": [], "attributes": {}}
    cb = {"type": "ConditionalBlock", "label": "if_1", "id": 4, "attributes": {},
          "branches": [[{"string_data": "t > 1", "language": "Python"}, st]]}
    d["nodes"].append(cb)
    d["edges"].append({"type": "Edge", "src": "2", "dst": "4",
                       "attributes": {"data": {"type": "InterstateEdge", "attributes": {}}}})


def library_node(classpath):
    def mutate(d):
        n = node(d, 1)
        n["type"] = "LibraryNode"
        n["classpath"] = classpath
        n["label"] = "_Gemm_"
        n["attributes"] = {"name": "_Gemm_", "in_connectors": {"__in1": None, "__in2": None},
                           "out_connectors": {"__out": None}}
    return mutate


def consume(d):
    """The map entry as a consume scope (4 elements at a time) over an array,
    not a stream."""
    n = node(d, 0)
    n["type"] = "ConsumeEntry"
    n["attributes"].update(pe_index="__i0", num_pes="2", chunksize=4)


def cycle(d):
    """__tmp0 feeds back into the map entry: a dataflow cycle."""
    e = copy.deepcopy(edge(d, 4, 0))
    e["src"] = "3"
    memlet(e)["data"] = "__tmp0"
    state(d)["edges"].append(e)


def nested_chain(levels):
    """A chain of `levels` nested SDFGs, each in a state of its parent."""
    def sdfg(k):
        inner = {"type": "SDFGState", "label": f"s{k}", "id": 0, "nodes": [], "edges": [], "attributes": {}}
        if k < levels:
            inner["nodes"].append({"type": "NestedSDFG", "label": f"n{k}", "id": 0,
                                   "attributes": {"sdfg": sdfg(k + 1)}})
        return {"type": "SDFG", "attributes": {"name": f"level{k}", "_arrays": {}},
                "nodes": [inner], "edges": []}
    return sdfg(0)


def empty_nodes(d):
    state(d)["nodes"] = []


def dup_ids(d):
    node(d, 4)["id"] = 3


def add_nested(inner_nodes, in_connectors):
    """Adds a nested SDFG node (inner state holding `inner_nodes`) to the empty first state."""
    def f(d):
        inner = {"type": "SDFG", "attributes": {"name": "inner", "_arrays": {"x": copy.deepcopy(arr(d, "B"))}},
                 "nodes": [{"type": "SDFGState", "label": "inner_state", "id": 0,
                            "nodes": inner_nodes, "edges": [], "attributes": {}}],
                 "edges": []}
        d["nodes"][0]["nodes"].append({"type": "NestedSDFG", "label": "nested", "id": 0,
                                       "attributes": {"sdfg": inner, "in_connectors": in_connectors,
                                                      "symbol_mapping": {"N": "N"}}})
    return f


def code_language(language, code):
    """The tasklet's code in another language."""
    def f(d):
        tasklet(d)["attributes"]["code"] = {"string_data": code, "language": language}
    return f


def dynamic_input(end, conn_type):
    """Gives the map a dynamic input `__lo` (read from A[0:end]) that its
    range starts at; `conn_type` is the connector's declared type."""
    def mutate(d):
        m = node(d, 0)
        m["attributes"]["in_connectors"]["__lo"] = conn_type
        m["attributes"]["range"]["ranges"][0]["start"] = "__lo"
        e = copy.deepcopy(edge(d, 4, 0))
        e["dst_connector"] = "__lo"
        memlet(e)["subset"]["ranges"][0].update(start="0", end=end)
        state(d)["edges"].append(e)
    return mutate


def with_callback(code, arguments):
    """A callback symbol `host` (DaCe's callback type) and tasklet code calling it."""
    def f(d):
        d["attributes"].setdefault("symbols", {})["host"] = {
            "type": "callback", "arguments": arguments, "returntypes": []}
        tasklet(d)["attributes"]["code"]["string_data"] = code
    return f


ONE_ARRAY = [{"type": "Array", "attributes": {"dtype": "float64", "shape": ["N"]}}]


def raw(text):
    return ("raw", text)


def mpi_fixture(name, mutate):
    """An MPI fixture (fixtures/mpi, DaCe 1.0.2 or, `<case>.v2`, 2.x) with one defect, as raw text."""
    with open(os.path.join(ROOT, "fixtures", "mpi", name + ".sdfg")) as f:
        d = strip(json.load(f))
    mutate(d)
    return raw(json.dumps(d, indent=1))


def vector_interstate_read(d):
    arr(d, "A")["attributes"]["dtype"] = {"type": "vector", "dtype": "float64", "elements": "4"}
    d["edges"][0]["attributes"]["data"]["attributes"]["assignments"]["v"] = "A[0]"


def complex_round_symbol(d):
    """`k = round(A[0])` on an interstate edge, A complex, k an int64 symbol
    (Python's round of a complex value: DaCe's round is complex, its C++ does not compile)."""
    arr(d, "A")["attributes"]["dtype"] = "complex128"
    d["attributes"]["symbols"]["k"] = "int64"
    d["edges"][0]["attributes"]["data"]["attributes"]["assignments"]["k"] = "round(A[0])"


def tiled_other_subset(d):
    m = memlet(edge(d, 0, 1))
    m["other_subset"] = copy.deepcopy(m["subset"])
    m["other_subset"]["ranges"][0]["tile"] = "2"


def tiled_nested_input(d):
    """A tiled range on the memlet into a nested SDFG (seen as one pointer there)."""
    for st in d["nodes"]:
        nested = {str(n["id"]) for n in st["nodes"] if n["type"] == "NestedSDFG"}
        for e in st["edges"]:
            if str(e["dst"]) in nested:
                e["attributes"]["data"]["attributes"]["subset"]["ranges"][0].update(step="2", tile="2")
                return


def threadlocal_shared_write(d):
    """`flags` made CPU_ThreadLocal and every iteration of the parallel map
    `query_map` writing its element 0; the map over `0:N`, enough work for
    a parallel region whatever N is at run time."""
    d["attributes"]["_arrays"]["flags"]["attributes"]["storage"] = "CPU_ThreadLocal"
    for st in d["nodes"]:
        for n in st["nodes"]:
            if n["type"] == "MapEntry" and n["attributes"]["range"]["ranges"][0]["end"] == "7":
                n["attributes"]["range"]["ranges"][0]["end"] = "N - 1"
        for e in st["edges"]:
            m = e["attributes"]["data"]["attributes"]
            if m.get("data") == "flags" and e.get("src_connector") == "f":
                for r in m["subset"]["ranges"]:
                    r.update(start="0", end="0")


def corpus_fixture(name, mutate):
    """A corpus fixture's DaCe 1.0.2 program with one defect, as raw text."""
    with open(os.path.join(ROOT, "fixtures", "corpus", name, "program.sdfg")) as f:
        d = strip(json.load(f))
    mutate(d)
    return raw(json.dumps(d, indent=1))


def container_array_member(d):
    """The nested structure S.p becomes an array of two pointers to nothing
    (DaCe's ContainerArray without an stype: `void*` elements)."""
    members = d["attributes"]["_arrays"]["S"]["attributes"]["members"]
    name, params = members[3]
    assert name == "p"
    members[3] = [name, {"type": "ContainerArray", "attributes": {
        "stype": None, "dtype": {"type": "pointer", "dtype": None}, "shape": ["2"], "strides": ["1"],
        "total_size": "2", "offset": ["0"]}}]


def reference_past_end(d):
    """`s` (4 elements, stride 8) set to M[3:7, 2] of the 6 x 8 M: its last element is M[6, 2]."""
    ranges = d["nodes"][1]["edges"][1]["attributes"]["data"]["attributes"]["subset"]["ranges"]
    ranges[0].update(start="3", end="6")


def struct_unknown_field(d):
    """The tasklet `unpack` reads `b.index`; struct `pair` has `idx` and `val`."""
    d["nodes"][0]["nodes"][7]["attributes"]["code"]["string_data"] = "i_o = b.index\nv_o = b.val"


def struct_wcr_sum(d):
    """The argmax edges resolve with `a + b`: C++ has no `+` on a struct."""
    for k in (3, 7):
        d["nodes"][0]["edges"][k]["attributes"]["data"]["attributes"]["wcr"] = "(lambda a, b: (a + b))"


def struct_pointer_field(d):
    """`pair`'s field `val` becomes a pointer (fields held by value are scalars)."""
    for a in ("best",):
        d["attributes"]["_arrays"][a]["attributes"]["dtype"]["data"][1][1] = {"type": "pointer", "dtype": "float64"}


def reference_used_before_set(d):
    """The two branches that set `b` copy into it instead: `use_b` reads it unset."""
    for n in d["nodes"]:
        if n["label"] in ("pick_a", "pick_b"):
            for e in n["edges"]:
                if e["dst_connector"] == "set":
                    e["dst_connector"] = None


def bool_buffers(d):
    for a in ("inbuf", "outbuf"):
        d["attributes"]["_arrays"][a]["attributes"]["dtype"] = "bool"


# (name, mutation or raw text, exit code, message fragment, location fragment, command)
CASES = [
    ("empty_file", raw(""), 1, "EOF while parsing", "line 1", "check"),
    ("truncated", raw(json.dumps(BASE)[:700]), 1, "EOF while parsing", "line 1", "check"),
    ("trailing_garbage", raw(json.dumps(BASE) + "\n}garbage"), 1, "trailing characters", "line 2", "check"),
    ("not_an_object", raw('"hello"'), 1, "must be an SDFG (a JSON object), found a string", "FILE", "check"),
    ("top_level_array", raw("[" + json.dumps(BASE) + "]"), 1, "must be an SDFG (a JSON object), found a list", "FILE", "check"),
    ("nodes_not_a_list", set_path(["nodes"], "x"), 1, "expected a list, found a string", "at /nodes", "check"),
    ("arrays_not_an_object", set_path(["attributes", "_arrays"], []), 1, "expected a map", "at /attributes/_arrays", "check"),
    ("shape_is_string", lambda d: arr(d)["attributes"].__setitem__("shape", "N"), 1, "expected a sequence", "at /attributes/_arrays/A/attributes/shape", "check"),
    ("attributes_is_number", lambda d: tasklet(d).__setitem__("attributes", 5), 1, "expected struct", "at /nodes/3/nodes/1/attributes", "check"),
    ("shape_is_bool", lambda d: arr(d)["attributes"].__setitem__("shape", True), 1, "expected a sequence", "at /attributes/_arrays/A/attributes/shape", "check"),
    ("unknown_node_type", lambda d: node(d, 1).__setitem__("type", "Frobnicator"), 1, "dataflow node type 'Frobnicator'", "at /nodes/3/nodes/1/type", "check"),
    ("unknown_block_type", lambda d: d["nodes"][2].__setitem__("type", "WhileBlock"), 1, "control-flow block type 'WhileBlock'", "at /nodes/2/type", "check"),
    ("stream_container", lambda d: arr(d, "__tmp0").__setitem__("type", "Stream"), 1, "stream '__tmp0': arrays of streams are not supported", "at /attributes/_arrays/__tmp0", "cpp"),
    # A Structure with an array's attributes: DaCe's structures are one struct (shape [1]).
    ("structure_container", lambda d: arr(d, "B").__setitem__("type", "Structure"), 1, "structure 'B' of a shape other than [1]", "at /attributes/_arrays/B/attributes/shape", "check"),
    # A reference argument (DaCe's `add_reference` makes transients only).
    ("reference_container", lambda d: arr(d, "B").__setitem__("type", "Reference"), 1, "reference 'B': a reference that is not transient", "at /attributes/_arrays/B", "cpp"),
    # An unknown type with an array's attributes is a subclass of DaCe's
    # Array (accepted); without them it is refused.
    ("unknown_container_kind", lambda d: (arr(d, "B").__setitem__("type", "Blob"), arr(d, "B")["attributes"].pop("strides")), 1, "unknown data type 'Blob'", "at /attributes/_arrays/B/type", "check"),
    ("unknown_dtype", lambda d: arr(d)["attributes"].__setitem__("dtype", "float128"), 1, "data type 'float128'", "at /attributes/_arrays/A/attributes/dtype", "check"),
    ("pointer_dtype_array", lambda d: arr(d)["attributes"].__setitem__("dtype", {"type": "pointer", "dtype": "float64"}), 1, "data type of kind 'pointer'", "at /attributes/_arrays/A/attributes/dtype", "check"),
    ("unknown_storage", lambda d: arr(d)["attributes"].__setitem__("storage", "Magnetic_Tape"), 1, "storage 'Magnetic_Tape'", "at /attributes/_arrays/A/attributes/storage", "check"),
    ("unknown_lifetime", lambda d: arr(d, "__tmp0")["attributes"].__setitem__("lifetime", "Forever"), 1, "lifetime 'Forever'", "at /attributes/_arrays/__tmp0/attributes/lifetime", "check"),
    ("unknown_schedule", lambda d: node(d, 0)["attributes"].__setitem__("schedule", "FPGA_Device"), 1, "schedule 'FPGA_Device'", "at /nodes/3/nodes/0/attributes/schedule", "check"),
    ("missing_node_type", lambda d: node(d, 3).pop("type"), 1, "missing key 'type'", "at /nodes/3/nodes/3", "check"),
    ("missing_sdfg_name", lambda d: d["attributes"].pop("name"), 1, "the SDFG has no 'name'", "at /attributes", "check"),
    ("name_not_identifier", set_path(["attributes", "name"], "my-program"), 1, "SDFG name 'my-program' is not a C identifier", "at /attributes/name", "check"),
    ("dangling_interstate_edge", lambda d: d["edges"][1].__setitem__("dst", "17"), 1, "destination block 17 does not exist", "at /edges/1/dst", "check"),
    ("dangling_dataflow_edge", lambda d: edge(d, 2, 3).__setitem__("dst", "42"), 1, "destination node 42 does not exist", "at /nodes/3/edges/", "check"),
    ("duplicate_node_ids", dup_ids, 1, "duplicate id 3", "at /nodes/3/nodes/4/id", "check"),
    ("access_unknown_data", lambda d: node(d, 4)["attributes"].__setitem__("data", "Z"), 1, "unknown data 'Z'", "at /nodes/3/nodes/4", "check"),
    ("memlet_unknown_data", lambda d: memlet(edge(d, 4, 0)).__setitem__("data", "Z"), 1, "unknown data 'Z'", "/attributes/data/attributes/data", "check"),
    ("memlet_wrong_rank", lambda d: memlet(edge(d, 4, 0))["subset"]["ranges"].append({"start": "0", "end": "0", "step": "1", "tile": "1"}), 1, "has 2 dimensions, but 'A' has 1", "/attributes/data/attributes/subset", "check"),
    ("map_params_vs_ranges", lambda d: node(d, 0)["attributes"]["params"].append("__i1"), 1, "has 2 parameters but 1 ranges", "at /nodes/3/nodes/0/attributes", "check"),
    ("map_entry_wrong_exit", lambda d: node(d, 0).__setitem__("scope_exit", "1"), 1, "scope_exit is not its matching map exit", "at /nodes/3/nodes/0", "check"),
    ("map_exit_not_entry", lambda d: node(d, 2).__setitem__("scope_entry", "4"), 1, "does not belong to a map entry", "at /nodes/3/nodes/2", "check"),
    ("expr_plus_star", lambda d: node(d, 0)["attributes"]["range"]["ranges"][0].__setitem__("end", "N +* 2"), 1, "symbolic expression", "at /nodes/3/nodes/0/attributes/range/ranges/0/end", "check"),
    ("expr_open_bracket", lambda d: arr(d)["attributes"]["shape"].__setitem__(0, "N["), 1, "symbolic expression", "at /attributes/_arrays/A/attributes/shape/0", "check"),
    ("expr_unknown_function", lambda d: arr(d)["attributes"]["shape"].__setitem__(0, "frobnicate(N)"), 1, "frobnicate", "at /attributes/_arrays/A/attributes/shape/0", "check"),
    ("tasklet_for_over_data", with_code("for i in __in1:\n    __out = __in1"), 1, "tasklet '_Add_': line 1, column 10: unsupported Python construct 'for' over something other than range(...)", "at /nodes/3/nodes/1/attributes/code", "check"),
    ("tasklet_def", with_code("__out = __in1\ndef f(x):\n    return x"), 1, "tasklet '_Add_': line 2", "at /nodes/3/nodes/1/attributes/code", "check"),
    ("tasklet_import", with_code("import math\n__out = __in1 + __in2"), 1, "tasklet '_Add_': line 1", "at /nodes/3/nodes/1/attributes/code", "check"),
    ("tasklet_lambda", with_code("__out = (lambda x: x)(__in1)"), 1, "tasklet '_Add_': line 1", "at /nodes/3/nodes/1/attributes/code", "check"),
    ("tasklet_tuple_assign", with_code("a, b = __in1, __in2\n__out = a + b"), 1, "tasklet '_Add_': line 1", "at /nodes/3/nodes/1/attributes/code", "check"),
    ("tasklet_string_literal", with_code("__out = __in1\n__out = 'text'"), 1, "tasklet '_Add_': line 2", "at /nodes/3/nodes/1/attributes/code", "check"),
    ("tasklet_keyword_args", with_code("__out = max(__in1, __in2, key=abs)"), 1, "tasklet '_Add_': line 1", "at /nodes/3/nodes/1/attributes/code", "check"),
    ("bad_wcr", lambda d: memlet(edge(d, 1, 2)).__setitem__("wcr", "lambda a: a"), 1, "is not a two-argument lambda", "/attributes/data/attributes/wcr", "check"),
    ("undefined_symbol_map_range", lambda d: node(d, 0)["attributes"]["range"]["ranges"][0].__setitem__("end", "M - 3"), 1, "uses symbol 'M', which is not defined", "at /nodes/3/nodes/0", "check"),
    ("undefined_symbol_memlet", lambda d: memlet(edge(d, 4, 0))["subset"]["ranges"][0].__setitem__("end", "K"), 1, "uses symbol 'K', which is not defined", "at /nodes/3/edges/", "check"),
    ("undefined_symbol_condition", lambda d: d["edges"][2]["attributes"]["data"]["attributes"]["condition"].__setitem__("string_data", "(t < TMAX)"), 1, "uses symbol 'TMAX', which is not defined", "at /edges/2", "check"),
    ("unknown_library_node", library_node("dace.libraries.linalg.nodes.solve.Solve"), 1, "dace.libraries.linalg.nodes.solve.Solve", "at /nodes/3/nodes/1/classpath", "check"),
    ("consume_entry", consume, 1, "consume scope '_Add__map': its 'IN_stream' input is not an access node of a stream", "at /nodes/3/nodes/0", "cpp"),
    ("cpp_interstate_condition", lambda d: d["edges"][2]["attributes"]["data"]["attributes"]["condition"].__setitem__("language", "CPP"), 1, "C++ conditions", "at /edges/2/attributes/data/attributes/condition", "check"),
    ("negative_shape", lambda d: arr(d, "B")["attributes"].update(shape=["-5"], total_size="-5"), 1, "negative size -5", "at /attributes/_arrays/B/attributes/shape/0", "check"),
    ("huge_shape", lambda d: arr(d, "B")["attributes"].update(shape=["99999999999999999999"], total_size="99999999999999999999"), 1, "99999999999999999999", "at /attributes/_arrays/B/attributes/shape/0", "check"),
    ("cyclic_dataflow", cycle, 1, "has a cycle", "at /nodes/3", "cpp"),
    ("nesting_too_deep", raw(json.dumps(nested_chain(70))), 1, "nested too deeply", "line 1", "check"),
    ("branch_not_region", conditional_block, 1, "branch body must be a ControlFlowRegion, found 'SDFGState'", "at /nodes/4/branches/0/1/type", "check"),
    ("empty_nodes_with_edges", empty_nodes, 1, "source node 4 does not exist", "at /nodes/3/edges/0/src", "check"),
    ("unknown_connector", lambda d: edge(d, 1, 2).__setitem__("src_connector", "__nope"), 1, "output connector '__nope'", "at /nodes/3/edges/", "check"),
    ("nested_unknown_data", add_nested([{"type": "AccessNode", "label": "Q", "id": 0, "attributes": {"data": "Q"}}], {}), 1, "refers to unknown data 'Q'", "at /nodes/0/nodes/0/attributes/sdfg/nodes/0/nodes/0", "check"),
    ("nested_connector_not_container", add_nested([], {"y": None}), 1, "input connector 'y', which is not a data container of 'inner'", "at /nodes/0/nodes/0", "check"),
    ("tasklet_while_loop", with_code("__out = __in1\nwhile __out > 0:\n    __out = __out - 1"), 1, "tasklet '_Add_': line 2, column 1: unsupported Python construct 'while' statement", "at /nodes/3/nodes/1/attributes/code", "check"),
    ("tasklet_math_unknown", with_code("__out = math.frexp_all(__in1)"), 1, "unknown function 'frexp_all'", "at /nodes/3/nodes/1/attributes/code", "check"),
    ("tasklet_block_local", with_code("if __in1 > 0:\n    t = __in1\nelse:\n    t = __in2\n__out = t"), 1, "local variable 't' is used outside the 'if'/'for' block", "at /nodes/3/nodes/1", "cpp"),
    ("tasklet_loop_variable_defined", with_code("i = 0\nfor i in range(3):\n    __out = __in1"), 1, "'for' loop variable 'i' is already defined", "at /nodes/3/nodes/1", "cpp"),
    ("tasklet_bad_indent", with_code("if __in1 > 0:\n    __out = __in1\n  __out = __in2"), 1, "tasklet '_Add_': line 3, column 3: unindent does not match", "at /nodes/3/nodes/1/attributes/code", "check"),
    ("fractional_shape", lambda d: arr(d, "B")["attributes"].update(shape=[2.5], total_size=2.5, strides=[1]), 1, "not an integer", "at /attributes/_arrays/B/attributes/shape/0", "check"),
    # Code in a language other than Python and C++ is refused by name, never compiled as Python.
    ("tasklet_mlir", code_language("MLIR", "module {\n  func.func @mlir_entry(%a: f64) -> f64 {\n    return %a : f64\n  }\n}"), 1, "the code of tasklet '_Add_' in language 'MLIR'", "at /nodes/3/nodes/1/attributes/code/language", "check"),
    ("tasklet_systemverilog", code_language("SystemVerilog", "assign __out = __in1;"), 1, "in language 'SystemVerilog'", "at /nodes/3/nodes/1/attributes/code/language", "check"),
    ("tasklet_opencl", code_language("OpenCL", "__out = __in1;"), 1, "in language 'OpenCL'", "at /nodes/3/nodes/1/attributes/code/language", "check"),
    ("tasklet_unknown_language", code_language("Fortran", "__out = __in1"), 1, "in language 'Fortran'", "at /nodes/3/nodes/1/attributes/code/language", "check"),
    ("global_code_language", set_path(["attributes", "global_code"], {"frame": {"string_data": "int x;", "language": "MLIR"}}), 1, "code for 'frame' in language 'MLIR'", "at /attributes/global_code/frame/language", "check"),
    # Values and spellings sdfgc cannot compile.
    ("constant_complex", set_path(["attributes", "constants_prop"], {"CC": [{"type": "Scalar", "attributes": {"dtype": "float64", "shape": ["1"]}}, "(1+2j)"]}), 1, "complex constant value '(1+2j)'", "at /attributes/constants_prop/CC/1", "check"),
    ("constant_out_of_range", set_path(["attributes", "constants_prop"], {"K": [{"type": "Scalar", "attributes": {"dtype": "uint8", "shape": ["1"]}}, "300"]}), 1, "does not fit the constant's type uint8", "at /attributes/constants_prop/K/1", "check"),
    ("undefined_symbol_question", lambda d: arr(d, "B")["attributes"].update(shape=["?"], total_size="?"), 1, "undefined symbol '?'", "at /attributes/_arrays/B/attributes/shape/0", "check"),
    ("typed_constant_bfloat16", lambda d: node(d, 0)["attributes"]["range"]["ranges"][0].__setitem__("end", "N - 2bf16"), 1, "typed constant of type 'bf16'", "at /nodes/3/nodes/0/attributes/range/ranges/0/end", "check"),
    ("tasklet_environment", lambda d: tasklet(d)["attributes"].update(environments=["dace.libraries.blas.environments.cublas.cuBLAS"]), 1, "calls into the library environment 'cuBLAS'", "at /nodes/3/nodes/1/attributes/environments", "cpp"),
    ("gemm_wrong_connectors", library_node("dace.libraries.blas.nodes.gemm.Gemm"), 1, "library node '_Gemm_': no input on connector '_a'", "at /nodes/3/nodes/1", "cpp"),
    ("tiled_memlet", corpus_fixture("symbol_external_init", tiled_nested_input), 1, "has a tiled range (tile 2) outside a copy or tasklet", "at /nodes/7/edges/0", "check"),
    # Dynamic map inputs are values: one of several elements (a pointer) is refused by name.
    ("dynamic_map_input_pointer", dynamic_input("1", None), 1, "dynamic input '__lo' of map '_Add__map' in state 'for_139_BinOp_140' is a pointer (its memlet on 'A' has more than one element)", "at /nodes/3/edges/", "check"),
    ("dynamic_map_input_pointer_type", dynamic_input("0", {"type": "pointer", "dtype": "float64"}), 1, "dynamic input '__lo' of map '_Add__map' in state 'for_139_BinOp_140' is a pointer (its connector's type is a pointer)", "at /nodes/3/edges/", "check"),
    # Callbacks: calls other than DaCe's frontend writes them, types it does not write.
    ("callback_arity", with_callback("host()", ONE_ARRAY), 1, "callback tasklet '_Add_' in state 'for_139_BinOp_140': calls 'host' with 0 arguments; its type takes 1", "at /nodes/3/nodes/1", "check"),
    ("callback_among_statements", with_callback("host(__in1)\n__out = __in2", ONE_ARRAY), 1, "a callback call among other statements", "at /nodes/3/nodes/1", "check"),
    ("callback_none_argument", with_callback("host()", [None]), 1, "callback argument or return value 'None'", "at /attributes/symbols/host/arguments/0", "check"),
    # A stream the program takes as an argument (DaCe's Python interface cannot pass one).
    ("stream_argument", lambda d: arr(d, "A").update(type="Stream", attributes={**arr(d, "A")["attributes"], "shape": ["1"], "total_size": "1"}), 1, "stream 'A': a stream argument of the program", "at /attributes/_arrays/A", "cpp"),
    # MPI: a buffer without an MPI datatype, a grid no Dummy node declares.
    ("mpi_bool_buffer", mpi_fixture("allreduce_sum", bool_buffers), 1, "no MPI datatype for it", "at /nodes/0/nodes/", "cpp"),
    ("mpi_unknown_grid", mpi_fixture("grid_bcast", lambda d: d["nodes"][0]["nodes"][8]["attributes"].update(grid="__nogrid")), 1, "MPI Bcast on process grid '__nogrid', which the SDFG does not declare", "at /nodes/0/nodes/8", "cpp"),
    # DaCe 2.x: a ProcessGrid descriptor on a connector that takes none.
    ("mpi_v2_grid_on_another_connector", mpi_fixture("grid_bcast.v2", lambda d: d["nodes"][3]["edges"][0].update(dst_connector="_comm")), 1, "process grid 'grid' read by '_Bcast_' on connector '_comm'", "at /nodes/3/edges/0", "check"),
    # Vector types: control flow that indexes a vector container (it counts vectors).
    ("vector_interstate_read", vector_interstate_read, 1, "control flow reads 'A', a container of vector type", "at /edges/0", "check"),
    # A tiled other subset (DaCe's copy writes it as a contiguous run).
    ("tiled_other_subset", tiled_other_subset, 1, "has a tiled other subset (tile 2)", "at /nodes/3/edges/", "check"),
    # Structures: an array of pointers to nothing as a member (a ContainerArray without an stype).
    ("structure_void_container_array_member", corpus_fixture("structure_members", container_array_member), 1, "container array 'S.p' without an element type (void*)", "at /attributes/_arrays/S/attributes/members/3/1/attributes/stype", "check"),
    # References: one set so that it reaches past the end of the data it points into.
    ("reference_past_end", corpus_fixture("reference_set", reference_past_end), 1, "reference 's' spans 25 elements from element 26 of 'M', which has 48: past its end", "at /nodes/1/edges/1", "cpp"),
    # ... and one read before any state sets it (DaCe's validation refuses it too).
    ("reference_used_before_set", corpus_fixture("reference_set", reference_used_before_set), 1, "reference 'b' is used before it is set", "at /nodes/4/nodes/1", "cpp"),
    # Structs held by value: a field the struct lacks, an operator C++ lacks on structs, a pointer field.
    ("struct_unknown_field", corpus_fixture("struct_values", struct_unknown_field), 1, "struct 'pair' has no field 'index'", "at /nodes/0/nodes/7", "cpp"),
    ("struct_wcr_sum", corpus_fixture("struct_values", struct_wcr_sum), 1, "write-conflict resolution '(lambda a, b: (a + b))' on 'best' of type pair (C++ has no such operator on a struct)", "at /nodes/0/edges/", "cpp"),
    ("struct_pointer_field", corpus_fixture("struct_values", struct_pointer_field), 1, "field 'val' of struct 'pair': data type of kind 'pointer'", "at /attributes/_arrays/best/attributes/dtype/data/1/1", "check"),
    # Tasklet code that changes an interstate symbol inside a map (each thread's copy, or a race, in DaCe's C++).
    ("tasklet_symbol_in_map", with_code("t *= 2\n__out = __in1"), 1, "tasklet '_Add_': assigns the interstate symbol 't' inside a map, consume scope or kernel", "at /nodes/3/nodes/1", "cpp"),
    # Parallel iterations writing the same elements of a CPU_ThreadLocal container (a copy per thread in DaCe).
    ("threadlocal_shared_write", corpus_fixture("tasklet_cpp_semantics", threadlocal_shared_write), 1, "tasklet 'query': parallel iterations may write the same elements of the CPU_ThreadLocal container 'flags'", "at /nodes/6/edges/", "cpp"),
    # A chained assignment whose last target is a value, not an element of an array output (DaCe: a structured binding).
    ("tasklet_chain_into_value", with_code("t = __out = __in1 + __in2"), 1, "tasklet '_Add_': chained assignment 'a = b = x' whose last target is not an element of an array output connector", "at /nodes/3/nodes/1", "cpp"),
    # round of a complex value into an integer symbol (DaCe's generated code does not compile either).
    ("complex_round_symbol", complex_round_symbol, 1, "round of a complex value into a symbol that is not complex", "at /edges/0", "check"),
]


def main():
    for f in os.listdir(HERE):
        if f.endswith(".sdfg"):
            os.remove(os.path.join(HERE, f))
    lines = []
    for i, (name, mut, code, msg, loc, cmd) in enumerate(CASES, 1):
        fname = f"{i:02d}_{name}.sdfg"
        if isinstance(mut, tuple):
            text = mut[1]
        else:
            d = copy.deepcopy(BASE)
            mut(d)
            text = json.dumps(d, indent=1)
        with open(os.path.join(HERE, fname), "w") as f:
            f.write(text)
        loc = fname if loc == "FILE" else loc
        lines.append(f"{fname} | {code} | {msg} | {loc} | {cmd}")
    with open(os.path.join(HERE, "expected.txt"), "w") as f:
        f.write("# file | exit code | message fragment | location fragment | check|cpp\n")
        f.write("\n".join(lines) + "\n")
    with open("/tmp/base.sdfg", "w") as f:
        json.dump(BASE, f, indent=1)


main()
