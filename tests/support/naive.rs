//! A naive reference evaluator, written independently of `src/eval`.
//!
//! It exists to be obviously right rather than fast: it stratifies the program itself
//! (from the rules' dependencies, not from `Program::strata`), then, level by level,
//! applies every rule to the *full* relations with nested loops until no fact is added
//! and no confidence improves. Property tests compare the real, semi-naive engine with
//! it, so the two share nothing but the checked [`Program`] and the value type.
//!
//! Semantics (DESIGN.md, "Semantics"):
//! - a derivation's confidence is `rule confidence × min(positive premise confidences)`
//!   (the rule's confidence when it has none); an aggregate contributes the minimum
//!   confidence of the facts it aggregated over, or nothing when it aggregated none;
//! - a fact's confidence is the maximum over its derivations and input records;
//! - arithmetic that overflows or divides by zero drops the binding;
//! - `count` of nothing is 0; `sum`, `min`, `max` of nothing bind nothing.

use std::collections::BTreeMap;

use prooflog::Value;
use prooflog::ir::{
    AggFunc, ArithOp, CmpOp, Expr, Functor, Literal, Program, RelId, Term, TestFn, VarId,
};
use prooflog::store::InputFact;
use prooflog::value::ColumnType;

/// Relation name → (row → confidence).
pub type Relations = BTreeMap<String, BTreeMap<Vec<Value>, f64>>;

/// Rows of every relation by id, each with its confidence.
type Db = Vec<BTreeMap<Vec<Value>, f64>>;

/// A partial assignment of a rule's variables.
type Env = Vec<Option<Value>>;

/// The premises used so far: relation and row of each positive fact matched (for an
/// aggregate, every fact it aggregated).
type Trail = Vec<(RelId, Vec<Value>)>;

/// What a solution reports: the assignment, the premises' minimum confidence (`None`
/// when there is no premise) and the premises.
type Emit<'a> = dyn FnMut(&Env, Option<f64>, &Trail) + 'a;

/// A fact by relation and values.
pub type FactKey = (RelId, Vec<Value>);

/// A derivation's rank key: height, and rule (`None` for an input record).
pub type Preferred = (u32, Option<u32>);

/// Evaluate `program` over its own source facts (confidence 1.0) and `inputs`.
/// Every relation of the program appears in the result, empty or not.
pub fn evaluate(program: &Program, inputs: &[InputFact]) -> Relations {
    let mut db: Db = vec![BTreeMap::new(); program.relations().len()];
    for fact in program.facts() {
        raise(&mut db[fact.rel as usize], fact.args.clone(), 1.0);
    }
    for fact in inputs {
        raise(
            &mut db[fact.rel as usize],
            fact.args.clone(),
            fact.confidence,
        );
    }

    let levels = stratify(program);
    let top = levels.iter().copied().max().unwrap_or(0);
    for level in 0..=top {
        let rules: Vec<_> = program
            .rules()
            .iter()
            .filter(|r| levels[r.head.rel as usize] == level)
            .collect();
        loop {
            let mut derived: Vec<(RelId, Vec<Value>, f64)> = Vec::new();
            for rule in &rules {
                let mut env: Env = vec![None; rule.vars.len()];
                let mut trail = Trail::new();
                solve(
                    &db,
                    &rule.body,
                    &mut env,
                    None,
                    &mut trail,
                    &mut |env, conf, _| {
                        let args: Option<Vec<Value>> =
                            rule.head.args.iter().map(|e| eval_expr(e, env)).collect();
                        if let Some(args) = args {
                            let c = rule.confidence * conf.unwrap_or(1.0);
                            derived.push((rule.head.rel, args, c));
                        }
                    },
                );
            }
            let mut changed = false;
            for (rel, args, conf) in derived {
                changed |= raise(&mut db[rel as usize], args, conf);
            }
            if !changed {
                break;
            }
        }
    }

    program
        .relations()
        .iter()
        .zip(db)
        .map(|(r, rows)| (r.name.clone(), rows))
        .collect()
}

