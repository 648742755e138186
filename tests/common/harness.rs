//! The project's own run harness: calls a shared library that follows DaCe's C
//! ABI on one case of the corpus and compares its outputs with the reference
//! files, like `fixtures/corpus/run_case.py` does, but without Python.
//!
//! [`run_case`] reads `case.json`, emits a self-contained C++17 driver (every
//! path, size, stride, symbol value and tolerance baked in; only the library
//! path is a command-line argument), builds it with `g++` (cached by source
//! hash under the system temp directory), runs it and parses its stdout.
//!
//! Semantics follow `run_case.py`:
//!
//! * arrays are loaded from their `file` (`<arg>.in.bin`, or for gt4py cases
//!   the raw padded span of `span_elements` elements); output-only arrays
//!   (`role: "out"`) start zero-filled; `scratch` arrays (gt4py's
//!   `gt_compute_time`) are loaded from their file and never compared;
//! * scalars are read from their file (first element, typed by the arg's
//!   `dtype`) and passed by value, converted to the C type of the parameter;
//! * symbols come from `case.json["symbols"]` (ints, floats or bools, gt4py's
//!   `gt_metrics_level` included) and are passed by value with the C type of
//!   the ABI parameter (`dtype` if given, else the `ctype` string);
//! * every external storage listed by the variant, plus every storage among
//!   `CPU_Heap`, `CPU_Pinned`, `CPU_ThreadLocal`, `GPU_Global` whose size
//!   function the library exports, gets a 64-byte aligned, zero-initialised
//!   workspace (size query and set take the init symbols); non-CPU storages
//!   are reported as unsupported;
//! * a structure argument (`kind: "struct"`, a DaCe `Structure`) is a C
//!   struct the driver builds with the layout DaCe (and sdfgc) declare: its
//!   `members`, in order, each naming the argument it holds (`arg`): an
//!   array or a structure as a pointer to that argument's buffer, a scalar
//!   as a value of its `dtype`; the struct is passed by pointer (ABI
//!   parameter kind `struct`), restored before every call like any buffer,
//!   and an output naming a scalar member is compared in the struct;
//! * complex data (`complex_dtype` on an arg or output) are interleaved
//!   (real, imag) pairs of their `dtype` and compared part by part; a complex
//!   scalar is one pair, passed by value as `std::complex<float|double>`;
//! * outputs are compared on the logical (strided) view:
//!   `|got - ref| <= atol + rtol * |ref|`, NaN equal to NaN, infinities equal
//!   only to themselves; integer and bool outputs exactly.
//!
//! With [`RunOptions::real_device`] the library runs on a real NVIDIA GPU:
//! the driver is built with nvcc, every argument the variant's SDFG stores
//! in `GPU_Global` and every `GPU_Global` workspace is `cudaMalloc`ed, the
//! inputs are copied in before and the arguments out after every call
//! (after `cudaDeviceSynchronize`), workspaces are poisoned with
//! `cudaMemset`, and the checked setter `__sdfgc_set_workspace_GPU_Global`
//! (when exported) must refuse host memory.
//!
//! With [`RunOptions::sanitize`] the driver is built with AddressSanitizer
//! and UndefinedBehaviorSanitizer (the library must be built with the same
//! `-fsanitize=address,undefined` flags), every buffer it hands to the library
//! is exactly as large as the case says (the rounding slack of allocations
//! is poisoned), and any sanitizer report fails the run with the report in
//! [`RunReport::message`].
//!
//! Differences from `run_case.py` (all stricter): the program is called
//! [`RunOptions::repeat`] times on the *same* argument buffers, which are
//! re-filled with the original inputs before every call, and the outputs are
//! checked after every call (so state carried between calls is caught); float
//! comparisons are done in `double` even for `float32` outputs.

use serde_json::Value;
use std::collections::hash_map::DefaultHasher;
use std::fmt::Write as _;
use std::fs;
use std::hash::{Hash, Hasher};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// How to run a library on a case.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// ABI key in `case.json["abi"]`, e.g. `"program.sdfg"`,
    /// `"program.external.sdfg"`, `"cpu.sdfg"`. Empty: the case's
    /// `default_variant`, else `"program.sdfg"` (as `run_case.py`).
    pub variant: String,
    /// Fill every workspace with 0xFF bytes before every program call
    /// (NaN for floats, -1 for integers); results must not change.
    pub poison: bool,
    /// Allocate exactly the number of bytes the library's size query reports,
    /// followed by a 256-byte guard zone of 0xA5 bytes that is checked after
    /// `__dace_exit_*`; a write into it fails the run (`workspace_overrun`).
    /// Without it the workspace is rounded up to a multiple of 64 bytes and
    /// not guarded.
    pub workspace_exact: bool,
    /// Number of program calls (at least 1; default 2). Before every call the
    /// argument buffers (the same pointers every time) are re-filled with the
    /// original inputs, so every call must produce the reference outputs;
    /// they are checked after every call.
    pub repeat: u32,
    /// Count heap allocations (malloc family and every `operator new`) made
    /// during the last program call; at least two calls are made so the last
    /// one follows a warm-up. Result in [`RunReport::allocs_per_call`].
    pub count_allocs: bool,
    /// Build the driver with `-fsanitize=address,undefined` and run it with
    /// `ASAN_OPTIONS` / `UBSAN_OPTIONS` that stop at the first error (see
    /// [`SANITIZER_ENV`]); the library must be built with the same flags.
    /// Argument buffers and workspaces are poisoned past their exact size
    /// (ASan manual poisoning), so an access even one byte past an array or
    /// past the reported workspace size is reported; with `workspace_exact`
    /// the 256-byte guard zone is poisoned too (and still checked after
    /// `__dace_exit_*`). A sanitizer report fails the run, its excerpt in
    /// the message. Cannot be combined with `count_allocs` (ASan owns the
    /// allocator): `run_case` returns `Err`.
    pub sanitize: bool,
    /// Build the driver with `-fsanitize=thread` and run it with
    /// [`TSAN_ENV`] (stop at the first report); the library must be built
    /// with `-fsanitize=thread` against `tests/tsan/omp_shim.cpp` instead of
    /// libgomp (see [`TSAN_FLAGS`]). A ThreadSanitizer report fails the run,
    /// its excerpt in the message. Cannot be combined with `sanitize` or
    /// `count_allocs` (one sanitizer runtime per process).
    pub tsan: bool,
    /// The library was built against the CPU emulation of the GPU runtime
    /// (tests/gpu_emu): device memory is host memory, so GPU_Global
    /// workspaces are allocated like CPU ones.
    pub emulated_device: bool,
    /// Drive the library as on a real NVIDIA GPU (see the module
    /// documentation). Incompatible with `sanitize` and `count_allocs`.
    pub real_device: Option<DeviceDriver>,
    /// With `real_device`: array arguments (by name) put in device memory
    /// besides those the variant's SDFG stores in `GPU_Global` (a CPU SDFG
    /// compiled with `--offload=device-args`).
    pub device_arrays: Vec<String>,
}

/// How a real-device driver is built.
#[derive(Debug, Clone)]
pub enum DeviceDriver {
    /// With this nvcc, against the CUDA runtime (a GPU is needed to run it).
    Nvcc(PathBuf),
    /// With g++ against the CPU emulation of the runtime in this include
    /// directory (tests/gpu_emu), for a library built against the same
    /// emulation: the driver's device path runs without a GPU.
    Emulated(PathBuf),
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            variant: String::new(),
            poison: false,
            workspace_exact: false,
            repeat: 2,
            count_allocs: false,
            sanitize: false,
            tsan: false,
            emulated_device: false,
            real_device: None,
            device_arrays: Vec::new(),
        }
    }
}

impl RunOptions {
    /// Default options for the given ABI variant key.
    pub fn variant(variant: &str) -> Self {
        RunOptions {
            variant: variant.to_string(),
            ..RunOptions::default()
        }
    }
}

/// What happened when the library ran.
#[derive(Debug, Clone)]
pub struct RunReport {
    /// All outputs matched after every call, `__dace_exit_*` returned 0 and
    /// no guard zone was touched.
    pub ok: bool,
    /// Human-readable summary: one line per output of the last call (plus
    /// lines for failing outputs of earlier calls) with the number of bad
    /// elements, max abs/rel error and the first bad index with both values;
    /// then any error (init NULL, exit code, workspace overrun, crash with
    /// the stage it happened in and the driver's stderr).
    pub message: String,
    /// Heap allocations made by the last program call, when
    /// [`RunOptions::count_allocs`] was set and the driver got that far.
    pub allocs_per_call: Option<u64>,
    /// `(storage, bytes the library's size query returned)` for every
    /// workspace that was set up, in setup order.
    pub workspace_bytes: Vec<(String, u64)>,
}

/// Runs `lib` (a shared library following DaCe's C ABI) on the case in
/// `case_dir` as described by `opts`.
///
/// `Err` means the harness could not do its job (unreadable or inconsistent
/// case.json, unknown variant, missing symbol value, missing library file,
/// driver build failure, timeout); everything the library does wrong,
/// including crashing or missing exports, is an `Ok` report with `ok: false`.
pub fn run_case(case_dir: &Path, lib: &Path, opts: &RunOptions) -> Result<RunReport, String> {
    if opts.tsan && (opts.sanitize || opts.count_allocs) {
        return Err("RunOptions: tsan cannot be combined with sanitize or count_allocs".into());
    }
    if opts.sanitize && opts.count_allocs {
        return Err("RunOptions: count_allocs cannot be combined with sanitize \
                    (AddressSanitizer replaces the allocator the counter hooks)"
            .into());
    }
    let driver = build_case_driver(case_dir, opts)?;
    let lib = lib
        .canonicalize()
        .map_err(|e| format!("library {}: {e}", lib.display()))?;
    let run = run_driver(&driver, &lib, opts.sanitize, opts.tsan)?;
    Ok(parse_driver_output(&run, &driver))
}

