//! Ground values: the constants of the rule language and the cells of every fact.
//!
//! `Value` is the public, owned form used at the library's edges (loading facts,
//! queries, proofs, JSON). The evaluator keeps its own compact encoding internally and
//! converts at the boundary; nothing outside `eval` depends on that encoding.

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};

use serde::{Deserialize, Serialize};

/// The type of one relation column (Soufflé's primitive types).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ColumnType {
    /// Signed 64-bit integer (`number`).
    Number,
    /// Unsigned 64-bit integer (`unsigned`).
    Unsigned,
    /// 64-bit IEEE float (`float`).
    Float,
    /// Interned string (`symbol`).
    Symbol,
}

impl ColumnType {
    /// The type's name as written in a `.decl`.
    pub fn as_str(self) -> &'static str {
        match self {
            ColumnType::Number => "number",
            ColumnType::Unsigned => "unsigned",
            ColumnType::Float => "float",
            ColumnType::Symbol => "symbol",
        }
    }
}

impl ColumnType {
    /// `value` as a value of this column type, when it is one exactly: the one
    /// coercion of the library, used by loaders, program constants, goals and
    /// evaluation alike. An integer enters a `float` column only when the float holds
    /// it exactly (2^53 + 1 does not), an `unsigned` column only when it is not
    /// negative, a `number` column only when it fits in an `i64`; a float never enters
    /// an integer column and a symbol only a `symbol` one.
    pub fn coerce(self, value: &Value) -> Option<Value> {
        match (value, self) {
            (Value::Symbol(s), ColumnType::Symbol) => Some(Value::Symbol(s.clone())),
            _ => self.coerce_scalar(value),
        }
    }

    /// [`coerce`](Self::coerce) for numbers, unsigned and floats (symbols: `None`).
    pub fn coerce_scalar(self, value: &Value) -> Option<Value> {
        match (value, self) {
            (Value::Number(i), ColumnType::Number) => Some(Value::Number(*i)),
            (Value::Number(i), ColumnType::Unsigned) => u64::try_from(*i).ok().map(Value::Unsigned),
            (Value::Number(i), ColumnType::Float) => {
                let f = *i as f64;
                (f as i128 == i128::from(*i)).then_some(Value::Float(f))
            }
            (Value::Unsigned(u), ColumnType::Unsigned) => Some(Value::Unsigned(*u)),
            (Value::Unsigned(u), ColumnType::Number) => i64::try_from(*u).ok().map(Value::Number),
            (Value::Unsigned(u), ColumnType::Float) => {
                let f = *u as f64;
                (f as u128 == u128::from(*u) && f < 18_446_744_073_709_551_616.0)
                    .then_some(Value::Float(f))
            }
            (Value::Float(x), ColumnType::Float) => Some(Value::Float(*x)),
            _ => None,
        }
    }

    /// A cell of text (a CSV/TSV field, a goal constant) as a value of this type: an
    /// integer written in decimal is read as an integer and [`coerce`](Self::coerce)d,
    /// so `"2"` is `2.0` in a `float` column; other text is a `float` when it is a
    /// finite float, else only a `symbol`. A symbol column takes the text as it is.
    pub fn parse(self, text: &str) -> Option<Value> {
        if self == ColumnType::Symbol {
            return Some(Value::Symbol(text.to_string()));
        }
        let t = text.trim();
        if let Ok(i) = t.parse::<i64>() {
            return self.coerce_scalar(&Value::Number(i));
        }
        if let Ok(u) = t.parse::<u64>() {
            return self.coerce_scalar(&Value::Unsigned(u));
        }
        if self == ColumnType::Float && !t.is_empty() && !t.starts_with('+') {
            return t
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .map(Value::Float);
        }
        None
    }
}