/// The preferred derivation of every fact of `result` (which must be
/// [`evaluate`]'s output for the same program and inputs), as DESIGN.md orders them:
/// highest confidence, then least height, then lowest rule index. An input record
/// that reaches the fact's confidence is a derivation of height 0 and rule `None`.
///
/// Heights are computed as a least fixpoint over derivations that reach their fact's
/// final confidence: height = 1 + the greatest height among the premises.
pub fn preferred_derivations(
    program: &Program,
    inputs: &[InputFact],
    result: &Relations,
) -> BTreeMap<FactKey, Preferred> {
    let db: Db = program
        .relations()
        .iter()
        .map(|r| result.get(&r.name).cloned().unwrap_or_default())
        .collect();
    let mut best: BTreeMap<FactKey, Preferred> = BTreeMap::new();
    let sourced = program.facts().iter().map(|f| (f.rel, &f.args, 1.0));
    let given = inputs.iter().map(|f| (f.rel, &f.args, f.confidence));
    for (rel, args, c) in sourced.chain(given) {
        if db[rel as usize].get(args) == Some(&c) {
            best.insert((rel, args.clone()), (0, None));
        }
    }
    loop {
        let mut found: Vec<(FactKey, Preferred)> = Vec::new();
        for rule in program.rules() {
            let mut env: Env = vec![None; rule.vars.len()];
            let mut trail = Trail::new();
            solve(
                &db,
                &rule.body,
                &mut env,
                None,
                &mut trail,
                &mut |env, conf, trail| {
                    let Some(args) = rule
                        .head
                        .args
                        .iter()
                        .map(|e| eval_expr(e, env))
                        .collect::<Option<Vec<Value>>>()
                    else {
                        return;
                    };
                    let c = rule.confidence * conf.unwrap_or(1.0);
                    if db[rule.head.rel as usize].get(&args) != Some(&c) {
                        return;
                    }
                    let mut height = 0;
                    for premise in trail {
                        match best.get(premise) {
                            Some((h, _)) => height = height.max(*h),
                            None => return,
                        }
                    }
                    found.push(((rule.head.rel, args), (height + 1, Some(rule.id))));
                },
            );
        }
        let mut changed = false;
        for (fact, candidate) in found {
            let slot = best.entry(fact).or_insert((u32::MAX, None));
            let better = candidate.0 < slot.0
                || (candidate.0 == slot.0 && slot.1.is_some_and(|r| Some(r) > candidate.1));
            if better {
                *slot = candidate;
                changed = true;
            }
        }
        if !changed {
            return best;
        }
    }
}

/// Insert a fact or raise its confidence; true when something changed.
fn raise(rows: &mut BTreeMap<Vec<Value>, f64>, args: Vec<Value>, conf: f64) -> bool {
    match rows.get_mut(&args) {
        Some(old) if *old >= conf => false,
        Some(old) => {
            *old = conf;
            true
        }
        None => {
            rows.insert(args, conf);
            true
        }
    }
}

/// The level of every relation: a rule's head is at least as high as its positive
/// premises and strictly higher than what it negates or aggregates over.
fn stratify(program: &Program) -> Vec<usize> {
    let n = program.relations().len();
    let mut level = vec![0usize; n];
    loop {
        let mut changed = false;
        for rule in program.rules() {
            let h = rule.head.rel as usize;
            let mut need = 0;
            for lit in &rule.body {
                match lit {
                    Literal::Atom(a) => need = need.max(level[a.rel as usize]),
                    Literal::Negated(a) => need = need.max(level[a.rel as usize] + 1),
                    Literal::Aggregate { body, .. } => {
                        for inner in body {
                            if let Literal::Atom(a) | Literal::Negated(a) = inner {
                                need = need.max(level[a.rel as usize] + 1);
                            }
                        }
                    }
                    Literal::Compare { .. } | Literal::Test { .. } => {}
                }
            }
            if level[h] < need {
                level[h] = need;
                changed = true;
                assert!(need <= n, "program is not stratifiable");
            }
        }
        if !changed {
            return level;
        }
    }
}