/// Emits and builds (or reuses) the driver of `case_dir` for `opts`, without
/// running it; returns the executable.
pub fn build_case_driver(case_dir: &Path, opts: &RunOptions) -> Result<PathBuf, String> {
    if opts.real_device.is_some() && (opts.sanitize || opts.count_allocs) {
        return Err(
            "RunOptions: real_device cannot be combined with sanitize or count_allocs".into(),
        );
    }
    let case = Case::load(case_dir)?;
    let abi = case.abi(&opts.variant)?;
    let device = if opts.real_device.is_some() {
        device_args(case_dir, &case, &abi, opts)?
    } else {
        Vec::new()
    };
    let source = emit_driver(&case, &abi, opts, &device)?;
    build_driver(&source, opts.sanitize, opts.tsan, opts.real_device.as_ref())
}

/// Indices (into the case's args) of the program's array arguments that the
/// variant's SDFG stores in `GPU_Global` (read from its top-level `_arrays`),
/// and of device scalar pointers.
fn device_args(
    case_dir: &Path,
    case: &Case,
    abi: &Abi,
    opts: &RunOptions,
) -> Result<Vec<usize>, String> {
    let variant = if opts.variant.is_empty() {
        case.default_variant.as_str()
    } else {
        opts.variant.as_str()
    };
    let path = case_dir.join(variant);
    let text = fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let json: Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let arrays = &json["attributes"]["_arrays"];
    let mut out = Vec::new();
    for p in &abi.program.params {
        let on_device = match p.kind {
            ParamKind::ScalarGpuPointer => true,
            ParamKind::Array => {
                arrays[&p.name]["attributes"]["storage"].as_str() == Some("GPU_Global")
                    || opts.device_arrays.contains(&p.name)
            }
            _ => false,
        };
        if on_device {
            out.push(case.arg(&p.name)?.0);
        }
    }
    Ok(out)
}

/// Environment of a sanitized driver run: stop at the first error with a
/// stack trace. Leak checking is on: the driver frees everything it
/// allocated before it returns, so a leak is the library's (a transient not
/// freed, state not released by `__dace_exit_*`).
pub const SANITIZER_ENV: [(&str, &str); 2] = [
    (
        "ASAN_OPTIONS",
        "halt_on_error=1:abort_on_error=0:detect_leaks=1:exitcode=86:\
         allocator_may_return_null=0:print_summary=1",
    ),
    (
        "UBSAN_OPTIONS",
        "halt_on_error=1:print_stacktrace=1:exitcode=87:print_summary=1",
    ),
];

// ---------------------------------------------------------------------------
// case.json model
// ---------------------------------------------------------------------------

/// Element type of an argument (`dtype` in case.json).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Dtype {
    F64,
    F32,
    I64,
    I32,
    I16,
    I8,
    U64,
    U32,
    U16,
    U8,
    Bool,
    /// IEEE binary16, loaded as its bits (`uint16_t`), compared as values.
    F16,
}

impl Dtype {
    fn parse(s: &str) -> Result<Dtype, String> {
        Ok(match s {
            "float64" => Dtype::F64,
            "float32" => Dtype::F32,
            "int64" => Dtype::I64,
            "int32" => Dtype::I32,
            "int16" => Dtype::I16,
            "int8" => Dtype::I8,
            "uint64" => Dtype::U64,
            "uint32" => Dtype::U32,
            "uint16" => Dtype::U16,
            "uint8" => Dtype::U8,
            "bool" => Dtype::Bool,
            "float16" => Dtype::F16,
            _ => return Err(format!("unsupported dtype {s:?}")),
        })
    }

    /// The C++ type the driver uses for one element.
    fn ctype(self) -> &'static str {
        match self {
            Dtype::F64 => "double",
            Dtype::F32 => "float",
            Dtype::I64 => "int64_t",
            Dtype::I32 => "int32_t",
            Dtype::I16 => "int16_t",
            Dtype::I8 => "int8_t",
            Dtype::U64 => "uint64_t",
            Dtype::U32 => "uint32_t",
            Dtype::U16 | Dtype::F16 => "uint16_t",
            Dtype::U8 => "uint8_t",
            Dtype::Bool => "bool",
        }
    }

    fn size(self) -> u64 {
        match self {
            Dtype::F64 | Dtype::I64 | Dtype::U64 => 8,
            Dtype::F32 | Dtype::I32 | Dtype::U32 => 4,
            Dtype::I16 | Dtype::U16 | Dtype::F16 => 2,
            Dtype::I8 | Dtype::U8 | Dtype::Bool => 1,
        }
    }

    /// Comparison class used by the driver (`harness::Cls`) and the element
    /// type it loads (bools are compared as normalised bytes).
    fn compare_class(self) -> (&'static str, &'static str) {
        match self {
            Dtype::F64 | Dtype::F32 => ("Cls::Float", self.ctype()),
            Dtype::Bool => ("Cls::Bool", "uint8_t"),
            Dtype::F16 => ("Cls::Half", "uint16_t"),
            _ => ("Cls::Int", self.ctype()),
        }
    }
}

/// One entry of `case.json["args"]`.
#[derive(Debug)]
struct Arg {
    name: String,
    dtype: Dtype,
    shape: Vec<i64>,
    /// Element strides of the logical view (C order when case.json has none).
    strides: Vec<i64>,
    /// Elements in the buffer (and its files): `span_elements`, else the
    /// product of the shape (1 for scalars).
    span_elements: u64,
    is_scalar: bool,
    /// `complex_dtype` (`complex64` / `complex128`): the data are interleaved
    /// (real, imag) pairs of `dtype`, the trailing dimension of 2 in `shape`;
    /// a complex scalar is one pair, passed by value as `std::complex`.
    complex: Option<&'static str>,
    /// Initial contents; `None` for output-only arrays (zero-filled).
    input_file: Option<PathBuf>,
    /// A structure argument (`kind: "struct"`): its C struct.
    structure: Option<StructArg>,
}

/// The C struct of a structure argument.
#[derive(Debug)]
struct StructArg {
    /// The struct type's name (for messages; the driver declares its own).
    ctype: String,
    /// `(field, argument it holds)` in the struct's order.
    members: Vec<(String, String)>,
}

impl Arg {
    fn bytes(&self) -> u64 {
        self.span_elements * self.dtype.size()
    }
}

/// One entry of `case.json["outputs"]`.
#[derive(Debug)]
struct Output {
    name: String,
    file: PathBuf,
    rtol: f64,
    atol: f64,
}

/// The parsed case.json.
#[derive(Debug)]
struct Case {
    name: String,
    symbols: serde_json::Map<String, Value>,
    args: Vec<Arg>,
    outputs: Vec<Output>,
    default_variant: String,
    abi: serde_json::Map<String, Value>,
}

impl Case {
    fn load(dir: &Path) -> Result<Case, String> {
        let path = dir.join("case.json");
        let text = fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let json: Value =
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        let dir = dir
            .canonicalize()
            .map_err(|e| format!("{}: {e}", dir.display()))?;
        let ctx = |e: String| format!("{}: {e}", path.display());
        let args = get_array(&json, "args")
            .map_err(ctx)?
            .iter()
            .map(|a| parse_arg(a, &dir))
            .collect::<Result<Vec<_>, _>>()
            .map_err(ctx)?;
        let outputs = get_array(&json, "outputs")
            .map_err(ctx)?
            .iter()
            .map(|o| parse_output(o, &dir))
            .collect::<Result<Vec<_>, _>>()
            .map_err(ctx)?;
        check_structs(&args, &outputs).map_err(ctx)?;
        Ok(Case {
            name: get_str(&json, "name").map_err(ctx)?.to_string(),
            symbols: json
                .get("symbols")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default(),
            args,
            outputs,
            default_variant: json
                .get("default_variant")
                .and_then(Value::as_str)
                .unwrap_or("program.sdfg")
                .to_string(),
            abi: json
                .get("abi")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default(),
        })
    }

    fn arg(&self, name: &str) -> Result<(usize, &Arg), String> {
        self.args
            .iter()
            .enumerate()
            .find(|(_, a)| a.name == name)
            .ok_or_else(|| format!("case {}: no argument named {name:?}", self.name))
    }

    /// The structure argument and field holding the scalar argument `i`
    /// (a scalar member), if any.
    fn scalar_member(&self, i: usize) -> Option<(usize, &str)> {
        if !self.args[i].is_scalar {
            return None;
        }
        self.args.iter().enumerate().find_map(|(si, a)| {
            let st = a.structure.as_ref()?;
            st.members
                .iter()
                .find(|(_, arg)| *arg == self.args[i].name)
                .map(|(field, _)| (si, field.as_str()))
        })
    }