impl fmt::Display for ColumnType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One ground value. Serializes as a JSON number (numbers, floats) or string (symbols).
///
/// Equality, hashing and ordering are total: floats compare by `f64::total_cmp`, so a
/// `Value` can key a map and rows sort deterministically. Across types the order is
/// Number < Unsigned < Float < Symbol (columns are single-typed, so this only matters
/// for heterogeneous debugging output).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Value {
    /// A `number`.
    Number(i64),
    /// An `unsigned`.
    Unsigned(u64),
    /// A `float`.
    Float(f64),
    /// A `symbol`.
    Symbol(String),
}

impl Value {
    /// The column type this value belongs to.
    pub fn column_type(&self) -> ColumnType {
        match self {
            Value::Number(_) => ColumnType::Number,
            Value::Unsigned(_) => ColumnType::Unsigned,
            Value::Float(_) => ColumnType::Float,
            Value::Symbol(_) => ColumnType::Symbol,
        }
    }

    /// Convert a JSON scalar into a value: integers become `Number` (or `Unsigned` when
    /// above `i64::MAX`), other numbers `Float`, strings `Symbol`. Anything else is `None`.
    pub fn from_json(v: &serde_json::Value) -> Option<Value> {
        match v {
            serde_json::Value::Number(n) => {
                if let Some(i) = n.as_i64() {
                    Some(Value::Number(i))
                } else if let Some(u) = n.as_u64() {
                    Some(Value::Unsigned(u))
                } else {
                    n.as_f64().map(Value::Float)
                }
            }
            serde_json::Value::String(s) => Some(Value::Symbol(s.clone())),
            _ => None,
        }
    }

    /// The JSON form: numbers as JSON numbers, symbols as strings. Non-finite floats,
    /// which JSON cannot carry, become `null`.
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Value::Number(i) => serde_json::Value::from(*i),
            Value::Unsigned(u) => serde_json::Value::from(*u),
            Value::Float(x) => serde_json::Number::from_f64(*x)
                .map(serde_json::Value::Number)
                .unwrap_or(serde_json::Value::Null),
            Value::Symbol(s) => serde_json::Value::String(s.clone()),
        }
    }

    fn rank(&self) -> u8 {
        match self {
            Value::Number(_) => 0,
            Value::Unsigned(_) => 1,
            Value::Float(_) => 2,
            Value::Symbol(_) => 3,
        }
    }
}

impl PartialEq for Value {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Value {}

impl PartialOrd for Value {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Value {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (Value::Number(a), Value::Number(b)) => a.cmp(b),
            (Value::Unsigned(a), Value::Unsigned(b)) => a.cmp(b),
            (Value::Float(a), Value::Float(b)) => a.total_cmp(b),
            (Value::Symbol(a), Value::Symbol(b)) => a.cmp(b),
            _ => self.rank().cmp(&other.rank()),
        }
    }
}

impl Hash for Value {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.rank().hash(state);
        match self {
            Value::Number(i) => i.hash(state),
            Value::Unsigned(u) => u.hash(state),
            Value::Float(x) => x.to_bits().hash(state),
            Value::Symbol(s) => s.hash(state),
        }
    }
}

/// Displays the value as it is written in the rule language: numbers bare, symbols
/// double-quoted with `"` and `\` escaped. This is the form used in a fact's text
/// (`member(42, "alpha")`).
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Number(i) => write!(f, "{i}"),
            Value::Unsigned(u) => write!(f, "{u}"),
            Value::Float(x) => {
                if x.is_finite() && x.fract() == 0.0 && x.abs() < 1e15 {
                    write!(f, "{x:.1}")
                } else {
                    write!(f, "{x}")
                }
            }
            Value::Symbol(s) => write_quoted(f, s),
        }
    }
}

/// Write `s` as a rule-language string literal, escaping what the lexer unescapes.
pub(crate) fn write_quoted(f: &mut fmt::Formatter<'_>, s: &str) -> fmt::Result {
    f.write_str("\"")?;
    for c in s.chars() {
        match c {
            '"' => f.write_str("\\\"")?,
            '\\' => f.write_str("\\\\")?,
            '\n' => f.write_str("\\n")?,
            '\t' => f.write_str("\\t")?,
            '\r' => f.write_str("\\r")?,
            '\0' => f.write_str("\\0")?,
            c => write!(f, "{c}")?,
        }
    }
    f.write_str("\"")
}

