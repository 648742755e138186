//! DaCe's data instrumentation (`DataInstrumentationType.Save` and
//! `.Restore`): the data of an instrumented access node is written to (or
//! read back from) DaCe's report folder when the node's turn comes, and the
//! symbols defined at an instrumented state (`symbol_instrument`) when the
//! state starts. The files are the ones DaCe's `DataSerializer` writes and
//! `sdfg.get_instrumented_data()` reads: `<folder>/<init time in
//! ms>/<name>/<uuid>_<version>.bin` (a `uint32` rank, the shape and the
//! strides in elements as `uint32`, then the elements), symbols as text in
//! `<name>/<state id>_<version>`; the version counts the saves (or
//! restores) of one node, and of one symbol, since the program's init.

use crate::back::body::FnWriter;
use crate::diag::Result;
use crate::ir::simplify::free_symbols;
use crate::ir::*;

/// The state member holding the serializer.
pub(crate) const MEMBER: &str = "__sdfgc_serializer";

/// What the program's SDFGs instrument.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Uses {
    /// Some node or state saves.
    pub save: bool,
    /// Some node or state restores (the file exports
    /// `__dace_set_instrumented_data_report`).
    pub restore: bool,
}

impl Uses {
    /// Whether anything is instrumented.
    pub fn any(self) -> bool {
        self.save || self.restore
    }
}

/// What `sdfg` and its nested SDFGs instrument.
pub fn uses(sdfg: &Sdfg) -> Uses {
    let mut u = Uses::default();
    let mut note = |x: &Option<Box<DataInstrument>>| match x.as_deref().map(|x| x.kind) {
        Some(InstrumentKind::Save) => u.save = true,
        Some(InstrumentKind::Restore) => u.restore = true,
        None => {}
    };
    visit(sdfg, &mut note);
    u
}

fn visit(sdfg: &Sdfg, f: &mut dyn FnMut(&Option<Box<DataInstrument>>)) {
    each_state(&sdfg.body, &mut |st| {
        f(&st.symbol_instrument);
        for n in &st.nodes {
            match &n.kind {
                NodeKind::Access(a) => f(&a.instrument),
                NodeKind::Nested(ns) => visit(&ns.sdfg, f),
                _ => {}
            }
        }
    });
}

fn each_state(r: &Region, f: &mut dyn FnMut(&State)) {
    for b in &r.blocks {
        match &b.kind {
            BlockKind::State(st) => f(st),
            BlockKind::Region(inner) => each_state(inner, f),
            BlockKind::Conditional(branches) => {
                for (_, inner) in branches {
                    each_state(inner, f);
                }
            }
            BlockKind::Break | BlockKind::Continue | BlockKind::Return => {}
        }
    }
}

