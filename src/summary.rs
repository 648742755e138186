//! The per-file summary `sdfgc check` prints.

use std::collections::BTreeMap;
use std::fmt;

use crate::ir::*;

/// Counts of the elements of an SDFG, nested SDFGs included.
#[derive(Default, Debug)]
pub struct Summary {
    /// Top-level SDFG name.
    pub name: String,
    /// Dataflow states.
    pub states: usize,
    /// Loop regions.
    pub loops: usize,
    /// Conditional blocks.
    pub conditionals: usize,
    /// Plain control-flow regions.
    pub regions: usize,
    /// Break/continue/return blocks.
    pub jumps: usize,
    /// Maps by schedule name.
    pub maps: BTreeMap<&'static str, usize>,
    /// Tasklets by language.
    pub tasklets: BTreeMap<&'static str, usize>,
    /// Nested SDFG nodes.
    pub nested: usize,
    /// Library nodes by class name.
    pub libraries: BTreeMap<String, usize>,
    /// Transients by "storage/lifetime".
    pub transients: BTreeMap<String, usize>,
    /// Non-transient arrays and scalars of the top-level SDFG.
    pub arguments: usize,
}

impl Summary {
    /// Summarises `sdfg`.
    pub fn of(sdfg: &Sdfg) -> Summary {
        let mut s = Summary {
            name: sdfg.name.clone(),
            ..Default::default()
        };
        s.arguments = sdfg.arrays.values().filter(|d| !d.transient).count();
        s.add_sdfg(sdfg);
        s
    }

    fn add_sdfg(&mut self, sdfg: &Sdfg) {
        for d in sdfg.arrays.values().filter(|d| d.transient) {
            let key = format!("{}/{}", d.storage.dace_name(), d.lifetime.dace_name());
            *self.transients.entry(key).or_default() += 1;
        }
        self.add_region(&sdfg.body);
    }

    fn add_region(&mut self, r: &Region) {
        for b in &r.blocks {
            match &b.kind {
                BlockKind::State(st) => {
                    self.states += 1;
                    for n in &st.nodes {
                        match &n.kind {
                            NodeKind::MapEntry(m) => {
                                *self.maps.entry(m.schedule.dace_name()).or_default() += 1
                            }
                            NodeKind::Tasklet(t) => {
                                let l = if t.code.language == Language::Python {
                                    "Python"
                                } else {
                                    "CPP"
                                };
                                *self.tasklets.entry(l).or_default() += 1;
                            }
                            NodeKind::Nested(ns) => {
                                self.nested += 1;
                                self.add_sdfg(&ns.sdfg);
                            }
                            NodeKind::Library(l) => {
                                let class =
                                    l.classpath.rsplit('.').next().unwrap_or("").to_string();
                                *self.libraries.entry(class).or_default() += 1;
                            }
                            NodeKind::Access(_) | NodeKind::MapExit { .. } => {}
                        }
                    }
                }
                BlockKind::Region(inner) => {
                    match inner.kind {
                        RegionKind::Loop(_) => self.loops += 1,
                        RegionKind::Plain => self.regions += 1,
                    }
                    self.add_region(inner);
                }
                BlockKind::Conditional(branches) => {
                    self.conditionals += 1;
                    for (_, body) in branches {
                        self.add_region(body);
                    }
                }
                BlockKind::Break | BlockKind::Continue | BlockKind::Return => self.jumps += 1,
            }
        }
    }
}

fn list<K: fmt::Display>(m: &BTreeMap<K, usize>) -> String {
    if m.is_empty() {
        return "none".into();
    }
    m.iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn total<K>(m: &BTreeMap<K, usize>) -> usize {
            m.values().sum()
        }
        writeln!(f, "SDFG {}", self.name)?;
        writeln!(
            f,
            "  control flow:  {} states, {} loops, {} conditionals, {} regions, {} break/continue/return",
            self.states, self.loops, self.conditionals, self.regions, self.jumps
        )?;
        writeln!(f, "  arguments:     {}", self.arguments)?;
        writeln!(
            f,
            "  maps:          {} ({})",
            total(&self.maps),
            list(&self.maps)
        )?;
        writeln!(
            f,
            "  tasklets:      {} ({})",
            total(&self.tasklets),
            list(&self.tasklets)
        )?;
        writeln!(f, "  nested SDFGs:  {}", self.nested)?;
        writeln!(f, "  library nodes: {}", list(&self.libraries))?;
        write!(
            f,
            "  transients:    {} ({})",
            total(&self.transients),
            list(&self.transients)
        )
    }
}