/// A confidence (or any score in [0, 1]) as every text output shows it: two
/// decimals (`1.00`, `0.65`). A positive value too small to show is `<0.01` and a value
/// below 1 that would round up is `>0.99`, so text never rounds evidence away or makes
/// it certain. JSON outputs carry the exact number instead.
pub fn format_confidence(c: f64) -> String {
    if c > 0.0 && c < 0.005 {
        "<0.01".to_string()
    } else if (0.995..1.0).contains(&c) {
        ">0.99".to_string()
    } else {
        format!("{c:.2}")
    }
}

/// The evaluator's encoding of a value of a known column type as one raw `u64` cell:
/// a `number`'s bits, an `unsigned`, a `float`'s bits, or a symbol's interner key.
/// Shared by loading (which types input cells straight into this form) and evaluation.
pub(crate) mod cell {
    use lasso::{Key, Rodeo, Spur};

    use super::{ColumnType, Value};

    /// Encode a value as a cell of a column of type `ty` (after [`ColumnType::coerce`]),
    /// interning symbols. `None` when the value is not one of the type.
    pub(crate) fn encode(value: &Value, ty: ColumnType, interner: &mut Rodeo) -> Option<u64> {
        match (value, ty) {
            (Value::Symbol(s), ColumnType::Symbol) => intern(interner, s),
            _ => encode_scalar(value, ty),
        }
    }

    /// Intern a symbol (`None` when the interner is full).
    #[inline]
    pub(crate) fn intern(interner: &mut Rodeo, s: &str) -> Option<u64> {
        interner
            .try_get_or_intern(s)
            .ok()
            .map(|k: Spur| k.into_usize() as u64)
    }

    /// Encode a number, unsigned or float value (no interner needed); symbols and
    /// inexact conversions are `None`.
    pub(crate) fn encode_scalar(value: &Value, ty: ColumnType) -> Option<u64> {
        Some(match ty.coerce_scalar(value)? {
            Value::Number(i) => i as u64,
            Value::Unsigned(u) => u,
            Value::Float(x) => x.to_bits(),
            Value::Symbol(_) => return None,
        })
    }

    /// The text of a symbol cell (empty for a key the interner does not know).
    #[inline]
    pub(crate) fn symbol(cell: u64, interner: &Rodeo) -> &str {
        Spur::try_from_usize(cell as usize)
            .and_then(|k| interner.try_resolve(&k))
            .unwrap_or("")
    }

    /// Decode a cell of a column of type `ty`.
    pub(crate) fn decode(cell: u64, ty: ColumnType, interner: &Rodeo) -> Value {
        match ty {
            ColumnType::Number => Value::Number(cell as i64),
            ColumnType::Unsigned => Value::Unsigned(cell),
            ColumnType::Float => Value::Float(f64::from_bits(cell)),
            ColumnType::Symbol => Value::Symbol(symbol(cell, interner).to_string()),
        }
    }
}

/// Render a fact the way the rule language writes it: `pred(a, b)`.
pub fn fact_text(predicate: &str, args: &[Value]) -> String {
    let mut s = String::with_capacity(predicate.len() + 2 + args.len() * 4);
    write_fact_text(&mut s, predicate, args);
    s
}

/// Append [`fact_text`] to `out`: lets a caller rendering many facts reuse one buffer.
pub(crate) fn write_fact_text(out: &mut String, predicate: &str, args: &[Value]) {
    use std::fmt::Write as _;
    out.push_str(predicate);
    out.push('(');
    for (i, a) in args.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        // Integers (the common case) skip the formatting machinery; the digits are
        // the same as `Display`'s.
        match a {
            Value::Number(n) => out.push_str(itoa::Buffer::new().format(*n)),
            Value::Unsigned(n) => out.push_str(itoa::Buffer::new().format(*n)),
            // Writing into a String cannot fail.
            _ => {
                let _ = write!(out, "{a}");
            }
        }
    }
    out.push(')');
}