/// The C++ of the serializer (DaCe's `dace::DataSerializer`, written anew).
pub const PRELUDE: &str = r#"// ---- data instrumentation (DaCe's DataSerializer files) ----
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <sys/stat.h>
#include <cerrno>
// Creates `path` and its missing parents; true if the folder exists after.
__attribute__((unused)) static bool sdfgc_make_folders(const std::string &path) {
    for (size_t i = 1; i <= path.size(); ++i) {
        if (i < path.size() && path[i] != '/') continue;
        std::string part = path.substr(0, i);
        if (::mkdir(part.c_str(), 0755) != 0 && errno != EEXIST) return false;
    }
    return true;
}
struct sdfgc_data_serializer {
    std::mutex mutex;
    std::string folder;
    std::map<std::string, int> versions;
    bool enabled = true;
    // Saves go to `base`/<milliseconds since the epoch>; restores read the
    // folder __dace_set_instrumented_data_report sets (`base` empty).
    explicit sdfgc_data_serializer(const char *base) {
        if (base[0] == '\0') return;
        long long ms = static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(
            std::chrono::system_clock::now().time_since_epoch()).count());
        folder = std::string(base) + "/" + std::to_string(ms);
        if (!sdfgc_make_folders(folder)) {
            std::fprintf(stderr, "sdfgc: cannot create '%s' for data instrumentation: nothing is saved\n", folder.c_str());
            enabled = false;
        }
    }
    int next_version(const std::string &key) {
        auto it = versions.find(key);
        int v = it == versions.end() ? 0 : it->second + 1;
        versions[key] = v;
        return v;
    }
    // Writes `size` elements with the rank, shape and strides (`dims`: the shape, then the strides).
    template <typename T>
    void save(const T *buffer, size_t size, const char *name, const char *uuid, std::initializer_list<long long> dims) {
        if (!enabled) return;
        std::lock_guard<std::mutex> guard(mutex);
        int version = next_version(uuid);
        std::string dir = folder + "/" + name;
        if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
            if (version == 0) std::fprintf(stderr, "sdfgc: cannot create '%s' for data instrumentation\n", dir.c_str());
            return;
        }
        std::ofstream ofs(dir + "/" + uuid + "_" + std::to_string(version) + ".bin", std::ios::binary);
        uint32_t ndims = static_cast<uint32_t>(dims.size() / 2);
        ofs.write(reinterpret_cast<const char *>(&ndims), sizeof(uint32_t));
        for (long long d : dims) {
            uint32_t v = static_cast<uint32_t>(d);
            ofs.write(reinterpret_cast<const char *>(&v), sizeof(uint32_t));
        }
        ofs.write(reinterpret_cast<const char *>(buffer), static_cast<std::streamsize>(sizeof(T) * size));
    }
    // Reads `size` elements after the header; a missing file leaves the buffer as it is.
    template <typename T>
    void restore(T *buffer, size_t size, const char *name, const char *uuid) {
        std::lock_guard<std::mutex> guard(mutex);
        int version = next_version(uuid);
        std::ifstream ifs(folder + "/" + name + "/" + uuid + "_" + std::to_string(version) + ".bin", std::ios::binary);
        uint32_t ndims = 0;
        if (!ifs.read(reinterpret_cast<char *>(&ndims), sizeof(uint32_t))) return;
        ifs.ignore(static_cast<std::streamsize>(ndims) * 2 * sizeof(uint32_t));
        ifs.read(reinterpret_cast<char *>(buffer), static_cast<std::streamsize>(sizeof(T) * size));
    }
    template <typename T>
    void save_symbol(const char *name, const char *state, const T value) {
        if (!enabled) return;
        std::lock_guard<std::mutex> guard(mutex);
        int version = next_version(name);
        std::string dir = folder + "/" + name;
        if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
            if (version == 0) std::fprintf(stderr, "sdfgc: cannot create '%s' for data instrumentation\n", dir.c_str());
            return;
        }
        std::ofstream ofs(dir + "/" + state + "_" + std::to_string(version));
        ofs << value;
    }
    // The symbol's value in the report; `current` if the report has none.
    template <typename T>
    T restore_symbol(const char *name, const char *state, const T current) {
        std::lock_guard<std::mutex> guard(mutex);
        int version = next_version(name);
        std::ifstream ifs(folder + "/" + name + "/" + state + "_" + std::to_string(version));
        T value = current;
        if (!(ifs >> value)) return current;
        return value;
    }
};"#;

