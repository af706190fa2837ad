//! Goals (`path(1, x)`) resolved against a checked program: the one place that
//! finds a goal's relation and brings its constants to the column types, for proofs
//! and for queries alike.

use crate::diag::{Diagnostic, ErrorCode, Result, did_you_mean};
use crate::ir::{Program, RelId};
use crate::syntax::{Goal, GoalArg};
use crate::value::Value;

/// A goal whose relation exists and whose constants are values of their columns.
#[derive(Debug, Clone, PartialEq)]
pub struct ResolvedGoal {
    /// The relation.
    pub rel: RelId,
    /// One argument per column; constants coerced to the column type.
    pub args: Vec<GoalArg>,
}

/// Resolve a goal: its relation must exist (an `unknown_relation` error with a
/// did-you-mean otherwise) with the goal's arity (`arity_mismatch`), and each
/// constant must be a value of its column exactly ([`ColumnType::coerce`]; a
/// `type_mismatch` otherwise: `9007199254740993` is no `float`, it never stands for
/// `9007199254740992.0`).
///
/// [`ColumnType::coerce`]: crate::value::ColumnType::coerce
pub fn resolve_goal(program: &Program, goal: &Goal) -> Result<ResolvedGoal> {
    let text = goal_text(&goal.predicate, &goal.args);
    let rel = relation(program, &goal.predicate, goal.args.len(), &text)?;
    let columns = &program.relation(rel).columns;
    let mut args = Vec::with_capacity(goal.args.len());
    for (a, col) in goal.args.iter().zip(columns) {
        args.push(match a {
            GoalArg::Const(v) => match col.ty.coerce(v) {
                Some(c) => GoalArg::Const(c),
                None => {
                    return Err(Diagnostic::new(
                        ErrorCode::TypeMismatch,
                        format!(
                            "goal `{text}`: {v} does not fit column `{}` of type {}",
                            col.name, col.ty
                        ),
                    )
                    .with_help(match col.ty {
                        crate::value::ColumnType::Float => {
                            "a float column holds integers up to 2^53 exactly; write the value as a float"
                        }
                        _ => "write a value of the column's type",
                    })
                    .into());
                }
            },
            other => other.clone(),
        });
    }
    Ok(ResolvedGoal { rel, args })
}

/// Resolve a ground fact `predicate(args…)` (see [`resolve_goal`]).
pub fn resolve_fact(
    program: &Program,
    predicate: &str,
    args: &[Value],
) -> Result<(RelId, Vec<Value>)> {
    let goal = Goal {
        predicate: predicate.to_string(),
        args: args.iter().cloned().map(GoalArg::Const).collect(),
        span: crate::diag::Span::default(),
        arg_spans: Vec::new(),
    };
    let resolved = resolve_goal(program, &goal)?;
    let values = resolved
        .args
        .into_iter()
        .filter_map(|a| match a {
            GoalArg::Const(v) => Some(v),
            _ => None,
        })
        .collect();
    Ok((resolved.rel, values))
}

fn relation(program: &Program, name: &str, arity: usize, text: &str) -> Result<RelId> {
    let found = program
        .relation_id(name)
        .filter(|&r| !program.relation(r).auxiliary);
    let Some(rel) = found else {
        let names = program
            .relations
            .iter()
            .filter(|r| !r.auxiliary)
            .map(|r| r.name.as_str());
        let help = match did_you_mean(name, names) {
            Some(s) => format!("did you mean `{s}`?"),
            None => "check the goal's predicate name against the program's relations".to_string(),
        };
        return Err(Diagnostic::new(
            ErrorCode::UnknownRelation,
            format!("the program has no relation `{name}`"),
        )
        .with_help(help)
        .into());
    };
    let relation = program.relation(rel);
    if relation.arity() != arity {
        return Err(Diagnostic::new(
            ErrorCode::ArityMismatch,
            format!(
                "goal `{text}` has {arity} arguments; relation `{}` has {}",
                relation.name,
                relation.arity()
            ),
        )
        .into());
    }
    Ok(rel)
}

fn goal_text(predicate: &str, args: &[GoalArg]) -> String {
    let shown: Vec<String> = args
        .iter()
        .map(|a| match a {
            GoalArg::Const(v) => v.to_string(),
            GoalArg::Var(n) => n.clone(),
            _ => "_".to_string(),
        })
        .collect();
    format!("{predicate}({})", shown.join(", "))
}
