//! Workspace layout: where each External transient lives inside the one
//! buffer of its storage.
//!
//! Transients are grouped into *shelves*: a shelf holds transients whose
//! live ranges are pairwise disjoint, so they may share its bytes. The
//! grouping is fixed at generation time (greedy colouring of the interval
//! graph in order of live-range start, optimal in the number of shelves);
//! only the sizes depend on the symbols: a shelf is as large as its largest
//! member rounded up to the alignment, shelves lie back to back, and the
//! total is their sum. The same formulas are evaluated by the generated size
//! query and setter, so the layout is correct for every symbol value.

use std::collections::BTreeSet;

use indexmap::IndexMap;

use crate::ir::simplify::simplify;
use crate::ir::*;
use crate::options::Layout;
use crate::passes::alloc::ExternalSlot;
use crate::passes::liveness::{Live, Liveness};

/// One transient's place in the workspace.
#[derive(Clone, Debug)]
pub struct Placement {
    /// The slot (transient) this places.
    pub slot: ExternalSlot,
    /// Its live range in program order.
    pub live: Live,
    /// Index of its shelf.
    pub shelf: usize,
    /// Bytes, in the top-level symbols (and [`crate::passes::alloc::THREADS`]
    /// for a per-thread slot: all its copies).
    pub bytes: Expr,
}

/// The layout of one storage's workspace.
#[derive(Clone, Debug)]
pub struct StorageLayout {
    /// Alignment of every offset and of the total, in bytes.
    pub align: u64,
    /// Every transient, in slot order.
    pub placements: Vec<Placement>,
    /// Number of shelves.
    pub shelves: usize,
}

/// Rounds `e` (bytes) up to a multiple of `align`.
pub fn align_up(e: &Expr, align: u64) -> Expr {
    let a = Expr::Int(align as i64);
    simplify(&Expr::bin(
        BinaryOp::Mul,
        Expr::Call(Func::IntCeil, vec![e.clone(), a.clone()]),
        a,
    ))
}

impl StorageLayout {
    /// Lays out the slots of one storage.
    pub fn new(
        slots: &[ExternalSlot],
        live: &Liveness,
        align: u64,
        layout: Layout,
        keep_apart: &dyn Fn(&ExternalSlot) -> bool,
    ) -> StorageLayout {
        let ranges: Vec<Live> = slots
            .iter()
            .map(|s| {
                live.ranges
                    .get(&(s.sdfg, s.name.clone()))
                    .copied()
                    .unwrap_or(Live {
                        start: 0,
                        end: u32::MAX,
                    })
            })
            .collect();
        let apart: Vec<bool> = slots.iter().map(keep_apart).collect();
        let mut order: Vec<usize> = (0..slots.len()).collect();
        order.sort_by_key(|&i| (ranges[i].start, i));
        // Ranges that touch at an in-place map may share when the two have the same bytes.
        let pairs: BTreeSet<(u32, &str)> = live
            .in_place
            .iter()
            .flat_map(|ip| [(ip.sdfg, ip.read.as_str()), (ip.sdfg, ip.written.as_str())])
            .collect();
        let in_place = |a: &ExternalSlot, b: &ExternalSlot| {
            a.dtype.size() == b.dtype.size()
                && !a.per_thread
                && !b.per_thread
                && simplify(&a.elements) == simplify(&b.elements)
                && live.in_place_pair(a.sdfg, &a.name, b.sdfg, &b.name)
        };
        let mut shelf_of = vec![0usize; slots.len()];
        // Members of each shelf so far, the furthest end among them, and
        // whether a member is kept apart (then the shelf takes no other).
        let mut shelves: Vec<(Vec<usize>, u32, bool)> = Vec::new();
        for &i in &order {
            let li = ranges[i];
            let pairs_in_place = pairs.contains(&(slots[i].sdfg, slots[i].name.as_str()));
            // Members are added in order of start, so a member overlaps `li`
            // iff it ends at or after `li.start`.
            let fits = |(members, end, closed): &(Vec<usize>, u32, bool)| {
                layout == Layout::Packed
                    && !apart[i]
                    && !closed
                    && (*end < li.start
                        || pairs_in_place
                            && members.iter().all(|&j| {
                                ranges[j].end < li.start || in_place(&slots[i], &slots[j])
                            }))
            };
            match shelves.iter().position(fits) {
                Some(k) => {
                    shelves[k].0.push(i);
                    shelves[k].1 = shelves[k].1.max(li.end);
                    shelf_of[i] = k;
                }
                None => {
                    shelves.push((vec![i], li.end, apart[i]));
                    shelf_of[i] = shelves.len() - 1;
                }
            }
        }
        let placements = slots
            .iter()
            .enumerate()
            .map(|(i, s)| Placement {
                slot: s.clone(),
                live: ranges[i],
                shelf: shelf_of[i],
                bytes: simplify(&Expr::bin(
                    BinaryOp::Mul,
                    s.total_elements(),
                    Expr::Int(s.dtype.size() as i64),
                )),
            })
            .collect();
        StorageLayout {
            align,
            placements,
            shelves: shelves.len(),
        }
    }