/// Enumerate every way to satisfy `lits` extending `env`, calling `emit` with the
/// complete assignment and the minimum confidence of the premises used (`None` when no
/// premise was used).
fn solve(
    db: &Db,
    lits: &[Literal],
    env: &mut Env,
    conf: Option<f64>,
    trail: &mut Trail,
    emit: &mut Emit<'_>,
) {
    let Some((lit, rest)) = lits.split_first() else {
        emit(env, conf, trail);
        return;
    };
    match lit {
        Literal::Atom(atom) => {
            for (row, &c) in &db[atom.rel as usize] {
                let mut bound: Vec<VarId> = Vec::new();
                if unify(&atom.args, row, env, &mut bound) {
                    trail.push((atom.rel, row.clone()));
                    solve(db, rest, env, Some(min_conf(conf, c)), trail, emit);
                    trail.pop();
                }
                for v in bound {
                    env[v as usize] = None;
                }
            }
        }
        Literal::Negated(atom) => {
            let present = db[atom.rel as usize].keys().any(|row| {
                atom.args.iter().zip(row).all(|(t, x)| match t {
                    Term::Var(v) => env[*v as usize].as_ref() == Some(x),
                    Term::Const(c) => c == x,
                    Term::Wildcard => true,
                })
            });
            if !present {
                solve(db, rest, env, conf, trail, emit);
            }
        }
        Literal::Compare {
            op,
            left,
            right,
            assigns,
            ..
        } => {
            let target = assigns.filter(|v| env[*v as usize].is_none());
            if let Some(v) = target {
                let source = if *left == Expr::Var(v) { right } else { left };
                if let Some(value) = eval_expr(source, env) {
                    env[v as usize] = Some(value);
                    solve(db, rest, env, conf, trail, emit);
                    env[v as usize] = None;
                }
            } else if let (Some(l), Some(r)) = (eval_expr(left, env), eval_expr(right, env))
                && compare(*op, &l, &r)
            {
                solve(db, rest, env, conf, trail, emit);
            }
        }
        Literal::Test {
            test,
            args,
            negated,
            ..
        } => {
            let texts: Option<Vec<String>> = args
                .iter()
                .map(|a| match eval_expr(a, env)? {
                    Value::Symbol(s) => Some(s),
                    _ => None,
                })
                .collect();
            let Some(texts) = texts else { return };
            let holds = match test {
                TestFn::True => true,
                TestFn::False => false,
                TestFn::Contains => texts[1].contains(texts[0].as_str()),
                // The pattern must match the whole text.
                TestFn::Match => regex::Regex::new(&format!("^(?:{})$", texts[0]))
                    .is_ok_and(|re| re.is_match(&texts[1])),
            };
            if holds != *negated {
                solve(db, rest, env, conf, trail, emit);
            }
        }
        Literal::Aggregate {
            result,
            func,
            target,
            body,
            ..
        } => {
            let mut values: Vec<Value> = Vec::new();
            let mut agg_conf: Option<f64> = None;
            let mut aggregated = Trail::new();
            let mut inner = env.clone();
            solve(
                db,
                body,
                &mut inner,
                None,
                &mut Trail::new(),
                &mut |e, c, t| {
                    let value = match target {
                        Some(t) => match eval_expr(t, e) {
                            Some(v) => v,
                            None => return,
                        },
                        None => Value::Number(0),
                    };
                    values.push(value);
                    aggregated.extend(t.iter().cloned());
                    if let Some(c) = c {
                        agg_conf = Some(min_conf(agg_conf, c));
                    }
                },
            );
            let Some(value) = aggregate(*func, &values) else {
                return;
            };
            let conf = match agg_conf {
                Some(c) => Some(min_conf(conf, c)),
                None => conf,
            };
            let slot = *result as usize;
            let mark = trail.len();
            trail.extend(aggregated);
            match &env[slot] {
                Some(existing) => {
                    if *existing == value {
                        solve(db, rest, env, conf, trail, emit);
                    }
                }
                None => {
                    env[slot] = Some(value);
                    solve(db, rest, env, conf, trail, emit);
                    env[slot] = None;
                }
            }
            trail.truncate(mark);
        }
    }
}

fn min_conf(acc: Option<f64>, c: f64) -> f64 {
    acc.map_or(c, |a| a.min(c))
}

/// Match a row against an atom's terms, binding unbound variables (recorded in
/// `bound` so the caller can undo them).
fn unify(terms: &[Term], row: &[Value], env: &mut Env, bound: &mut Vec<VarId>) -> bool {
    for (t, x) in terms.iter().zip(row) {
        match t {
            Term::Var(v) => match &env[*v as usize] {
                Some(y) if y != x => return false,
                Some(_) => {}
                None => {
                    env[*v as usize] = Some(x.clone());
                    bound.push(*v);
                }
            },
            Term::Const(c) if c != x => return false,
            Term::Const(_) | Term::Wildcard => {}
        }
    }
    true
}

/// The aggregate of `values`; `None` when it has no value (sum/min/max of nothing,
/// or a sum that overflows). A count is a `number`.
fn aggregate(func: AggFunc, values: &[Value]) -> Option<Value> {
    match func {
        AggFunc::Count => Some(Value::Number(values.len() as i64)),
        AggFunc::Min => values.iter().min().cloned(),
        AggFunc::Max => values.iter().max().cloned(),
        AggFunc::Sum => {
            let (first, rest) = values.split_first()?;
            rest.iter()
                .try_fold(first.clone(), |acc, v| arith(ArithOp::Add, &acc, v))
        }
        AggFunc::Mean => {
            if values.is_empty() {
                return None;
            }
            let total: f64 = values.iter().map(as_f64).sum();
            Some(Value::Float(total / values.len() as f64))
        }
    }
}

