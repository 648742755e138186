//! Write-conflict resolution lambdas.

use super::*;

/// Parses `lambda a, b: body` as DaCe writes write-conflict resolutions.
pub fn parse_wcr(text: &str, path: &str) -> Result<Wcr> {
    let mut s = text.trim();
    while s.starts_with('(') && s.ends_with(')') {
        s = s[1..s.len() - 1].trim();
    }
    let bad = || {
        Error::new(
            ErrorKind::Code,
            path,
            format!("write-conflict resolution '{text}' is not a two-argument lambda"),
        )
    };
    let rest = s.strip_prefix("lambda").ok_or_else(bad)?;
    let (params, body) = rest.split_once(':').ok_or_else(bad)?;
    let params: Vec<&str> = params.split(',').map(str::trim).collect();
    if params.len() != 2 || params.iter().any(|p| p.is_empty()) {
        return Err(bad());
    }
    let (a, b) = (params[0].to_string(), params[1].to_string());
    let body =
        python::parse_wcr_body(body).map_err(|e| py_err(e, path, "write-conflict resolution"))?;
    let kind = classify_wcr(&a, &b, &body);
    Ok(Wcr {
        text: text.to_string(),
        kind,
        params: (a, b),
        body,
    })
}

pub(super) fn classify_wcr(a: &str, b: &str, body: &Expr) -> WcrKind {
    let is_pair = |x: &Expr, y: &Expr| matches!((x, y), (Expr::Sym(p), Expr::Sym(q)) if (p == a && q == b) || (p == b && q == a));
    match body {
        Expr::Binary(op, x, y) if is_pair(x, y) => match op {
            BinaryOp::Add => WcrKind::Sum,
            BinaryOp::Mul => WcrKind::Product,
            BinaryOp::And => WcrKind::LogicalAnd,
            BinaryOp::Or => WcrKind::LogicalOr,
            BinaryOp::BitAnd => WcrKind::BitAnd,
            BinaryOp::BitOr => WcrKind::BitOr,
            BinaryOp::BitXor => WcrKind::BitXor,
            _ => WcrKind::Custom,
        },
        Expr::Call(Func::Min, args) if args.len() == 2 && is_pair(&args[0], &args[1]) => {
            WcrKind::Min
        }
        Expr::Call(Func::Max, args) if args.len() == 2 && is_pair(&args[0], &args[1]) => {
            WcrKind::Max
        }
        Expr::Sym(s) if s == b => WcrKind::Replace,
        _ => WcrKind::Custom,
    }
}