    /// Containers that share bytes with another one while both are live at
    /// one in-place map (they must not be declared `__restrict__` where both are used).
    pub fn aliased(&self) -> BTreeSet<(u32, String)> {
        let mut out = BTreeSet::new();
        for members in self.members_by_shelf() {
            // Sweep the members in order of their first position: one overlaps an
            // earlier one iff it starts before the furthest end seen so far.
            let mut sorted = members;
            sorted.sort_by_key(|p| (p.live.start, p.live.end));
            let mut furthest: Option<(u32, &Placement)> = None;
            for p in sorted {
                if let Some((end, q)) = furthest
                    && p.live.start <= end
                {
                    out.insert((q.slot.sdfg, q.slot.name.clone()));
                    out.insert((p.slot.sdfg, p.slot.name.clone()));
                }
                if furthest.is_none_or(|(end, _)| p.live.end > end) {
                    furthest = Some((p.live.end, p));
                }
            }
        }
        out
    }

    /// Containers whose shelf holds another container: their pointers hold the
    /// same address, so one function must not declare both `__restrict__`.
    pub fn shared(&self) -> BTreeSet<(u32, String)> {
        self.members_by_shelf()
            .into_iter()
            .filter(|m| m.len() > 1)
            .flatten()
            .map(|p| (p.slot.sdfg, p.slot.name.clone()))
            .collect()
    }

    /// The placements of each shelf, in slot order.
    pub fn members_by_shelf(&self) -> Vec<Vec<&Placement>> {
        let mut by_shelf: Vec<Vec<&Placement>> = vec![Vec::new(); self.shelves];
        for p in &self.placements {
            if let Some(v) = by_shelf.get_mut(p.shelf) {
                v.push(p);
            }
        }
        by_shelf
    }

    /// Size of each shelf: the largest of its members' distinct sizes, aligned.
    pub fn shelf_sizes(&self) -> Vec<Expr> {
        self.members_by_shelf()
            .iter()
            .map(|members| {
                // Keyed by their text: `Expr` holds floats, so it has no `Ord`.
                let mut seen = BTreeSet::new();
                members
                    .iter()
                    .map(|p| &p.bytes)
                    .filter(|b| seen.insert(format!("{b:?}")))
                    .map(|b| align_up(b, self.align))
                    .reduce(|a, b| Expr::Call(Func::Max, vec![a, b]))
                    .unwrap_or(Expr::Int(0))
            })
            .collect()
    }

    /// Offset of every shelf (the sum of the shelves before it), then the total.
    pub fn shelf_offsets(&self) -> Vec<Expr> {
        let sizes = self.shelf_sizes();
        (0..=sizes.len())
            .map(|k| {
                simplify(
                    &sizes[..k]
                        .iter()
                        .cloned()
                        .reduce(|a, b| Expr::bin(BinaryOp::Add, a, b))
                        .unwrap_or(Expr::Int(0)),
                )
            })
            .collect()
    }

    /// Total bytes (a multiple of the alignment).
    pub fn total(&self) -> Expr {
        let sizes = self.shelf_sizes();
        simplify(
            &sizes
                .into_iter()
                .reduce(|a, b| Expr::bin(BinaryOp::Add, a, b))
                .unwrap_or(Expr::Int(0)),
        )
    }

    /// DaCe's size: the unaligned sum of all transients.
    pub fn dace_total(&self) -> Expr {
        simplify(
            &self
                .placements
                .iter()
                .map(|p| p.bytes.clone())
                .reduce(|a, b| Expr::bin(BinaryOp::Add, a, b))
                .unwrap_or(Expr::Int(0)),
        )
    }
}