    /// The C++ expression of the bytes of argument `i` the library sees: its
    /// buffer, or a scalar member's field in its struct.
    fn data_ptr(&self, i: usize) -> String {
        match self.scalar_member(i) {
            Some((si, field)) => format!(
                "reinterpret_cast<unsigned char*>(&reinterpret_cast<harness_struct_{si}*>(args[{si}].data)->{field})"
            ),
            None => format!("args[{i}].data"),
        }
    }

    /// The ABI of `variant` (empty: the default variant), with the
    /// auto-detected workspaces added.
    fn abi(&self, variant: &str) -> Result<Abi, String> {
        let variant = if variant.is_empty() {
            self.default_variant.as_str()
        } else {
            variant
        };
        let entry = self.abi.get(variant).ok_or_else(|| {
            let known: Vec<&String> = self.abi.keys().collect();
            format!(
                "case {}: variant {variant} has no ABI entry (available: {known:?})",
                self.name
            )
        })?;
        parse_abi(entry).map_err(|e| format!("case {} abi[{variant}]: {e}", self.name))
    }
}

/// Every member of a structure argument names another argument; a scalar is
/// the member of one structure at most (its value lives in that struct);
/// no output names a structure.
fn check_structs(args: &[Arg], outputs: &[Output]) -> Result<(), String> {
    let mut scalar_owner = std::collections::BTreeMap::new();
    for a in args {
        let Some(st) = &a.structure else { continue };
        for (field, arg) in &st.members {
            let m = args.iter().find(|x| &x.name == arg).ok_or_else(|| {
                format!(
                    "struct arg {}: member {field} names no argument {arg:?}",
                    a.name
                )
            })?;
            if m.is_scalar
                && let Some(other) = scalar_owner.insert(arg.clone(), a.name.clone())
            {
                return Err(format!(
                    "scalar arg {arg} is a member of both {other} and {}",
                    a.name
                ));
            }
        }
    }
    for o in outputs {
        if args
            .iter()
            .any(|a| a.name == o.name && a.structure.is_some())
        {
            return Err(format!(
                "output {} is a structure (name its members instead)",
                o.name
            ));
        }
    }
    Ok(())
}

fn get_array<'a>(v: &'a Value, key: &str) -> Result<&'a Vec<Value>, String> {
    v.get(key)
        .and_then(Value::as_array)
        .ok_or_else(|| format!("missing array {key:?}"))
}

fn get_str<'a>(v: &'a Value, key: &str) -> Result<&'a str, String> {
    v.get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| format!("missing string {key:?} in {v}"))
}

fn get_f64(v: &Value, key: &str) -> Result<f64, String> {
    v.get(key)
        .and_then(Value::as_f64)
        .ok_or_else(|| format!("missing number {key:?} in {v}"))
}

fn get_ints(v: &Value, key: &str) -> Result<Option<Vec<i64>>, String> {
    match v.get(key) {
        None => Ok(None),
        Some(Value::Array(items)) => items
            .iter()
            .map(|x| {
                x.as_i64()
                    .ok_or_else(|| format!("{key}: {x} is no integer"))
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some),
        Some(other) => Err(format!("{key}: expected an integer list, got {other}")),
    }
}

/// C-order element strides of `shape`.
fn c_order_strides(shape: &[i64]) -> Vec<i64> {
    let mut strides = vec![1; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * shape[d + 1];
    }
    strides
}

fn parse_arg(a: &Value, dir: &Path) -> Result<Arg, String> {
    let name = get_str(a, "name")?.to_string();
    if get_str(a, "kind")? == "struct" {
        return parse_struct_arg(a, name);
    }
    let dtype = Dtype::parse(get_str(a, "dtype")?)?;
    let shape = get_ints(a, "shape")?.unwrap_or_default();
    let is_scalar = get_str(a, "kind")? == "scalar";
    let complex = complex_ctype(a.get("complex_dtype").and_then(Value::as_str))
        .map_err(|e| format!("arg {name}: {e}"))?;
    let role = get_str(a, "role")?;
    let file = a.get("file").and_then(Value::as_str).map(|f| dir.join(f));
    let count: i64 = shape.iter().product();
    let (strides, span_elements) = match get_ints(a, "strides")? {
        Some(strides) => {
            let span = a
                .get("span_elements")
                .and_then(Value::as_u64)
                .ok_or_else(|| format!("arg {name}: strides without span_elements"))?;
            (strides, span)
        }
        None => (c_order_strides(&shape), count.max(0) as u64),
    };
    if strides.len() != shape.len() {
        return Err(format!("arg {name}: strides and shape differ in rank"));
    }
    let input_file = if is_scalar || role != "out" {
        Some(file.ok_or_else(|| format!("arg {name}: no file"))?)
    } else {
        None
    };
    Ok(Arg {
        name,
        dtype,
        shape,
        strides,
        span_elements: match (is_scalar, complex) {
            (true, Some(_)) => 2,
            (true, None) => 1,
            _ => span_elements,
        },
        is_scalar,
        complex,
        input_file,
        structure: None,
    })
}

/// A `kind: "struct"` argument: `ctype` and `members` (`name`, `arg`).
fn parse_struct_arg(a: &Value, name: String) -> Result<Arg, String> {
    let members = get_array(a, "members")
        .map_err(|e| format!("struct arg {name}: {e}"))?
        .iter()
        .map(|m| {
            let field = get_str(m, "name")?;
            let valid = field.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                && field.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !valid {
                return Err(format!("member {field:?} is no C identifier"));
            }
            Ok((field.to_string(), get_str(m, "arg")?.to_string()))
        })
        .collect::<Result<Vec<_>, String>>()
        .map_err(|e| format!("struct arg {name}: {e}"))?;
    Ok(Arg {
        structure: Some(StructArg {
            ctype: get_str(a, "ctype")?.to_string(),
            members,
        }),
        name,
        dtype: Dtype::U8,
        shape: Vec::new(),
        strides: Vec::new(),
        span_elements: 0,
        is_scalar: false,
        complex: None,
        input_file: None,
    })
}

/// The C++ type of a `complex_dtype` (None for real data).
fn complex_ctype(dtype: Option<&str>) -> Result<Option<&'static str>, String> {
    Ok(match dtype {
        None => None,
        Some("complex128") => Some("std::complex<double>"),
        Some("complex64") => Some("std::complex<float>"),
        Some(other) => return Err(format!("unsupported complex_dtype {other:?}")),
    })
}

fn parse_output(o: &Value, dir: &Path) -> Result<Output, String> {
    Ok(Output {
        name: get_str(o, "name")?.to_string(),
        file: dir.join(get_str(o, "file")?),
        rtol: get_f64(o, "rtol")?,
        atol: get_f64(o, "atol")?,
    })
}

// ---------------------------------------------------------------------------
// ABI model
// ---------------------------------------------------------------------------

/// What a parameter of an ABI function is (`kind` in case.json).
#[derive(Debug, Clone, Copy, PartialEq)]
enum ParamKind {
    State,
    Workspace,
    Symbol,
    Array,
    Scalar,
    ScalarGpuPointer,
    /// A pointer to the C struct of a structure argument.
    Struct,
}

#[derive(Debug, Clone)]
struct Param {
    name: String,
    kind: ParamKind,
    /// C++ type of the parameter in the driver's function-pointer type.
    ctype: &'static str,
    /// The C type DaCe's generated code declares (case.json `ctype`).
    dace_ctype: String,
}

#[derive(Debug, Clone)]
struct Func {
    symbol: String,
    params: Vec<Param>,
}

/// One workspace: size query and set function of a storage.
#[derive(Debug, Clone)]
struct External {
    storage: String,
    size: Func,
    set: Func,
}

#[derive(Debug)]
struct Abi {
    init: Func,
    program: Func,
    exit: Func,
    externals: Vec<External>,
}

/// Storages whose size function is looked up even when the variant lists
/// none (same list as run_case.py).
const AUTO_STORAGES: [&str; 4] = ["CPU_Heap", "CPU_Pinned", "CPU_ThreadLocal", "GPU_Global"];

fn parse_abi(entry: &Value) -> Result<Abi, String> {
    let func = |key: &str| parse_func(entry.get(key).ok_or_else(|| format!("no {key:?}"))?);
    let init = func("init")?;
    let mut externals = Vec::new();
    if let Some(list) = entry.get("external_memory").and_then(Value::as_array) {
        for e in list {
            externals.push(External {
                storage: get_str(e, "storage")?.to_string(),
                size: parse_func(e.get("size").ok_or("external_memory entry without size")?)?,
                set: parse_func(e.get("set").ok_or("external_memory entry without set")?)?,
            });
        }
    }
    for storage in AUTO_STORAGES {
        if !externals.iter().any(|e| e.storage == storage) {
            externals.push(auto_external(storage, &init));
        }
    }
    Ok(Abi {
        program: func("program")?,
        exit: func("exit")?,
        init,
        externals,
    })
}

/// The workspace functions of a storage the variant does not list: the
/// state pointer (and for `set` the buffer) followed by the init params.
fn auto_external(storage: &str, init: &Func) -> External {
    let state = Param {
        name: "__state".into(),
        kind: ParamKind::State,
        ctype: "void*",
        dace_ctype: String::new(),
    };
    let ptr = Param {
        name: "ptr".into(),
        kind: ParamKind::Workspace,
        ctype: "void*",
        dace_ctype: String::new(),
    };
    let with = |head: Vec<Param>| head.into_iter().chain(init.params.clone()).collect();
    External {
        storage: storage.to_string(),
        size: Func {
            symbol: format!("__dace_get_external_memory_size_{storage}"),
            params: with(vec![state.clone()]),
        },
        set: Func {
            symbol: format!("__dace_set_external_memory_{storage}"),
            params: with(vec![state, ptr]),
        },
    }
}

