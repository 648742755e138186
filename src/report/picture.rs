//! What a workspace picture shows, taken from a prepared program: for each
//! storage, every transient's live range (in program positions) and bytes,
//! placed by sdfgc's packed layout and by DaCe's sequential one.

use crate::ir::{BinaryOp, Expr};
use crate::passes::Program;
use crate::passes::layout::StorageLayout;
use crate::passes::liveness::Live;

use super::{Symbols, formula, value};

/// A size: its formula in the symbols (C) and its value where the symbols are given.
#[derive(Clone, Debug, PartialEq)]
pub struct Size {
    /// The formula, as `--stats` prints it.
    pub formula: String,
    /// Its value, if every symbol in it has one.
    pub value: Option<i64>,
}

impl Size {
    fn of(e: &Expr, symbols: &Symbols) -> Size {
        Size {
            formula: formula(e),
            value: value(e, symbols),
        }
    }
}

/// One transient of a storage's workspace.
#[derive(Clone, Debug)]
pub struct Transient {
    /// Its name.
    pub name: String,
    /// Bytes (all copies of a per-thread slot).
    pub bytes: Size,
    /// Its shelf in the packed layout.
    pub shelf: usize,
    /// Its offset in DaCe's sequential layout (the unaligned sum of those before it).
    pub dace_offset: Option<i64>,
    /// Its live range, clamped to the program's positions.
    pub live: Live,
    /// One copy per thread.
    pub per_thread: bool,
}

/// One storage's workspace (one buffer).
#[derive(Clone, Debug)]
pub struct StoragePicture {
    /// DaCe's name of the storage (`CPU_Heap`, `GPU_Global`, ...).
    pub storage: String,
    /// Alignment of every offset in bytes.
    pub align: u64,
    /// Offset and size (aligned) of every shelf.
    pub shelves: Vec<(Size, Size)>,
    /// Every transient, in slot order.
    pub transients: Vec<Transient>,
    /// The packed total: what the program asks for.
    pub packed: Size,
    /// DaCe's total: the unaligned sum of the transients.
    pub dace: Size,
}

impl StoragePicture {
    /// True if every size has a value (the picture is drawn to scale).
    pub fn to_scale(&self) -> bool {
        self.packed.value.is_some()
            && self.dace.value.is_some()
            && self.transients.iter().all(|t| t.bytes.value.is_some())
            && self
                .shelves
                .iter()
                .all(|(o, s)| o.value.is_some() && s.value.is_some())
    }
}

/// One program's workspace pictures.
#[derive(Clone, Debug)]
pub struct ProgramPicture {
    /// The SDFG's name.
    pub name: String,
    /// The file it was read from, as given.
    pub file: String,
    /// Number of positions: the x axis runs over `0..positions`.
    pub positions: u32,
    /// The states in program order, with their positions.
    pub states: Vec<(String, Live)>,
    /// The spans of the program's loops.
    pub loops: Vec<Live>,
    /// One picture per storage with a workspace.
    pub storages: Vec<StoragePicture>,
    /// The thread count of per-thread slots, if any storage has one.
    pub threads: Option<i64>,
}

impl ProgramPicture {
    /// The picture of a prepared program with these symbol values.
    pub fn of(file: &str, p: &Program, symbols: &Symbols) -> ProgramPicture {
        let states = p.live.states.clone();
        let last_state = states.iter().map(|(_, s)| s.end + 1).max().unwrap_or(0);
        // Ranges of containers the liveness pass never met end at `u32::MAX`.
        let last_use = p
            .layouts
            .values()
            .flat_map(|l| &l.placements)
            .map(|x| x.live.start.saturating_add(1))
            .max()
            .unwrap_or(0);
        let positions = last_state.max(last_use).max(1);
        let storages = p
            .layouts
            .iter()
            .map(|(s, l)| storage(s.dace_name(), l, positions, symbols))
            .collect();
        let per_thread = p
            .layouts
            .values()
            .any(|l| l.placements.iter().any(|x| x.slot.per_thread));
        ProgramPicture {
            name: p.sdfg.name.clone(),
            file: file.to_string(),
            positions,
            states,
            loops: p.live.loops.clone(),
            storages,
            threads: per_thread.then(|| super::threads(symbols)),
        }
    }
}

fn storage(name: &str, l: &StorageLayout, positions: u32, symbols: &Symbols) -> StoragePicture {
    let offsets = l.shelf_offsets();
    let sizes = l.shelf_sizes();
    let mut before = Expr::Int(0);
    let transients = l
        .placements
        .iter()
        .map(|p| {
            let dace_offset = value(&before, symbols);
            before = Expr::bin(BinaryOp::Add, before.clone(), p.bytes.clone());
            let last = positions - 1;
            Transient {
                name: p.slot.name.clone(),
                bytes: Size::of(&p.bytes, symbols),
                shelf: p.shelf,
                dace_offset,
                live: Live {
                    start: p.live.start.min(last),
                    end: p.live.end.min(last),
                },
                per_thread: p.slot.per_thread,
            }
        })
        .collect();
    StoragePicture {
        storage: name.to_string(),
        align: l.align,
        shelves: offsets
            .iter()
            .zip(&sizes)
            .map(|(o, s)| (Size::of(o, symbols), Size::of(s, symbols)))
            .collect(),
        transients,
        packed: Size::of(&offsets[l.shelves], symbols),
        dace: Size::of(&l.dace_total(), symbols),
    }
}