/// The layouts of all storages.
pub type Layouts = IndexMap<Storage, StorageLayout>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::liveness::InPlace;

    fn slot(name: &str, elements: i64) -> ExternalSlot {
        ExternalSlot {
            sdfg: 0,
            name: name.into(),
            dtype: DType::Float64,
            elements: Expr::Int(elements),
            per_thread: false,
        }
    }

    fn liveness(ranges: &[(&str, u32, u32)], in_place: &[(u32, &str, &str)]) -> Liveness {
        Liveness {
            ranges: ranges
                .iter()
                .map(|(n, s, e)| ((0, n.to_string()), Live { start: *s, end: *e }))
                .collect(),
            in_place: in_place
                .iter()
                .map(|(at, r, w)| InPlace {
                    at: *at,
                    sdfg: 0,
                    read: r.to_string(),
                    written: w.to_string(),
                })
                .collect(),
            ..Liveness::default()
        }
    }

    fn shelves(slots: &[ExternalSlot], live: &Liveness) -> (usize, usize) {
        let l = StorageLayout::new(slots, live, 64, Layout::Packed, &|_| false);
        (l.shelves, l.aliased().len())
    }

    #[test]
    fn touching_ranges_share_only_at_an_in_place_map() {
        let slots = [slot("a", 100), slot("b", 100)];
        // Both live at position 5, no in-place map: two shelves.
        assert_eq!(
            shelves(&slots, &liveness(&[("a", 1, 5), ("b", 5, 9)], &[])),
            (2, 0)
        );
        // An in-place map at 5: one shelf, both aliased.
        let ip = liveness(&[("a", 1, 5), ("b", 5, 9)], &[(5, "a", "b")]);
        assert_eq!(shelves(&slots, &ip), (1, 2));
        // Disjoint ranges share without aliasing.
        assert_eq!(
            shelves(&slots, &liveness(&[("a", 1, 4), ("b", 5, 9)], &[])),
            (1, 0)
        );
        // ... but they hold one address, so neither may be `__restrict__`.
        let l = StorageLayout::new(
            &slots,
            &liveness(&[("a", 1, 4), ("b", 5, 9)], &[]),
            64,
            Layout::Packed,
            &|_| false,
        );
        assert_eq!(l.shared().len(), 2);
        let apart = StorageLayout::new(
            &slots,
            &liveness(&[("a", 1, 5), ("b", 5, 9)], &[]),
            64,
            Layout::Packed,
            &|_| false,
        );
        assert!(apart.shared().is_empty());
    }

    #[test]
    fn in_place_needs_equal_sizes_and_is_not_transitive_over_overlaps() {
        let ip = liveness(&[("a", 1, 5), ("b", 5, 9)], &[(5, "a", "b")]);
        assert_eq!(shelves(&[slot("a", 100), slot("b", 50)], &ip), (2, 0));
        // c overlaps b and is not in place with it: it gets its own shelf.
        let three = liveness(&[("a", 1, 5), ("b", 5, 9), ("c", 5, 9)], &[(5, "a", "b")]);
        let slots = [slot("a", 100), slot("b", 100), slot("c", 100)];
        assert_eq!(shelves(&slots, &three).0, 2);
    }

    #[test]
    fn sequential_layout_never_shares() {
        let ip = liveness(&[("a", 1, 5), ("b", 5, 9)], &[(5, "a", "b")]);
        let l = StorageLayout::new(
            &[slot("a", 100), slot("b", 100)],
            &ip,
            64,
            Layout::Sequential,
            &|_| false,
        );
        assert_eq!(l.shelves, 2);
    }

    #[test]
    fn shelves_in_order_of_start_with_sizes_and_offsets() {
        use crate::ir::simplify::eval_int;
        let live = liveness(&[("a", 1, 3), ("b", 4, 6), ("c", 2, 8), ("d", 9, 9)], &[]);
        let slots = [slot("a", 10), slot("b", 10), slot("c", 100), slot("d", 20)];
        let l = StorageLayout::new(&slots, &live, 64, Layout::Packed, &|_| false);
        let shelf: Vec<usize> = l.placements.iter().map(|p| p.shelf).collect();
        assert_eq!(shelf, [0, 0, 1, 0]);
        let int = |e: &Expr| eval_int(e, &mut |_| None);
        // Shelf 0: the larger of 80 and 160 bytes (80 counted once), aligned.
        let sizes: Vec<Option<i64>> = l.shelf_sizes().iter().map(int).collect();
        assert_eq!(sizes, [Some(192), Some(832)]);
        let offsets: Vec<Option<i64>> = l.shelf_offsets().iter().map(int).collect();
        assert_eq!(offsets, [Some(0), Some(192), Some(1024)]);
        assert_eq!(int(&l.total()), Some(1024));
        // A slot kept apart takes a shelf of its own that no other joins.
        let l = StorageLayout::new(&slots, &live, 64, Layout::Packed, &|s| s.name == "a");
        let shelf: Vec<usize> = l.placements.iter().map(|p| p.shelf).collect();
        assert_eq!(shelf, [0, 2, 1, 1]);
        // Equal sizes count once: no max of a size with itself.
        let n = |name: &str| ExternalSlot {
            elements: Expr::Sym("N".into()),
            ..slot(name, 0)
        };
        let live = liveness(&[("a", 1, 3), ("b", 4, 6)], &[]);
        let l = StorageLayout::new(&[n("a"), n("b")], &live, 64, Layout::Packed, &|_| false);
        assert_eq!(l.shelves, 1);
        assert!(!matches!(l.shelf_sizes()[0], Expr::Call(Func::Max, _)));
    }
}
