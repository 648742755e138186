//! Constant values: scalars, complex numbers and nested arrays.

use super::*;

/// One value of a constant: a JSON number or bool, or the string DaCe
/// writes for a numpy scalar (`str(np.bool_(True))` is `"True"`,
/// `str(np.float32(0.25))` is `"0.25"`, also `"inf"`, `"-inf"`, `"nan"`).
pub(super) fn scalar_value(v: &Json, path: &str) -> Result<ConstValue> {
    match v {
        Json::Number(n) => {
            if let Some(i) = n.as_i64() {
                Ok(ConstValue::Int(i.into()))
            } else if let Some(u) = n.as_u64() {
                Ok(ConstValue::Int(u.into()))
            } else {
                n.as_f64()
                    .map(ConstValue::Float)
                    .ok_or_else(|| Error::format(path, "number out of range"))
            }
        }
        Json::Bool(b) => Ok(ConstValue::Bool(*b)),
        Json::String(s) => {
            let t = s.trim();
            match t {
                "True" | "true" => return Ok(ConstValue::Bool(true)),
                "False" | "false" => return Ok(ConstValue::Bool(false)),
                _ => {}
            }
            if let Ok(i) = t.parse::<i128>() {
                return Ok(ConstValue::Int(i));
            }
            let numeric = t
                .trim_start_matches(['+', '-'])
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_digit() || c == '.');
            let special = matches!(
                t.trim_start_matches(['+', '-']),
                "inf" | "infinity" | "Infinity" | "nan" | "NaN"
            );
            if (numeric || special)
                && let Ok(f) = t.parse::<f64>()
            {
                return Ok(ConstValue::Float(f));
            }
            if t.ends_with('j') || t.ends_with("j)") {
                return Err(Error::unsupported(
                    path,
                    format!("complex constant value '{t}'"),
                ));
            }
            Err(Error::format(
                path,
                format!("expected a number or a boolean, found the string '{t}'"),
            ))
        }
        other => Err(Error::format(
            path,
            format!("expected a number, found {}", kind_of(other)),
        )),
    }
}

/// A value that the constant's type cannot hold (an integer out of range, a
/// fraction or a non-finite value in an integer type).
pub(super) fn check_constant_value(v: ConstValue, t: DType) -> std::result::Result<(), String> {
    let Some((lo, hi)) = t.int_range() else {
        return Ok(());
    };
    let i = match v {
        ConstValue::Float(f) if f.fract() != 0.0 || !f.is_finite() => {
            return Err(format!(
                "the value {f} is not an integer, but the constant is {t}"
            ));
        }
        other => other.as_int().unwrap_or_default(),
    };
    if i < lo || i > hi {
        return Err(format!(
            "the value {i} does not fit the constant's type {t}"
        ));
    }
    Ok(())
}

/// One element of a constant: a number, or for complex types also Python's
/// repr of a complex number (`"(1+2j)"`, `"-1.5j"`, `"(nan-infj)"`), as DaCe
/// stores them; (real, imaginary) parts.
pub(super) fn element_value(v: &Json, path: &str, complex: bool) -> Result<(ConstValue, f64)> {
    match v {
        Json::String(s) if complex => parse_complex(s)
            .map(|(re, im)| (ConstValue::Float(re), im))
            .ok_or_else(|| Error::format(path, format!("invalid complex number {s:?}"))),
        other => Ok((scalar_value(other, path)?, 0.0)),
    }
}

/// Python's `repr(complex)`: `1j`, `(1+2j)`, `(-0-1j)`, `(1e+300+infj)`.
pub fn parse_complex(s: &str) -> Option<(f64, f64)> {
    let t = s.trim();
    let t = t
        .strip_prefix('(')
        .and_then(|x| x.strip_suffix(')'))
        .unwrap_or(t);
    let body = t.strip_suffix('j').or_else(|| t.strip_suffix('J'));
    let Some(body) = body else {
        return t.parse::<f64>().ok().map(|re| (re, 0.0));
    };
    let num = |x: &str| -> Option<f64> {
        match x.trim_start_matches('+') {
            "nan" | "-nan" => Some(f64::NAN),
            "inf" => Some(f64::INFINITY),
            "-inf" => Some(f64::NEG_INFINITY),
            y => y.parse::<f64>().ok(),
        }
    };
    // The sign that splits the parts: the last '+'/'-' not at the start and
    // not right after an exponent 'e'.
    let b = body.as_bytes();
    let split = (1..b.len())
        .rev()
        .find(|&i| (b[i] == b'+' || b[i] == b'-') && !matches!(b[i - 1], b'e' | b'E'));
    match split {
        Some(i) => Some((num(&body[..i])?, num(&body[i..])?)),
        None => Some((0.0, num(body)?)),
    }
}

pub(super) fn flatten(
    v: &Json,
    out: &mut Vec<(ConstValue, f64)>,
    shape: &mut Vec<usize>,
    depth: usize,
    path: &str,
    complex: bool,
) -> Result<()> {
    match v {
        Json::Array(items) => {
            if shape.len() == depth {
                shape.push(items.len());
            } else if shape[depth] != items.len() {
                return Err(Error::format(path, "ragged constant array"));
            }
            for (i, x) in items.iter().enumerate() {
                flatten(x, out, shape, depth + 1, &ptr(path, i), complex)?;
            }
            Ok(())
        }
        other => {
            out.push(element_value(other, path, complex)?);
            Ok(())
        }
    }
}
