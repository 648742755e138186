//! The workspaces of External memory: what the translation unit's
//! workspace functions (size, alignment, the checked setter) need, one
//! workspace per storage.

use crate::back::body::{copy_stride_name, member_name};
use crate::back::gpu::Dialect;
use crate::ir::cexpr;
use crate::ir::*;
use crate::passes::{Memory, Program};

/// A container's place in a workspace.
pub(super) struct Slot {
    /// The state member pointing to it.
    pub member: String,
    pub ctype: String,
    /// The shelf it is on.
    pub shelf: usize,
    /// For a per-thread slot: the state member holding one copy's elements, and their number.
    pub copy: Option<(String, String)>,
}

/// A shelf of a workspace: containers whose live ranges do not overlap share it.
pub(super) struct Shelf {
    /// Its members with their live ranges.
    pub comment: String,
    /// Its size in bytes (a C++ expression).
    pub size: String,
}

/// The size and comment of a shelf: the largest of its members' distinct
/// sizes, and every member with its live range.
fn shelf(members: &[&crate::passes::layout::Placement], align: u64) -> Shelf {
    let mut sizes: Vec<String> = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for pl in members {
        let size = format!(
            "sdfgc_align_up(sizeof({}) * static_cast<size_t>({}), {align})",
            pl.slot.dtype.ctype(),
            cexpr::to_cpp(&pl.slot.total_elements()),
        );
        if seen.insert(size.clone()) {
            sizes.push(size);
        }
    }
    // sdfgc_max(sdfgc_max(a, b), c), written in one pass.
    let mut size = "sdfgc_max(".repeat(sizes.len().saturating_sub(1));
    for (i, s) in sizes.iter().enumerate() {
        if i > 0 {
            size.push_str(", ");
        }
        size.push_str(s);
        if i > 0 {
            size.push(')');
        }
    }
    let names: Vec<String> = members
        .iter()
        .map(|pl| format!("{} [live {}-{}]", pl.slot.name, pl.live.start, pl.live.end))
        .collect();
    Shelf {
        comment: names.join(", "),
        size,
    }
}

/// One storage's workspace.
pub(super) struct Workspace {
    /// Code that refuses a pointer that is not device memory (GPU storage only).
    pub device_check: String,
    /// DaCe's name of the storage.
    pub storage: String,
    /// Other storage names the workspace functions are exported under too:
    /// `Default`, when External transients of storage Default live in it
    /// (DaCe's `CompiledSDFG` asks for the storage written in the SDFG).
    pub aliases: Vec<&'static str>,
    pub align: u64,
    pub shelves: Vec<Shelf>,
    pub slots: Vec<Slot>,
}

/// `["Default"]` if a transient of storage Default and lifetime External in
/// the SDFG lives in the `storage` workspace, else nothing.
fn default_storage_aliases(p: &Program, storage: Storage) -> Vec<&'static str> {
    let mut found = false;
    p.sdfg.for_each_sdfg(&mut |s| {
        found |= s.arrays.iter().any(|(name, d)| {
            d.transient
                && d.storage == Storage::Default
                && d.lifetime == Lifetime::External
                && matches!(
                    p.alloc.transients.get(&(s.id, name.clone())).map(|t| &t.memory),
                    Some(Memory::External { storage: st, .. }) if *st == storage
                )
        });
    });
    if found { vec!["Default"] } else { Vec::new() }
}

/// The check of the checked setter that the workspace is device memory.
fn device_check(_g: &Dialect) -> String {
    "    if (!sdfgc_on_device(ptr)) return SDFGC_ERR_NOT_DEVICE_MEMORY;\n".to_string()
}

/// The workspaces of `p`'s layouts, one per storage.
pub(super) fn workspaces(p: &Program) -> Vec<Workspace> {
    p.layouts
        .iter()
        .map(|(storage, l)| Workspace {
            device_check: match p.gpu {
                Some(g) if storage.is_gpu() => device_check(g),
                _ => String::new(),
            },
            storage: storage.dace_name().to_string(),
            aliases: default_storage_aliases(p, *storage),
            align: l.align,
            shelves: l
                .members_by_shelf()
                .iter()
                .map(|members| shelf(members, l.align))
                .collect(),
            slots: l
                .placements
                .iter()
                .map(|pl| Slot {
                    member: member_name(pl.slot.sdfg, &pl.slot.name),
                    ctype: pl.slot.dtype.ctype().to_string(),
                    shelf: pl.shelf,
                    copy: pl.slot.per_thread.then(|| {
                        (
                            copy_stride_name(&member_name(pl.slot.sdfg, &pl.slot.name)),
                            cexpr::to_cpp(&pl.slot.elements),
                        )
                    }),
                })
                .collect(),
        })
        .collect()
}