fn parse_func(f: &Value) -> Result<Func, String> {
    Ok(Func {
        symbol: get_str(f, "symbol")?.to_string(),
        params: get_array(f, "params")?
            .iter()
            .map(parse_param)
            .collect::<Result<_, _>>()?,
    })
}

fn parse_param(p: &Value) -> Result<Param, String> {
    let name = get_str(p, "name")?.to_string();
    let kind = match get_str(p, "kind")? {
        "state" => ParamKind::State,
        "workspace" => ParamKind::Workspace,
        "symbol" => ParamKind::Symbol,
        "array" => ParamKind::Array,
        "scalar" => ParamKind::Scalar,
        "scalar_gpu_pointer" => ParamKind::ScalarGpuPointer,
        "struct" => ParamKind::Struct,
        other => return Err(format!("param {name}: unknown kind {other:?}")),
    };
    let ctype = param_ctype(
        kind,
        get_str(p, "ctype")?,
        p.get("dtype").and_then(Value::as_str),
    )
    .map_err(|e| format!("param {name}: {e}"))?;
    Ok(Param {
        name,
        kind,
        ctype,
        dace_ctype: c_spelling(get_str(p, "ctype")?),
    })
}

/// DaCe's C type as sdfgc spells it: `dace::uint` (numpy's `uintc`, DaCe's
/// `uint32` on Linux) is a typedef of `unsigned int`, the same ABI.
fn c_spelling(dace_ctype: &str) -> String {
    match dace_ctype.strip_prefix("dace::uint") {
        Some(rest) if rest.is_empty() || rest.starts_with(' ') => format!("unsigned int{rest}"),
        _ => dace_ctype.to_string(),
    }
}

/// The C++ type a parameter is passed as: pointers (state, workspace, arrays)
/// as `void*`; values with the type of their `dtype`, else of their `ctype`
/// (same precedence as run_case.py's `param_ctype`).
fn param_ctype(kind: ParamKind, ctype: &str, dtype: Option<&str>) -> Result<&'static str, String> {
    if ctype.trim_end().ends_with('*')
        || matches!(
            kind,
            ParamKind::State
                | ParamKind::Workspace
                | ParamKind::Array
                | ParamKind::ScalarGpuPointer
                | ParamKind::Struct
        )
    {
        return Ok("void*");
    }
    if let Some(dt) = dtype.and_then(|d| Dtype::parse(d).ok()) {
        return Ok(dt.ctype());
    }
    if let Some(ct) = complex_ctype(dtype.filter(|d| d.starts_with("complex")))? {
        return Ok(ct);
    }
    Ok(match ctype.trim() {
        "double" => "double",
        "float" => "float",
        "int" => "int",
        "unsigned int" | "dace::uint" => "unsigned int",
        "long long" => "long long",
        "long" => "long",
        "short" => "short",
        "char" => "char",
        "signed char" => "signed char",
        "unsigned char" => "unsigned char",
        "bool" => "bool",
        "size_t" => "size_t",
        "int64_t" => "int64_t",
        "int32_t" => "int32_t",
        "int16_t" => "int16_t",
        "int8_t" => "int8_t",
        "uint64_t" => "uint64_t",
        "uint32_t" => "uint32_t",
        "uint16_t" => "uint16_t",
        "uint8_t" => "uint8_t",
        other => return Err(format!("unsupported C type {other:?}")),
    })
}

// ---------------------------------------------------------------------------
// Driver emission
// ---------------------------------------------------------------------------

/// Fixed part of the driver: allocation counting hooks and runtime helpers.
const DRIVER_PRELUDE: &str = r#"// Generated by tests/common/harness.rs (sdfgc run harness). Usage: driver LIB.so
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <complex>
#include <string>
#include <vector>
#include <dlfcn.h>
#ifdef HARNESS_SANITIZE
#include <sanitizer/asan_interface.h>
// Marks [p, p + n) unaddressable / addressable again for ASan.
#define HARNESS_POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define HARNESS_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define HARNESS_POISON(p, n) ((void)(p), (void)(n))
#define HARNESS_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

