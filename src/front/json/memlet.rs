//! Subsets, memlets and schedules.

use super::*;

/// Reads a subset; `path` builds its JSON pointer, only for an error.
pub(super) fn subset(v: &Json, path: &dyn Fn() -> String) -> Result<Option<Subset>> {
    if v.is_null() {
        return Ok(None);
    }
    let num = |x: &Json, at: &dyn Fn() -> String| located(|p| sym(x, p), at);
    match located(|p| type_of(v, p), path)? {
        "Range" => {
            let ranges = located(|p| get_array(v, "ranges", p), path)?;
            let mut out = Vec::with_capacity(ranges.len());
            for (i, r) in ranges.iter().enumerate() {
                let p = || ptr(&ptr(&path(), "ranges"), i);
                let field = |k: &str, default: i64| -> Result<Expr> {
                    match r.get(k) {
                        None => Ok(Expr::Int(default)),
                        Some(x) => num(x, &|| ptr(&p(), k)),
                    }
                };
                let bound = |k: &str| -> Result<Expr> {
                    let x = located(|q| get(r, k, q), p)?;
                    num(x, &|| ptr(&p(), k))
                };
                out.push(RangeDim {
                    start: bound("start")?,
                    end: bound("end")?,
                    step: field("step", 1)?,
                    tile: field("tile", 1)?,
                });
            }
            Ok(Some(out))
        }
        "Indices" => {
            let idx = located(|p| get_array(v, "indices", p), path)?;
            let mut out = Vec::with_capacity(idx.len());
            for (i, x) in idx.iter().enumerate() {
                let e = num(x, &|| ptr(&ptr(&path(), "indices"), i))?;
                out.push(RangeDim {
                    start: e.clone(),
                    end: e,
                    step: Expr::Int(1),
                    tile: Expr::Int(1),
                });
            }
            Ok(Some(out))
        }
        other => Err(Error::unsupported(
            ptr(&path(), "type"),
            format!("subset type '{other}'"),
        )),
    }
}

/// Reads a memlet's attributes; `path` builds their JSON pointer, only for an error.
pub(super) fn memlet<'a>(v: Option<&'a Json<'a>>, path: &dyn Fn() -> String) -> Result<Memlet> {
    let m: MemletDto = located(|p| dto(v, p), path)?;
    let subset_of = |k: &str| -> Result<Option<Subset>> {
        match member(v, k) {
            None => Ok(None),
            Some(x) => subset(x, &|| ptr(&path(), k)),
        }
    };
    let wcr = match &m.wcr {
        Some(w) => Some(located(|p| parse_wcr(w, p), || ptr(&path(), "wcr"))?),
        None => None,
    };
    let volume = match member(v, "volume") {
        None | Some(Json::Null) => Expr::Int(1),
        Some(x) => located(|p| sym(x, p), || ptr(&path(), "volume"))?,
    };
    Ok(Memlet {
        data: m.data,
        subset: subset_of("subset")?,
        other_subset: subset_of("other_subset")?,
        wcr,
        dynamic: m.dynamic,
        volume,
        is_data_src: m.is_data_src,
    })
}

pub(super) fn schedule(s: Option<&str>, path: &str) -> Result<Schedule> {
    let s = s.unwrap_or("Default");
    Schedule::from_dace_name(s).ok_or_else(|| Error::unsupported(path, format!("schedule '{s}'")))
}