impl FnWriter<'_> {
    /// The `if (...) {` that opens an instrumentation's condition, if it has one.
    fn instrument_guard(&self, x: &DataInstrument) -> Option<String> {
        match &x.condition {
            InstrumentCondition::Always => None,
            InstrumentCondition::Expr(e) => Some(format!("if ({})", self.cond(e))),
            InstrumentCondition::Cpp(c) => Some(format!("if ({c})")),
        }
    }

    /// Saves or restores the data of the access node `a` (host code only:
    /// DaCe instruments no node inside a kernel). Written at the node's turn:
    /// after everything that writes it, before anything reads it.
    pub(crate) fn data_instrument(&mut self, a: &AccessNode) -> Result<()> {
        let Some(x) = a.instrument.as_deref() else {
            return Ok(());
        };
        if self.in_kernel {
            return Ok(());
        }
        let Some(d) = self.sdfg.arrays.get(&a.data) else {
            return Ok(());
        };
        let ptr = match self.access.get(&a.data) {
            Some(crate::back::body::function::Access::Ptr(p)) => p.clone(),
            Some(crate::back::body::function::Access::Value(v)) => format!("&{v}"),
            None => return Ok(()),
        };
        let ct = d.dtype.ctype();
        let size = self.sym(&Expr::bin(
            BinaryOp::Sub,
            d.total_size.clone(),
            d.start_offset.clone(),
        ));
        let (shape, strides) = if d.shape.is_empty() {
            (vec![Expr::Int(1)], vec![Expr::Int(1)])
        } else {
            (d.shape.clone(), d.strides.clone())
        };
        let dims: Vec<String> = shape
            .iter()
            .chain(strides.iter())
            .map(|e| match self.sym(e) {
                s if s.parse::<i64>().is_ok() => s,
                s => format!("static_cast<long long>({s})"),
            })
            .collect();
        let s = format!("__state->{MEMBER}");
        // On GPU targets the host first waits for all device work (kernels
        // and asynchronous copies that write or read the data).
        let gpu = self.gpu;
        let device = gpu.filter(|_| self.is_device(&a.data));
        let guard = self.instrument_guard(x);
        let opened = guard.is_some() || gpu.is_some();
        match guard {
            Some(g) => self.out.open(g),
            None if opened => self.out.open(""),
            None => {}
        }
        if let Some(g) = gpu {
            self.out.line(format!(
                "sdfgc_gpu_check({}(), \"data instrumentation: synchronize\");",
                g.api("DeviceSynchronize")
            ));
        }
        let name = &a.data;
        let uuid = &x.uuid;
        let host = match device {
            Some(g) => {
                let host = format!("__dinstr_{name}");
                let bytes = format!("sizeof({ct}) * ({size})");
                self.out.line(format!("{ct} *{host} = new {ct}[{size}];"));
                self.out.line(format!(
                    "sdfgc_gpu_check({}({host}, {ptr}, {bytes}, {}), \"data instrumentation: copy of {name} to the host\");",
                    g.api("Memcpy"),
                    g.api("MemcpyDeviceToHost")
                ));
                Some((g, host, bytes))
            }
            None => None,
        };
        let target = host.as_ref().map_or(ptr.clone(), |(_, h, _)| h.clone());
        match x.kind {
            InstrumentKind::Save => self.out.line(format!(
                "{s}->save({target}, {size}, \"{name}\", \"{uuid}\", {{{}}});",
                dims.join(", ")
            )),
            InstrumentKind::Restore => self.out.line(format!(
                "{s}->restore({target}, {size}, \"{name}\", \"{uuid}\");"
            )),
        }
        if let Some((g, host, bytes)) = host {
            if x.kind == InstrumentKind::Restore {
                self.out.line(format!(
                    "sdfgc_gpu_check({}({ptr}, {host}, {bytes}, {}), \"data instrumentation: copy of {name} to the device\");",
                    g.api("Memcpy"),
                    g.api("MemcpyHostToDevice")
                ));
                self.out.line(format!(
                    "sdfgc_gpu_check({}(), \"data instrumentation: synchronize\");",
                    g.api("DeviceSynchronize")
                ));
            }
            self.out.line(format!("delete[] {host};"));
        }
        if opened {
            self.out.close();
        }
        Ok(())
    }

    /// Saves or restores the symbols defined at state `st` (DaCe's
    /// `SDFGState.defined_symbols()`: the SDFG's symbols, the free symbols
    /// of its containers and every symbol an interstate edge assigns), where
    /// the function has them, in the order of their names.
    pub(crate) fn symbol_instrument(&mut self, st: &State) {
        let Some(x) = st.symbol_instrument.as_deref() else {
            return;
        };
        if self.in_kernel {
            return;
        }
        let mut names: std::collections::BTreeSet<String> =
            self.sdfg.symbols.keys().cloned().collect();
        for d in self.sdfg.arrays.values() {
            for e in d.shape.iter().chain(&d.strides).chain([&d.total_size]) {
                names.extend(free_symbols(e));
            }
        }
        crate::passes::span::assigned_symbols(&self.sdfg.body, &mut names);
        let defined: Vec<(String, DType)> = names
            .into_iter()
            .filter(|n| self.sym_params.contains(n) || self.local_symbols.contains_key(n))
            .map(|n| {
                let t = self
                    .local_symbols
                    .get(&n)
                    .copied()
                    .or_else(|| self.sdfg.symbol_type(&n))
                    .unwrap_or(DType::Int64);
                (n, t)
            })
            .collect();
        if defined.is_empty() {
            return;
        }
        let guard = self.instrument_guard(x);
        if let Some(g) = &guard {
            self.out.open(g.clone());
        }
        let uuid = &x.uuid;
        for (n, t) in defined {
            let line = match x.kind {
                InstrumentKind::Save => {
                    format!("__state->{MEMBER}->save_symbol(\"{n}\", \"{uuid}\", {n});")
                }
                InstrumentKind::Restore => format!(
                    "{n} = __state->{MEMBER}->restore_symbol<{}>(\"{n}\", \"{uuid}\", {n});",
                    t.ctype()
                ),
            };
            self.out.line(line);
        }
        if guard.is_some() {
            self.out.close();
        }
    }
}