#[cfg(test)]
mod tests {
    #[test]
    fn confidences_have_two_decimals_and_never_round_to_0_or_1() {
        use super::format_confidence as f;
        assert_eq!(f(1.0), "1.00");
        assert_eq!(f(0.9), "0.90");
        assert_eq!(f(0.8075), "0.81");
        assert_eq!(f(0.646), "0.65");
        assert_eq!(f(0.0), "0.00");
        assert_eq!(f(0.004), "<0.01");
        assert_eq!(f(0.996), ">0.99");
    }

    use super::*;

    #[test]
    fn json_round_trip_keeps_types() {
        let v: Vec<Value> = serde_json::from_str(r#"[42, -1, 1.5, "x"]"#).unwrap();
        assert_eq!(
            v,
            vec![
                Value::Number(42),
                Value::Number(-1),
                Value::Float(1.5),
                Value::Symbol("x".into())
            ]
        );
        assert_eq!(serde_json::to_string(&v).unwrap(), r#"[42,-1,1.5,"x"]"#);
    }

    #[test]
    fn coercion_is_exact() {
        use ColumnType::*;
        let big = (1i64 << 53) + 1;
        assert_eq!(
            Float.coerce(&Value::Number(1 << 53)),
            Some(Value::Float(9007199254740992.0))
        );
        assert_eq!(Float.coerce(&Value::Number(big)), None);
        assert_eq!(Float.coerce(&Value::Unsigned(u64::MAX)), None);
        assert_eq!(Unsigned.coerce(&Value::Number(-1)), None);
        assert_eq!(Number.coerce(&Value::Unsigned(7)), Some(Value::Number(7)));
        assert_eq!(Number.coerce(&Value::Float(1.0)), None);
        assert_eq!(Symbol.coerce(&Value::Number(1)), None);
        assert_eq!(Float.parse("2"), Some(Value::Float(2.0)));
        assert_eq!(Float.parse(" 2.5 "), Some(Value::Float(2.5)));
        assert_eq!(Float.parse("9007199254740993"), None);
        assert_eq!(Float.parse("inf"), None);
        assert_eq!(Number.parse("1.0"), None);
        assert_eq!(
            Unsigned.parse("18446744073709551615"),
            Some(Value::Unsigned(u64::MAX))
        );
        assert_eq!(Symbol.parse(" x "), Some(Value::Symbol(" x ".into())));
    }

    #[test]
    fn fact_text_quotes_symbols() {
        let args = [Value::Number(42), Value::Symbol("a\"b".into())];
        assert_eq!(fact_text("member", &args), r#"member(42, "a\"b")"#);
    }

    #[test]
    fn floats_order_totally() {
        let mut v = [
            Value::Float(2.0),
            Value::Float(f64::NAN),
            Value::Float(-1.0),
        ];
        v.sort();
        assert_eq!(v[0], Value::Float(-1.0));
        assert_eq!(v[1], Value::Float(2.0));
    }

    fn any_value() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        prop_oneof![
            any::<i64>().prop_map(Value::Number),
            any::<u64>().prop_map(Value::Unsigned),
            any::<f64>().prop_map(Value::Float),
            ".{0,8}".prop_map(Value::Symbol),
        ]
    }

    proptest::proptest! {
        /// The integer fast path writes exactly what `Display` writes, and appending
        /// to a used buffer keeps what was there.
        #[test]
        fn fact_text_matches_display(args in proptest::collection::vec(any_value(), 0..5)) {
            let shown: Vec<String> = args.iter().map(ToString::to_string).collect();
            let expected = format!("p({})", shown.join(", "));
            proptest::prop_assert_eq!(fact_text("p", &args), expected.clone());
            let mut out = String::from("x ");
            write_fact_text(&mut out, "p", &args);
            proptest::prop_assert_eq!(out, format!("x {expected}"));
        }
    }
}
