//! Struct types held by value (DaCe's `dtypes.struct` as an element type)
//! and the checks of tasklet code that reads their fields or builds them.

use crate::ir::dtype::DType;
use crate::ir::expr::Expr;

/// A struct type held by value: its C name and its scalar fields in order,
/// interned so that [`DType`] stays `Copy`. Two records are the same type
/// when name and fields are the same.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Record(&'static RecordDef);

/// The definition behind a [`Record`].
#[derive(Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RecordDef {
    /// The C type name.
    pub name: String,
    /// Fields in declaration order: name and element type (a scalar).
    pub fields: Vec<(String, DType)>,
}

impl Record {
    /// Interns the record type `name` with `fields` (each a scalar type).
    pub fn new(name: &str, fields: Vec<(String, DType)>) -> Record {
        use std::collections::BTreeSet;
        use std::sync::Mutex;
        static DEFS: Mutex<BTreeSet<&'static RecordDef>> = Mutex::new(BTreeSet::new());
        let def = RecordDef {
            name: name.to_string(),
            fields,
        };
        let mut defs = DEFS.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(d) = defs.get(&def) {
            return Record(d);
        }
        let d: &'static RecordDef = Box::leak(Box::new(def));
        defs.insert(d);
        Record(d)
    }

    /// The C type name.
    pub fn name(self) -> &'static str {
        &self.0.name
    }

    /// The fields in declaration order.
    pub fn fields(self) -> &'static [(String, DType)] {
        &self.0.fields
    }

    /// The type of field `name`.
    pub fn field(self, name: &str) -> Option<DType> {
        self.0.fields.iter().find(|(n, _)| n == name).map(|f| f.1)
    }

    /// C's alignment: the largest of its fields'.
    pub fn align(self) -> u64 {
        self.0.fields.iter().map(|f| f.1.align()).max().unwrap_or(1)
    }

    /// C's `sizeof`: each field at its alignment, the end padded to the struct's.
    pub fn size(self) -> u64 {
        let end = self
            .0
            .fields
            .iter()
            .fold(0u64, |at, (_, t)| at.next_multiple_of(t.align()) + t.size());
        end.max(1u64).next_multiple_of(self.align())
    }
}

/// Why `e` cannot be written: a field read of a value that is no struct
/// or that has no such field, or a struct built of an unknown type or
/// with an unknown field. `type_of` gives a name's type, `named` the
/// record types in scope by name.
pub fn record_error(
    e: &Expr,
    type_of: &dyn Fn(&str) -> Option<DType>,
    named: &dyn Fn(&str) -> Option<Record>,
) -> Option<String> {
    let mut err = None;
    visit(e, &mut |x| {
        if err.is_some() {
            return;
        }
        match x {
            Expr::Field(base, f) => match value_type(base, type_of, named) {
                Some(DType::Record(r)) if r.field(f).is_none() => {
                    err = Some(format!("struct '{}' has no field '{f}'", r.name()));
                }
                Some(DType::Record(_)) => {}
                _ => err = Some(format!("field '{f}' of a value that is no struct")),
            },
            Expr::Record(t, fields) => match named(t) {
                None => {
                    err = Some(format!(
                        "call of '{t}' with keyword arguments ('{t}' is no struct type of this program)"
                    ));
                }
                Some(r) => {
                    if let Some((f, _)) = fields.iter().find(|(f, _)| r.field(f).is_none()) {
                        err = Some(format!("struct '{t}' has no field '{f}'"));
                    }
                }
            },
            _ => {}
        }
    });
    err
}

/// The type of a value a field is read from (a name, an element, a field
/// or a struct built in place); `None` for anything else.
fn value_type(
    e: &Expr,
    type_of: &dyn Fn(&str) -> Option<DType>,
    named: &dyn Fn(&str) -> Option<Record>,
) -> Option<DType> {
    match e {
        Expr::Sym(n) | Expr::Index(n, _) => type_of(n),
        Expr::Field(base, f) => match value_type(base, type_of, named)? {
            DType::Record(r) => r.field(f),
            _ => None,
        },
        Expr::Record(t, _) => named(t).map(DType::Record),
        _ => None,
    }
}

/// Calls `f` on `e` and every expression below it.
fn visit(e: &Expr, f: &mut dyn FnMut(&Expr)) {
    f(e);
    match e {
        Expr::Int(_) | Expr::Float(_) | Expr::Bool(_) | Expr::Sym(_) => {}
        Expr::Unary(_, a) | Expr::Field(a, _) => visit(a, f),
        Expr::Binary(_, a, b) => {
            visit(a, f);
            visit(b, f);
        }
        Expr::Call(_, args) | Expr::Index(_, args) => args.iter().for_each(|a| visit(a, f)),
        Expr::Ternary(c, a, b) => {
            visit(c, f);
            visit(a, f);
            visit(b, f);
        }
        Expr::Record(_, fields) => fields.iter().for_each(|(_, a)| visit(a, f)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_is_c_layout() {
        let pair = Record::new(
            "pair",
            vec![("idx".into(), DType::Int32), ("val".into(), DType::Float64)],
        );
        assert_eq!((pair.size(), pair.align()), (16, 8));
        let v3 = Record::new(
            "vec3d",
            vec![
                ("x".into(), DType::Float32),
                ("y".into(), DType::Float32),
                ("z".into(), DType::Float32),
            ],
        );
        assert_eq!((v3.size(), v3.align()), (12, 4));
        let mixed = Record::new(
            "m",
            vec![
                ("a".into(), DType::Bool),
                ("c".into(), DType::Int64),
                ("b".into(), DType::Int16),
            ],
        );
        assert_eq!((mixed.size(), mixed.align()), (24, 8));
        assert_eq!(DType::Record(pair).size(), 16);
    }

    #[test]
    fn records_are_one_type_per_name_and_fields() {
        let a = Record::new("p", vec![("x".into(), DType::Int32)]);
        let b = Record::new("p", vec![("x".into(), DType::Int32)]);
        let c = Record::new("p", vec![("x".into(), DType::Int64)]);
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn unknown_fields_and_types_are_named() {
        let pair = Record::new(
            "pair",
            vec![("idx".into(), DType::Int32), ("val".into(), DType::Float64)],
        );
        let type_of = |n: &str| match n {
            "p" => Some(DType::Record(pair)),
            "x" => Some(DType::Float64),
            _ => None,
        };
        let named = |n: &str| (n == "pair").then_some(pair);
        let check = |src: &str| {
            record_error(
                &crate::front::python::parse_wcr_body(src).unwrap(),
                &type_of,
                &named,
            )
        };
        assert_eq!(check("p.val + pair(idx=1, val=x).idx"), None);
        assert_eq!(
            check("p.value").unwrap(),
            "struct 'pair' has no field 'value'"
        );
        assert_eq!(
            check("x.val").unwrap(),
            "field 'val' of a value that is no struct"
        );
        assert!(
            check("quad(a=1)")
                .unwrap()
                .contains("'quad' is no struct type")
        );
        assert_eq!(
            check("pair(idx=1, w=2)").unwrap(),
            "struct 'pair' has no field 'w'"
        );
    }
}