fn as_f64(v: &Value) -> f64 {
    match v {
        Value::Number(i) => *i as f64,
        Value::Unsigned(u) => *u as f64,
        Value::Float(x) => *x,
        Value::Symbol(_) => f64::NAN,
    }
}

/// Apply a functor to evaluated arguments (`types`: their column types).
fn call(f: Functor, args: &[Value], types: &[ColumnType]) -> Option<Value> {
    let text = |v: &Value| match v {
        Value::Symbol(s) => Some(s.clone()),
        _ => None,
    };
    Some(match f {
        Functor::Cat => Value::Symbol(args.iter().map(text).collect::<Option<String>>()?),
        Functor::Strlen => Value::Number(text(&args[0])?.chars().count() as i64),
        Functor::Substr => {
            let s: Vec<char> = text(&args[0])?.chars().collect();
            let (Value::Number(i), Value::Number(n)) = (&args[1], &args[2]) else {
                return None;
            };
            let (i, n) = (*i, *n);
            let len = s.len() as i64;
            if i < 0 || i > len {
                Value::Symbol(String::new())
            } else {
                let end = if n < 0 { len } else { (i + n).min(len) };
                Value::Symbol(s[i as usize..end as usize].iter().collect())
            }
        }
        Functor::Ord => return None,
        Functor::ToNumber => match &args[0] {
            Value::Symbol(s) => Value::Number(s.trim().parse().ok()?),
            Value::Number(i) => Value::Number(*i),
            Value::Unsigned(u) => Value::Number(i64::try_from(*u).ok()?),
            Value::Float(x) if x.is_finite() => Value::Number(x.trunc() as i64),
            Value::Float(_) => return None,
        },
        Functor::ToUnsigned => match &args[0] {
            Value::Symbol(s) => Value::Unsigned(s.trim().parse().ok()?),
            Value::Number(i) => Value::Unsigned(u64::try_from(*i).ok()?),
            Value::Unsigned(u) => Value::Unsigned(*u),
            Value::Float(x) if *x >= 0.0 && x.is_finite() => Value::Unsigned(x.trunc() as u64),
            Value::Float(_) => return None,
        },
        Functor::ToFloat => match &args[0] {
            Value::Symbol(s) => {
                Value::Float(s.trim().parse().ok().filter(|x: &f64| x.is_finite())?)
            }
            other => Value::Float(as_f64(other)),
        },
        Functor::ToString => Value::Symbol(match &args[0] {
            Value::Symbol(s) => s.clone(),
            Value::Number(i) => i.to_string(),
            Value::Unsigned(u) => u.to_string(),
            Value::Float(x) => x.to_string(),
        }),
        Functor::Min => args.iter().min_by(|a, b| cmp_values(a, b))?.clone(),
        Functor::Max => args.iter().max_by(|a, b| cmp_values(a, b))?.clone(),
        Functor::Abs => match &args[0] {
            Value::Number(i) => Value::Number(i.checked_abs()?),
            Value::Float(x) => Value::Float(x.abs()),
            other => other.clone(),
        },
        Functor::BNot => match &args[0] {
            Value::Number(i) => Value::Number(!i),
            Value::Unsigned(u) => Value::Unsigned(!u),
            _ => return None,
        },
        Functor::LNot => {
            let _ = types;
            match &args[0] {
                Value::Number(i) => Value::Number(i64::from(*i == 0)),
                Value::Unsigned(u) => Value::Unsigned(u64::from(*u == 0)),
                Value::Float(x) => Value::Float(if *x == 0.0 { 1.0 } else { 0.0 }),
                Value::Symbol(_) => return None,
            }
        }
    })
}

/// Values of one type in their natural order (floats numerically).
fn cmp_values(a: &Value, b: &Value) -> std::cmp::Ordering {
    match (a, b) {
        (Value::Float(x), Value::Float(y)) => x.partial_cmp(y).unwrap_or(std::cmp::Ordering::Equal),
        _ => a.cmp(b),
    }
}