#ifdef HARNESS_COUNT_ALLOCS
// Allocation counting: these definitions interpose glibc's allocator and the
// C++ operators for the driver and (thanks to -rdynamic) for the dlopen'ed
// library; they forward to glibc's __libc_* entry points and count
// allocations while g_counting is set.
extern "C" {
void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void __libc_free(void*);
void* __libc_memalign(size_t, size_t);
}
static std::atomic<bool> g_counting{false};
static std::atomic<unsigned long long> g_allocs{0};
static inline void note_alloc() {
  if (g_counting.load(std::memory_order_relaxed)) g_allocs.fetch_add(1, std::memory_order_relaxed);
}
extern "C" {
void* malloc(size_t n) noexcept { note_alloc(); return __libc_malloc(n); }
void* calloc(size_t a, size_t b) noexcept { note_alloc(); return __libc_calloc(a, b); }
void* realloc(void* p, size_t n) noexcept { note_alloc(); return __libc_realloc(p, n); }
void free(void* p) noexcept { __libc_free(p); }
void* aligned_alloc(size_t al, size_t n) noexcept { note_alloc(); return __libc_memalign(al, n); }
void* memalign(size_t al, size_t n) noexcept { note_alloc(); return __libc_memalign(al, n); }
void* valloc(size_t n) noexcept { note_alloc(); return __libc_memalign(4096, n); }
int posix_memalign(void** out, size_t al, size_t n) noexcept {
  note_alloc();
  if (al < sizeof(void*) || (al & (al - 1)) != 0) return EINVAL;
  void* p = __libc_memalign(al, n);
  if (!p) return ENOMEM;
  *out = p;
  return 0;
}
}
static void* counted_new(size_t n, size_t al, bool nothrow) {
  note_alloc();
  if (n == 0) n = 1;
  void* p = al ? __libc_memalign(al, n) : __libc_malloc(n);
  if (!p && !nothrow) throw std::bad_alloc();
  return p;
}
void* operator new(size_t n) { return counted_new(n, 0, false); }
void* operator new[](size_t n) { return counted_new(n, 0, false); }
void* operator new(size_t n, const std::nothrow_t&) noexcept { return counted_new(n, 0, true); }
void* operator new[](size_t n, const std::nothrow_t&) noexcept { return counted_new(n, 0, true); }
void* operator new(size_t n, std::align_val_t al) { return counted_new(n, (size_t)al, false); }
void* operator new[](size_t n, std::align_val_t al) { return counted_new(n, (size_t)al, false); }
void* operator new(size_t n, std::align_val_t al, const std::nothrow_t&) noexcept { return counted_new(n, (size_t)al, true); }
void* operator new[](size_t n, std::align_val_t al, const std::nothrow_t&) noexcept { return counted_new(n, (size_t)al, true); }
void operator delete(void* p) noexcept { __libc_free(p); }
void operator delete[](void* p) noexcept { __libc_free(p); }
void operator delete(void* p, size_t) noexcept { __libc_free(p); }
void operator delete[](void* p, size_t) noexcept { __libc_free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { __libc_free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { __libc_free(p); }
void operator delete(void* p, std::align_val_t) noexcept { __libc_free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { __libc_free(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { __libc_free(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { __libc_free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { __libc_free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { __libc_free(p); }
#endif

namespace harness {

// Prints "RESULT fail <message>" and exits with status 1.
[[noreturn]] static void fail(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::printf("RESULT fail ");
  std::vprintf(fmt, ap);
  std::printf("\n");
  va_end(ap);
  std::fflush(stdout);
  std::_Exit(1);
}

// Progress marker, so a crash can be attributed to a stage.
static void stage(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::printf("STAGE ");
  std::vprintf(fmt, ap);
  std::printf("\n");
  va_end(ap);
  std::fflush(stdout);
}

static void* need_symbol(void* lib, const char* name) {
  dlerror();
  void* p = dlsym(lib, name);
  if (!p) fail("missing export %s", name);
  return p;
}

// 64-byte aligned, zero-filled, rounded up to a multiple of 64 bytes. Under
// sanitizers the rounding slack after `bytes` is poisoned, so the buffer is
// exactly `bytes` long for ASan.
static unsigned char* alloc_zeroed(size_t bytes) {
  size_t n = ((bytes ? bytes : 1) + 63) / 64 * 64;
  void* p = nullptr;
  if (posix_memalign(&p, 64, n) != 0 || !p) fail("out of memory (%zu bytes)", n);
  std::memset(p, 0, n);
  HARNESS_POISON(static_cast<unsigned char*>(p) + bytes, n - bytes);
  return static_cast<unsigned char*>(p);
}

// Reads exactly `bytes` bytes; the file must have that size (at least that
// size when `allow_longer`, used for scalars: run_case.py takes element 0).
static void read_file(const char* path, unsigned char* dst, size_t bytes, bool allow_longer) {
  FILE* f = std::fopen(path, "rb");
  if (!f) fail("cannot open %s", path);
  std::fseek(f, 0, SEEK_END);
  long len = std::ftell(f);
  std::fseek(f, 0, SEEK_SET);
  if (len < 0 || (size_t)len < bytes || (!allow_longer && (size_t)len != bytes))
    fail("%s has %ld bytes, expected %zu", path, len, bytes);
  if (bytes && std::fread(dst, 1, bytes, f) != bytes) fail("cannot read %s", path);
  std::fclose(f);
}

// An argument buffer (passed to the program) and its original contents.
struct Arg {
  unsigned char* data;
  std::vector<unsigned char> initial;
};

static Arg make_arg(size_t bytes, const char* file, bool allow_longer) {
  Arg a;
  a.data = alloc_zeroed(bytes);
  a.initial.assign(bytes, 0);
  if (file) read_file(file, a.initial.data(), bytes, allow_longer);
  if (bytes) std::memcpy(a.data, a.initial.data(), bytes);
  return a;
}

static std::vector<unsigned char> load_reference(const char* file, size_t bytes) {
  std::vector<unsigned char> v(bytes ? bytes : 1, 0);
  read_file(file, v.data(), bytes, false);
  return v;
}

static void restore(Arg& a) {
  if (!a.initial.empty()) std::memcpy(a.data, a.initial.data(), a.initial.size());
}

struct Workspace {
  const char* storage;
  size_t bytes;  // usable by the library
  size_t guard;  // 0xA5 bytes right after them
  unsigned char* base;
};

// A workspace of its own allocation. With `exact` the library gets exactly
// `bytes` bytes followed by the guard zone; under sanitizers the guard zone
// is poisoned (any access to it is reported at once, reads included) and so
// is everything after it up to ASan's own redzone.
static Workspace make_workspace(const char* storage, size_t bytes, bool exact) {
  Workspace w{storage, bytes, exact ? (size_t)256 : 0, nullptr};
  w.base = alloc_zeroed(bytes + w.guard);
  if (w.guard) std::memset(w.base + bytes, 0xA5, w.guard);
  HARNESS_POISON(w.base + bytes, w.guard);
  std::printf("WORKSPACE %s %zu\n", storage, bytes);
  return w;
}

static void poison(Workspace& w) { std::memset(w.base, 0xFF, w.bytes); }

// Bytes into the guard zone up to the last modified one (0: untouched).
static size_t overrun_bytes(const Workspace& w) {
  HARNESS_UNPOISON(w.base + w.bytes, w.guard);
  size_t last = 0;
  for (size_t i = 0; i < w.guard; ++i)
    if (w.base[w.bytes + i] != 0xA5) last = i + 1;
  return last;
}

enum class Cls { Float, Int, Bool, Half };

// The value of IEEE binary16 bits (NaNs of any sign or payload compare equal).
static double half_value(unsigned bits) {
  const int e = (bits >> 10) & 0x1f, m = bits & 0x3ff;
  const double v = e == 0 ? std::ldexp((double)m, -24)
                   : e == 31 ? (m ? NAN : INFINITY)
                             : std::ldexp((double)(m | 0x400), e - 25);
  return bits & 0x8000 ? -v : v;
}

static bool close_enough(double a, double b, double rtol, double atol) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  if (std::isinf(a) || std::isinf(b)) return a == b;
  return std::fabs(a - b) <= atol + rtol * std::fabs(b);
}

// Compares the logical (shape, strides) view of `got` with `ref` and prints
// one OUTPUT line when it fails or `print_ok` is set. Returns success.
template <class T>
static bool compare(const char* name, int call, bool print_ok, const unsigned char* got,
                    const unsigned char* ref, const std::vector<long long>& shape,
                    const std::vector<long long>& strides, double rtol, double atol, Cls cls) {
  size_t rank = shape.size();
  long long total = 1;
  for (long long s : shape) total *= s;
  if (total < 0) total = 0;
  std::vector<long long> idx(rank, 0);
  long long bad = 0;
  double max_abs = 0, max_rel = 0, bad_got = 0, bad_ref = 0;
  std::string first_bad;
  for (long long k = 0; k < total; ++k) {
    long long off = 0;
    for (size_t d = 0; d < rank; ++d) off += idx[d] * strides[d];
    T g, r;
    std::memcpy(&g, got + off * (long long)sizeof(T), sizeof(T));
    std::memcpy(&r, ref + off * (long long)sizeof(T), sizeof(T));
    double a, b;
    bool ok;
    if (cls == Cls::Bool) {
      a = g != 0;
      b = r != 0;
      ok = a == b;
    } else if (cls == Cls::Half) {
      a = half_value((unsigned)g);
      b = half_value((unsigned)r);
      ok = close_enough(a, b, rtol, atol);
    } else {
      a = (double)g;
      b = (double)r;
      ok = cls == Cls::Int ? g == r : close_enough(a, b, rtol, atol);
    }
    double diff = std::fabs(a - b);
    if (!std::isnan(diff)) {
      if (diff > max_abs) max_abs = diff;
      if (b != 0 && std::isfinite(b) && diff / std::fabs(b) > max_rel) max_rel = diff / std::fabs(b);
    }
    if (!ok) {
      if (bad == 0) {
        first_bad = "[";
        for (size_t d = 0; d < rank; ++d) first_bad += (d ? "," : "") + std::to_string(idx[d]);
        first_bad += "]";
        bad_got = a;
        bad_ref = b;
      }
      ++bad;
    }
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
  if (bad || print_ok) {
    std::printf("OUTPUT %s call=%d %s bad=%lld/%lld max_abs=%.3e max_rel=%.3e", name, call,
                bad ? "FAIL" : "ok", bad, total, max_abs, max_rel);
    if (bad) std::printf(" first_bad=%s got=%.17g ref=%.17g", first_bad.c_str(), bad_got, bad_ref);
    std::printf(" (rtol=%g atol=%g)\n", rtol, atol);
  }
  return bad == 0;
}

}  // namespace harness
"#;

/// Device helpers of a driver for a real GPU (after [`DRIVER_PRELUDE`]).
const DRIVER_CUDA: &str = r#"
#include <cuda_runtime.h>
namespace harness {

static void cuda_ok(cudaError_t e, const char* what) {
  if (e != cudaSuccess) fail("%s: %s", what, cudaGetErrorString(e));
}

// A device buffer with room for `bytes`, zero-filled.
static void* device_alloc(size_t bytes) {
  void* p = nullptr;
  cuda_ok(cudaMalloc(&p, bytes ? bytes : 1), "cudaMalloc");
  cuda_ok(cudaMemset(p, 0, bytes ? bytes : 1), "cudaMemset");
  return p;
}

// A GPU_Global workspace in device memory: `bytes` usable bytes, then (when
// `exact`) a 256-byte guard zone of 0xA5 bytes.
static Workspace make_device_workspace(const char* storage, size_t bytes, bool exact) {
  Workspace w{storage, bytes, exact ? (size_t)256 : 0, nullptr};
  w.base = static_cast<unsigned char*>(device_alloc(bytes + w.guard));
  if (w.guard) cuda_ok(cudaMemset(w.base + bytes, 0xA5, w.guard), "cudaMemset guard");
  std::printf("WORKSPACE %s %zu\n", storage, bytes);
  return w;
}

static bool on_device(const void* p) {
  cudaPointerAttributes a;
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged;
}

static void poison_any(Workspace& w) {
  if (on_device(w.base)) cuda_ok(cudaMemset(w.base, 0xFF, w.bytes), "cudaMemset poison");
  else poison(w);
}

static size_t overrun_bytes_any(const Workspace& w) {
  if (!on_device(w.base)) return overrun_bytes(w);
  std::vector<unsigned char> guard(w.guard);
  if (w.guard) cuda_ok(cudaMemcpy(guard.data(), w.base + w.bytes, w.guard, cudaMemcpyDeviceToHost), "read guard");
  size_t last = 0;
  for (size_t i = 0; i < w.guard; ++i)
    if (guard[i] != 0xA5) last = i + 1;
  return last;
}

static void free_any(Workspace& w) {
  if (on_device(w.base)) cuda_ok(cudaFree(w.base), "cudaFree workspace");
  else std::free(w.base);
}

// After a program call: wait for the device and report asynchronous errors.
static void sync_device(int call) {
  cudaError_t e = cudaDeviceSynchronize();
  if (e == cudaSuccess) e = cudaGetLastError();
  if (e != cudaSuccess) fail("call %d: the device reported %s", call, cudaGetErrorString(e));
}

}  // namespace harness
"#;

/// Emits the complete driver source for one case, variant and options.
fn emit_driver(
    case: &Case,
    abi: &Abi,
    opts: &RunOptions,
    device: &[usize],
) -> Result<String, String> {
    let real = opts.real_device.is_some();
    let calls = match (opts.repeat.max(1), opts.count_allocs) {
        (1, true) => 2,
        (n, _) => n,
    };
    let mut s = String::new();
    if opts.count_allocs {
        s.push_str("#define HARNESS_COUNT_ALLOCS 1\n");
    }
    if opts.sanitize {
        s.push_str("#define HARNESS_SANITIZE 1\n");
    }
    s.push_str(DRIVER_PRELUDE);
    emit_struct_types(&mut s, case);
    if real {
        s.push_str(DRIVER_CUDA);
    }
    s.push_str("\nint main(int argc, char** argv) {\n  using namespace harness;\n");
    s.push_str("  if (argc != 2) fail(\"usage: %s LIB.so\", argv[0]);\n");
    s.push_str("  stage(\"dlopen\");\n");
    s.push_str("  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);\n");
    s.push_str("  if (!lib) fail(\"dlopen: %s\", dlerror());\n");
    emit_fn_pointer(&mut s, "  ", "f_init", "void*", &abi.init, true);
    emit_fn_pointer(&mut s, "  ", "f_prog", "void", &abi.program, true);
    emit_fn_pointer(&mut s, "  ", "f_exit", "int", &abi.exit, true);
    emit_signature_check(&mut s, abi);
    emit_load_args(&mut s, case);
    emit_build_structs(&mut s, case);
    for &i in device {
        writeln!(
            s,
            "  void* dev_{i} = device_alloc({});  // {} in device memory",
            case.args[i].bytes(),
            case.args[i].name
        )
        .unwrap();
    }
    emit_load_references(&mut s, case)?;
    s.push_str("  stage(\"init\");\n");
    let init_args = call_args(case, &abi.init, None, device)?;
    writeln!(s, "  void* state = f_init({init_args});").unwrap();
    s.push_str("  if (!state) fail(\"__dace_init returned NULL\");\n");
    s.push_str("  stage(\"workspace\");\n  std::vector<Workspace> ws;\n");
    for ext in &abi.externals {
        emit_workspace(&mut s, case, ext, opts, device)?;
    }
    emit_call_loop(&mut s, case, abi, opts, calls, device)?;
    s.push_str("  stage(\"exit\");\n  int rc = f_exit(state);\n");
    s.push_str("  if (rc != 0) { std::printf(\"ERROR __dace_exit returned %d\\n\", rc); all_ok = false; }\n");
    let tail_start = s.len();
    s.push_str(concat!(
        "  for (auto& w : ws) {\n",
        "    size_t over = overrun_bytes(w);\n",
        "    if (over) {\n",
        "      std::printf(\"ERROR workspace_overrun %s: %zu bytes written past the %zu-byte workspace\\n\",\n",
        "                  w.storage, over, w.bytes);\n",
        "      all_ok = false;\n",
        "    }\n",
        "  }\n",
        "  // Free what the driver allocated, so that leak checking sees only the library's.\n",
        "  for (auto& a : args) std::free(a.data);\n",
        "  for (auto& w : ws) std::free(w.base);\n",
        "  std::printf(\"RESULT %s\\n\", all_ok ? \"ok\" : \"fail\");\n",
        "  std::fflush(stdout);\n",
        "  return all_ok ? 0 : 1;\n",
        "}\n",
    ));
    if real {
        // Device buffers: guard zones read back, cudaFree.
        let tail = s.split_off(tail_start);
        s.push_str(
            &tail
                .replace("overrun_bytes(w)", "overrun_bytes_any(w)")
                .replace("std::free(w.base)", "free_any(w)"),
        );
        for &i in device {
            let at = s.rfind("  std::printf(\"RESULT").unwrap();
            s.insert_str(
                at,
                &format!("  cuda_ok(cudaFree(dev_{i}), \"cudaFree argument\");\n"),
            );
        }
    }
    Ok(s)
}

/// Declares `var` as a pointer to `func` (looked up with dlsym; a missing
/// symbol fails the run when `required`, else leaves `var` null), indented
/// by `indent`.
fn emit_fn_pointer(
    s: &mut String,
    indent: &str,
    var: &str,
    ret: &str,
    func: &Func,
    required: bool,
) {
    let params: Vec<&str> = func.params.iter().map(|p| p.ctype).collect();
    let lookup = if required {
        format!("need_symbol(lib, {})", c_string(&func.symbol))
    } else {
        format!("dlsym(lib, {})", c_string(&func.symbol))
    };
    writeln!(
        s,
        "{indent}auto {var} = reinterpret_cast<{ret} (*)({})>({lookup});",
        params.join(", ")
    )
    .unwrap();
}

/// DaCe's parameter lists (case.json) in the form of sdfgc's
/// `__sdfgc_signature_<name>()`: `{"program":[[name,ctype],...],"init":[...]}`.
fn expected_signature(abi: &Abi) -> String {
    let list = |f: &Func| {
        f.params
            .iter()
            .filter(|p| p.kind != ParamKind::State)
            .map(|p| format!("[\"{}\",\"{}\"]", p.name, p.dace_ctype))
            .collect::<Vec<_>>()
            .join(",")
    };
    format!(
        "{{\"program\":[{}],\"init\":[{}]}}",
        list(&abi.program),
        list(&abi.init)
    )
}

/// Where the library states its parameter lists (every sdfgc library does;
/// DaCe's do not), they must be DaCe's exactly: a program called with
/// another list gets its arguments shifted, which may go unseen.
fn emit_signature_check(s: &mut String, abi: &Abi) {
    let name = abi.program.symbol.trim_start_matches("__program_");
    writeln!(
        s,
        "  {{\n    auto f_sig = reinterpret_cast<const char* (*)()>(dlsym(lib, {}));\n    \
         const char* want = {};\n    \
         if (f_sig && std::strcmp(f_sig(), want) != 0)\n      \
         fail(\"parameter lists differ from DaCe's:\\n  library: %s\\n  DaCe:    %s\", f_sig(), want);\n  }}",
        c_string(&format!("__sdfgc_signature_{name}")),
        c_string(&expected_signature(abi))
    )
    .unwrap();
}

/// Allocates and fills one buffer per case argument (`args[i]`).
fn emit_load_args(s: &mut String, case: &Case) {
    s.push_str("  stage(\"load\");\n  std::vector<Arg> args;\n");
    for (i, arg) in case.args.iter().enumerate() {
        if let Some(st) = &arg.structure {
            writeln!(
                s,
                "  args.push_back(make_arg(sizeof(harness_struct_{i}), nullptr, false));  // {} (struct {})",
                arg.name, st.ctype
            )
            .unwrap();
            continue;
        }
        let file = match &arg.input_file {
            Some(f) => c_string(&f.to_string_lossy()),
            None => "nullptr".to_string(),
        };
        writeln!(
            s,
            "  args.push_back(make_arg({}, {file}, {}));  // {}",
            arg.bytes(),
            arg.is_scalar,
            arg.name
        )
        .unwrap();
    }
}

/// The C struct of each structure argument (`harness_struct_<i>`): arrays and
/// structures are pointers (`void*`: the layout of any object pointer), scalars
/// values of their type, in the members' order.
fn emit_struct_types(s: &mut String, case: &Case) {
    for (i, arg) in case.args.iter().enumerate() {
        let Some(st) = &arg.structure else { continue };
        writeln!(s, "// {} (struct {})", arg.name, st.ctype).unwrap();
        writeln!(s, "struct harness_struct_{i} {{").unwrap();
        for (field, member) in &st.members {
            let (_, m) = case.arg(member).expect("checked at load");
            let ctype = match (m.is_scalar, m.complex) {
                (true, Some(ct)) => ct,
                (true, None) => m.dtype.ctype(),
                (false, _) => "void*",
            };
            writeln!(s, "  {ctype} {field};").unwrap();
        }
        s.push_str("};\n");
    }
}

/// Fills the structs of structure arguments (pointers to the members'
/// buffers, values of scalar members) and makes that their initial contents.
fn emit_build_structs(s: &mut String, case: &Case) {
    for (i, arg) in case.args.iter().enumerate() {
        let Some(st) = &arg.structure else { continue };
        writeln!(
            s,
            "  {{  // {}\n    auto* st = reinterpret_cast<harness_struct_{i}*>(args[{i}].data);",
            arg.name
        )
        .unwrap();
        for (field, member) in &st.members {
            let (j, m) = case.arg(member).expect("checked at load");
            if m.is_scalar {
                let ct = m.complex.unwrap_or(m.dtype.ctype());
                writeln!(
                    s,
                    "    std::memcpy(&st->{field}, args[{j}].data, sizeof({ct}));"
                )
                .unwrap();
            } else {
                writeln!(s, "    st->{field} = args[{j}].data;").unwrap();
            }
        }
        writeln!(
            s,
            "    args[{i}].initial.assign(args[{i}].data, args[{i}].data + sizeof(harness_struct_{i}));\n  }}"
        )
        .unwrap();
    }
}

/// Loads the reference file of every output (`ref_<k>`).
fn emit_load_references(s: &mut String, case: &Case) -> Result<(), String> {
    for (k, out) in case.outputs.iter().enumerate() {
        let (_, arg) = case.arg(&out.name)?;
        writeln!(
            s,
            "  auto ref_{k} = load_reference({}, {});",
            c_string(&out.file.to_string_lossy()),
            arg.bytes()
        )
        .unwrap();
    }
    Ok(())
}

/// Sets up the workspace of one storage if the library exports its size
/// function.
fn emit_workspace(
    s: &mut String,
    case: &Case,
    ext: &External,
    opts: &RunOptions,
    device: &[usize],
) -> Result<(), String> {
    let exact = opts.workspace_exact;
    let on_gpu = opts.real_device.is_some() && ext.storage.starts_with("GPU");
    writeln!(s, "  {{  // workspace {}", ext.storage).unwrap();
    emit_fn_pointer(s, "    ", "f_size", "size_t", &ext.size, false);
    s.push_str("    if (f_size) {\n");
    emit_fn_pointer(s, "      ", "f_set", "void", &ext.set, true);
    if !ext.storage.starts_with("CPU") && !opts.emulated_device && !on_gpu {
        writeln!(
            s,
            "      fail(\"storage {} needs device memory; unsupported here\");",
            ext.storage
        )
        .unwrap();
    }
    let size_args = call_args(case, &ext.size, None, device)?;
    let set_args = call_args(case, &ext.set, Some("ws.back().base"), device)?;
    writeln!(s, "      size_t bytes = f_size({size_args});").unwrap();
    if on_gpu {
        // The checked setter must refuse host memory (code 5, SDFGC_ERR_NOT_DEVICE_MEMORY).
        let checked = Func {
            symbol: format!("__sdfgc_set_workspace_{}", ext.storage),
            params: ext.set.params.clone(),
        };
        let types: Vec<&str> = checked
            .params
            .iter()
            .take(2)
            .map(|p| p.ctype)
            .chain(["size_t"])
            .chain(checked.params.iter().skip(2).map(|p| p.ctype))
            .collect();
        let mut args: Vec<String> = vec!["state".into(), "host".into(), "bytes".into()];
        let tail = call_args(
            case,
            &Func {
                symbol: checked.symbol.clone(),
                params: checked.params[2..].to_vec(),
            },
            None,
            device,
        )?;
        if !tail.is_empty() {
            args.push(tail);
        }
        writeln!(
            s,
            "      auto f_checked = reinterpret_cast<int (*)({})>(dlsym(lib, {}));",
            types.join(", "),
            c_string(&checked.symbol)
        )
        .unwrap();
        writeln!(
            s,
            "      if (f_checked) {{\n        void* host = nullptr;\n        if (posix_memalign(&host, 4096, bytes ? bytes : 1) != 0) fail(\"out of memory\");\n        int code = f_checked({});\n        std::free(host);\n        if (code != 5) fail(\"{} accepted host memory (code %d, expected 5)\", code);\n        std::printf(\"SETTER refuses host memory\\n\");\n      }}",
            args.join(", "),
            checked.symbol
        )
        .unwrap();
        writeln!(
            s,
            "      ws.push_back(make_device_workspace({}, bytes, {exact}));",
            c_string(&ext.storage)
        )
        .unwrap();
    } else {
        writeln!(
            s,
            "      ws.push_back(make_workspace({}, bytes, {exact}));",
            c_string(&ext.storage)
        )
        .unwrap();
        if opts.emulated_device && ext.storage.starts_with("GPU") {
            // The emulator's libraries (cuBLAS) check that operands are device memory.
            s.push_str("      if (auto reg = reinterpret_cast<void (*)(void *, size_t)>(dlsym(lib, \"sdfgc_emu_register_workspace\"))) reg(ws.back().base, bytes);\n");
        }
    }
    writeln!(s, "      f_set({set_args});\n    }}\n  }}").unwrap();
    Ok(())
}

/// The program calls: restore inputs, poison, (count), call, compare.
fn emit_call_loop(
    s: &mut String,
    case: &Case,
    abi: &Abi,
    opts: &RunOptions,
    calls: u32,
    device: &[usize],
) -> Result<(), String> {
    let real = opts.real_device.is_some();
    let prog_args = call_args(case, &abi.program, None, device)?;
    s.push_str("  bool all_ok = true;\n");
    writeln!(s, "  const int calls = {calls};").unwrap();
    s.push_str("  for (int call = 1; call <= calls; ++call) {\n");
    s.push_str("    for (auto& a : args) restore(a);\n");
    for &i in device {
        writeln!(
            s,
            "    cuda_ok(cudaMemcpy(dev_{i}, args[{i}].data, {}, cudaMemcpyHostToDevice), \"copy in {}\");",
            case.args[i].bytes(),
            case.args[i].name
        )
        .unwrap();
    }
    if opts.poison {
        let f = if real { "poison_any" } else { "poison" };
        writeln!(s, "    for (auto& w : ws) {f}(w);").unwrap();
    }
    s.push_str("    stage(\"call %d\", call);\n");
    if opts.count_allocs {
        s.push_str("    if (call == calls) { g_allocs = 0; g_counting = true; }\n");
    }
    writeln!(s, "    f_prog({prog_args});").unwrap();
    if opts.emulated_device {
        // The emulated runtime queues kernels and copies on their streams: a
        // caller synchronizes before it reads device outputs (here in place).
        s.push_str("    if (auto sync = reinterpret_cast<void (*)()>(dlsym(lib, \"sdfgc_emu_synchronize\"))) sync();\n");
    }
    if real {
        s.push_str("    sync_device(call);\n");
        for &i in device {
            writeln!(
                s,
                "    cuda_ok(cudaMemcpy(args[{i}].data, dev_{i}, {}, cudaMemcpyDeviceToHost), \"copy out {}\");",
                case.args[i].bytes(),
                case.args[i].name
            )
            .unwrap();
        }
    }
    if opts.count_allocs {
        s.push_str("    g_counting = false;\n");
    }
    s.push_str("    bool last = call == calls;\n");
    for (k, out) in case.outputs.iter().enumerate() {
        let (i, arg) = case.arg(&out.name)?;
        let (cls, elem) = arg.dtype.compare_class();
        writeln!(
            s,
            "    if (!compare<{elem}>({}, call, last, {}, ref_{k}.data(), {{{}}}, {{{}}}, {:e}, {:e}, {cls})) all_ok = false;",
            c_string(&out.name),
            case.data_ptr(i),
            join(&arg.shape),
            join(&arg.strides),
            out.rtol,
            out.atol,
        )
        .unwrap();
    }
    s.push_str("  }\n");
    if opts.count_allocs {
        s.push_str("  std::printf(\"ALLOCS %llu\\n\", g_allocs.load());\n");
    }
    Ok(())
}

/// The argument expressions of a call of `func`; `workspace` is the pointer
/// passed for a `workspace` parameter.
fn call_args(
    case: &Case,
    func: &Func,
    workspace: Option<&str>,
    device: &[usize],
) -> Result<String, String> {
    let mut out = Vec::new();
    for p in &func.params {
        out.push(match p.kind {
            ParamKind::State => "state".to_string(),
            ParamKind::Workspace => workspace
                .ok_or_else(|| format!("{}: unexpected workspace parameter", func.symbol))?
                .to_string(),
            ParamKind::Symbol => symbol_value(case, p)?,
            ParamKind::Array | ParamKind::ScalarGpuPointer | ParamKind::Struct => {
                let (i, arg) = case.arg(&p.name)?;
                if arg.structure.is_some() != (p.kind == ParamKind::Struct) {
                    return Err(format!(
                        "{}: parameter {} of kind {:?} and argument of kind {}",
                        func.symbol,
                        p.name,
                        p.kind,
                        if arg.structure.is_some() {
                            "struct"
                        } else {
                            "data"
                        }
                    ));
                }
                if device.contains(&i) {
                    format!("dev_{i}")
                } else {
                    format!("(void*)args[{i}].data")
                }
            }
            ParamKind::Scalar => {
                let (i, arg) = case.arg(&p.name)?;
                if let Some(ct) = arg.complex {
                    format!("({})(*(const {ct}*)args[{i}].data)", p.ctype)
                } else {
                    format!(
                        "({})(*(const {}*)args[{i}].data)",
                        p.ctype,
                        arg.dtype.ctype()
                    )
                }
            }
        });
    }
    Ok(out.join(", "))
}

/// The value of a symbol parameter as a C++ expression of its type
/// (run_case.py: `float(v)` for float types, `bool(v)` for bool, else `int(v)`;
/// the C++ casts do the same conversions).
fn symbol_value(case: &Case, p: &Param) -> Result<String, String> {
    let v = case.symbols.get(&p.name).ok_or_else(|| {
        format!(
            "case {}: no value in case.json \"symbols\" for {}",
            case.name, p.name
        )
    })?;
    let literal = match v {
        Value::Bool(b) => b.to_string(),
        Value::Number(n) if n.is_i64() => format!("{}LL", n.as_i64().unwrap()),
        Value::Number(n) if n.is_u64() => format!("{}ULL", n.as_u64().unwrap()),
        Value::Number(n) => format!("{:?}", n.as_f64().unwrap()),
        other => return Err(format!("symbol {}: unsupported value {other}", p.name)),
    };
    Ok(format!("({})({literal})", p.ctype))
}

fn join(v: &[i64]) -> String {
    v.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")
}

/// A C++ string literal for `s`.
fn c_string(s: &str) -> String {
    let mut out = String::from("\"");
    for b in s.bytes() {
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'?' => out.push_str("\\?"),
            0x20..=0x7e => out.push(b as char),
            _ => write!(out, "\\{b:03o}").unwrap(),
        }
    }
    out.push('"');
    out
}

// ---------------------------------------------------------------------------
// Building and running the driver
// ---------------------------------------------------------------------------

/// Compiler flags of a sanitized driver (and of the libraries it runs).
pub const SANITIZE_FLAGS: [&str; 2] = ["-fsanitize=address,undefined", "-fno-omit-frame-pointer"];

/// Compiler flags of a ThreadSanitizer driver and of the libraries it runs
/// (which link `tests/tsan/omp_shim.cpp` instead of libgomp).
pub const TSAN_FLAGS: [&str; 2] = ["-fsanitize=thread", "-fno-omit-frame-pointer"];

/// Environment of a ThreadSanitizer driver run: stop at the first report.
pub const TSAN_ENV: [(&str, &str); 1] = [(
    "TSAN_OPTIONS",
    "halt_on_error=1:exitcode=88:report_signal_unsafe=0:second_deadlock_stack=1",
)];

/// Hashes the names and contents of every file below `dir`, in name order.
fn hash_tree(dir: &Path, hasher: &mut DefaultHasher) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|r| r.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    entries.sort();
    for p in entries {
        p.file_name().hash(hasher);
        if p.is_dir() {
            hash_tree(&p, hasher);
        } else if let Ok(bytes) = std::fs::read(&p) {
            bytes.hash(hasher);
        }
    }
}

/// Compiles the driver (or reuses one built from the same source, flags
/// and emulator headers) and returns the executable's path.
fn build_driver(
    source: &str,
    sanitize: bool,
    tsan: bool,
    device: Option<&DeviceDriver>,
) -> Result<PathBuf, String> {
    let mut hasher = DefaultHasher::new();
    source.hash(&mut hasher);
    sanitize.hash(&mut hasher);
    tsan.hash(&mut hasher);
    format!("{device:?}").hash(&mut hasher);
    // The emulator's headers are compiled into the driver: a driver built
    // against an older emulator must not be reused (its device-pointer table
    // is the one the library's emulator shares).
    if let Some(DeviceDriver::Emulated(include)) = device {
        hash_tree(include, &mut hasher);
    }
    let root = std::env::temp_dir().join("sdfgc-harness-drivers");
    let dir = root.join(format!("{:016x}", hasher.finish()));
    let exe = dir.join("driver");
    if exe.is_file() {
        return Ok(exe);
    }
    fs::create_dir_all(&root).map_err(|e| format!("{}: {e}", root.display()))?;
    // Build in a private directory and rename it into place, so concurrent
    // tests never see a half-written driver.
    let tmp = tempfile::Builder::new()
        .prefix("build-")
        .tempdir_in(&root)
        .map_err(|e| format!("temp dir in {}: {e}", root.display()))?;
    let src_path = tmp.path().join("driver.cpp");
    fs::write(&src_path, source).map_err(|e| format!("{}: {e}", src_path.display()))?;
    let mut gxx = match device {
        Some(DeviceDriver::Emulated(include)) => {
            // -rdynamic: the library's emulator shares the driver's device-pointer table.
            let mut c = super::cxx::cxx();
            c.args(["-std=c++17", "-O1", "-rdynamic", "-I"])
                .arg(include);
            c
        }
        Some(DeviceDriver::Nvcc(nvcc)) => {
            // Host code only; nvcc adds the CUDA headers and links the runtime.
            let mut c = Command::new(nvcc);
            c.args(["-std=c++17", "-O1", "-Werror", "all-warnings"]);
            c
        }
        None => {
            let mut c = super::cxx::cxx();
            c.args(["-std=c++17", "-O1", "-rdynamic"]);
            c
        }
    };
    if sanitize {
        gxx.arg("-g").args(SANITIZE_FLAGS);
    }
    if tsan {
        gxx.arg("-g").args(TSAN_FLAGS);
    }
    let out = gxx
        .args(["driver.cpp", "-ldl", "-o", "driver"])
        .current_dir(tmp.path())
        .output()
        .map_err(|e| format!("cannot run g++ (is it installed?): {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "driver build failed ({}):\n{}",
            src_path.display(),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let built = tmp.keep();
    if fs::rename(&built, &dir).is_err() {
        // Someone else finished first; theirs is identical.
        let _ = fs::remove_dir_all(&built);
    }
    if exe.is_file() {
        Ok(exe)
    } else {
        Err(format!("driver missing after build: {}", exe.display()))
    }
}

/// What the driver did.
struct DriverRun {
    status: ExitStatus,
    stdout: String,
    stderr: String,
}

/// Seconds a driver may run (`SDFGC_HARNESS_TIMEOUT_S`, default 300).
fn driver_timeout() -> Duration {
    let secs = std::env::var("SDFGC_HARNESS_TIMEOUT_S")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300);
    Duration::from_secs(secs)
}

/// Runs the driver on `lib`, with stdout/stderr going to files (no pipe can
/// fill up) and a timeout; sanitized drivers get [`SANITIZER_ENV`].
fn run_driver(driver: &Path, lib: &Path, sanitize: bool, tsan: bool) -> Result<DriverRun, String> {
    let dir = tempfile::tempdir().map_err(|e| format!("temp dir: {e}"))?;
    let out_path = dir.path().join("stdout");
    let err_path = dir.path().join("stderr");
    let file = |p: &Path| fs::File::create(p).map_err(|e| format!("{}: {e}", p.display()));
    let mut cmd = Command::new(driver);
    // Several OpenMP threads, more than this machine may have cores: a
    // variable shared between the iterations of a parallel loop races.
    cmd.env(
        "OMP_NUM_THREADS",
        std::env::var("SDFGC_TEST_THREADS").unwrap_or_else(|_| "3".into()),
    );
    if sanitize {
        cmd.envs(SANITIZER_ENV);
    }
    if tsan {
        cmd.envs(TSAN_ENV);
    }
    let mut child = cmd
        .arg(lib)
        .stdin(Stdio::null())
        .stdout(file(&out_path)?)
        .stderr(file(&err_path)?)
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", driver.display()))?;
    let deadline = Instant::now() + driver_timeout();
    let status = loop {
        match child
            .try_wait()
            .map_err(|e| format!("waiting for driver: {e}"))?
        {
            Some(status) => break status,
            None if Instant::now() > deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "driver timed out after {:?} on {}",
                    driver_timeout(),
                    lib.display()
                ));
            }
            None => std::thread::sleep(Duration::from_millis(5)),
        }
    };
    let read = |p: &Path| String::from_utf8_lossy(&fs::read(p).unwrap_or_default()).into_owned();
    Ok(DriverRun {
        status,
        stdout: read(&out_path),
        stderr: read(&err_path),
    })
}

/// Turns the driver's stdout (`STAGE`, `WORKSPACE`, `OUTPUT`, `ERROR`,
/// `ALLOCS`, `RESULT` lines) and exit status into a report.
fn parse_driver_output(run: &DriverRun, driver: &Path) -> RunReport {
    let mut message = Vec::new();
    let mut allocs_per_call = None;
    let mut workspace_bytes = Vec::new();
    let mut result = None;
    let mut last_stage = "start";
    for line in run.stdout.lines() {
        let (tag, rest) = line.split_once(' ').unwrap_or((line, ""));
        match tag {
            "STAGE" => last_stage = rest,
            "ALLOCS" => allocs_per_call = rest.trim().parse().ok(),
            "WORKSPACE" => {
                if let Some((storage, n)) = rest.split_once(' ') {
                    workspace_bytes.push((storage.to_string(), n.trim().parse().unwrap_or(0)));
                }
            }
            "RESULT" => result = Some(rest.to_string()),
            _ => message.push(line.to_string()),
        }
    }
    let sanitizer = sanitizer_report(&run.stderr);
    let ok = result.as_deref() == Some("ok") && run.status.success() && sanitizer.is_none();
    if let Some(report) = &sanitizer {
        message.push(format!(
            "sanitizer report (during stage {last_stage:?}):\n{report}"
        ));
    }
    if let Some(reason) = result.as_deref().and_then(|r| r.strip_prefix("fail ")) {
        message.push(reason.to_string());
    }
    if result.is_none() || (result.as_deref() == Some("ok") && !run.status.success()) {
        let how = match run.status.signal() {
            Some(sig) => format!("killed by signal {sig}"),
            None => format!("exit status {:?}", run.status.code()),
        };
        message.push(format!(
            "driver {} {how} during stage {last_stage:?}",
            driver.display()
        ));
    }
    let stderr = run.stderr.trim();
    if !ok && sanitizer.is_none() && !stderr.is_empty() {
        let tail: Vec<&str> = stderr.lines().rev().take(20).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        message.push(format!("stderr:\n{}", tail.join("\n")));
    }
    RunReport {
        ok,
        message: message.join("\n"),
        allocs_per_call,
        workspace_bytes,
    }
}

/// Lines of an AddressSanitizer / LeakSanitizer / UndefinedBehaviorSanitizer
/// report kept in a run's message.
const SANITIZER_EXCERPT_LINES: usize = 40;

/// The first sanitizer report in a driver's stderr (from its `ERROR:` or
/// `runtime error:` line on), at most [`SANITIZER_EXCERPT_LINES`] lines.
fn sanitizer_report(stderr: &str) -> Option<String> {
    let lines: Vec<&str> = stderr.lines().collect();
    let start = lines.iter().position(|l| {
        l.contains("ERROR: AddressSanitizer")
            || l.contains("ERROR: LeakSanitizer")
            || l.contains("runtime error:")
            || l.contains("AddressSanitizer:DEADLYSIGNAL")
            || l.contains("WARNING: ThreadSanitizer")
            || l.contains("ThreadSanitizer:DEADLYSIGNAL")
    })?;
    let end = lines.len().min(start + SANITIZER_EXCERPT_LINES);
    let mut excerpt = lines[start..end].join("\n");
    if end < lines.len() {
        excerpt.push_str(&format!("\n[... {} more lines]", lines.len() - end));
    }
    Some(excerpt)
}