/// Evaluate an expression; `None` when a variable is unbound or the arithmetic fails.
pub fn eval_expr(expr: &Expr, env: &[Option<Value>]) -> Option<Value> {
    match expr {
        Expr::Var(v) => env[*v as usize].clone(),
        Expr::Const(c) => Some(c.clone()),
        Expr::Binary(op, l, r) => arith(*op, &eval_expr(l, env)?, &eval_expr(r, env)?),
        Expr::Neg(e) => match eval_expr(e, env)? {
            Value::Number(i) => i.checked_neg().map(Value::Number),
            Value::Float(x) => Some(Value::Float(-x)),
            Value::Unsigned(0) => Some(Value::Unsigned(0)),
            _ => None,
        },
        Expr::Call(f, args, types) => {
            let values: Option<Vec<Value>> = args.iter().map(|a| eval_expr(a, env)).collect();
            call(*f, &values?, types)
        }
    }
}

/// Checked arithmetic on two values of one type: overflow, division by zero and
/// mismatched types give `None`.
pub fn arith(op: ArithOp, l: &Value, r: &Value) -> Option<Value> {
    match (l, r) {
        (Value::Number(a), Value::Number(b)) => {
            let (a, b) = (*a, *b);
            match op {
                ArithOp::Add => a.checked_add(b),
                ArithOp::Sub => a.checked_sub(b),
                ArithOp::Mul => a.checked_mul(b),
                ArithOp::Div => a.checked_div(b),
                ArithOp::Rem => a.checked_rem(b),
                ArithOp::Pow => u32::try_from(b).ok().and_then(|e| a.checked_pow(e)),
                ArithOp::BAnd => Some(a & b),
                ArithOp::BOr => Some(a | b),
                ArithOp::BXor => Some(a ^ b),
                ArithOp::Shl => (0..64).contains(&b).then(|| a << b),
                ArithOp::Shr => (0..64).contains(&b).then(|| a >> b),
                ArithOp::ShrU => (0..64).contains(&b).then(|| ((a as u64) >> b) as i64),
                ArithOp::LAnd => Some(i64::from(a != 0 && b != 0)),
                ArithOp::LOr => Some(i64::from(a != 0 || b != 0)),
                ArithOp::LXor => Some(i64::from((a != 0) ^ (b != 0))),
            }
            .map(Value::Number)
        }
        (Value::Unsigned(a), Value::Unsigned(b)) => {
            let (a, b) = (*a, *b);
            match op {
                ArithOp::Add => a.checked_add(b),
                ArithOp::Sub => a.checked_sub(b),
                ArithOp::Mul => a.checked_mul(b),
                ArithOp::Div => a.checked_div(b),
                ArithOp::Rem => a.checked_rem(b),
                ArithOp::Pow => u32::try_from(b).ok().and_then(|e| a.checked_pow(e)),
                ArithOp::BAnd => Some(a & b),
                ArithOp::BOr => Some(a | b),
                ArithOp::BXor => Some(a ^ b),
                ArithOp::Shl => (b < 64).then(|| a << b),
                ArithOp::Shr | ArithOp::ShrU => (b < 64).then(|| a >> b),
                ArithOp::LAnd => Some(u64::from(a != 0 && b != 0)),
                ArithOp::LOr => Some(u64::from(a != 0 || b != 0)),
                ArithOp::LXor => Some(u64::from((a != 0) ^ (b != 0))),
            }
            .map(Value::Unsigned)
        }
        (Value::Float(a), Value::Float(b)) => {
            let (a, b) = (*a, *b);
            if matches!(op, ArithOp::Div | ArithOp::Rem) && b == 0.0 {
                return None;
            }
            let truth = |t: bool| if t { 1.0 } else { 0.0 };
            Some(Value::Float(match op {
                ArithOp::Add => a + b,
                ArithOp::Sub => a - b,
                ArithOp::Mul => a * b,
                ArithOp::Div => a / b,
                ArithOp::Rem => a % b,
                ArithOp::Pow => a.powf(b),
                ArithOp::LAnd => truth(a != 0.0 && b != 0.0),
                ArithOp::LOr => truth(a != 0.0 || b != 0.0),
                ArithOp::LXor => truth((a != 0.0) != (b != 0.0)),
                _ => return None,
            }))
        }
        _ => None,
    }
}

/// Compare two values of one type.
pub fn compare(op: CmpOp, l: &Value, r: &Value) -> bool {
    match op {
        CmpOp::Eq => l == r,
        CmpOp::Ne => l != r,
        CmpOp::Lt => l < r,
        CmpOp::Le => l <= r,
        CmpOp::Gt => l > r,
        CmpOp::Ge => l >= r,
    }
}
