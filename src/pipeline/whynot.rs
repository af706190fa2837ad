//! Why a goal is not proved: the premise that is missing, or the fact whose presence
//! a negation forbids, found by replaying the goal's rules against the facts.
//!
//! For each rule that could conclude the goal, the body is matched literal by literal
//! (in the checked program's safe order) against the fact base, binding what the goal
//! fixes. The attempt that gets furthest names what stopped it: a positive premise no
//! fact matches (and, when a rule could derive that premise, why it was not derived,
//! down a few levels), a negated premise that a fact matches (that fact is citable: its
//! evidence tag, or a proof of it), a comparison that fails, or no rule at all.

use serde::Serialize;

use crate::eval::{FactBase, FactId};
use crate::ir::{ArithOp, CmpOp, Expr, Literal, Program, Rule, RuleId, Term};
use crate::proof::verbalise;
use crate::syntax::{Goal, GoalArg};
use crate::value::{Value, fact_text};

/// How deep a why-not follows missing premises into their own rules.
const MAX_DEPTH: usize = 3;
/// Matches of one premise tried before giving up on the others.
const MAX_BRANCH: usize = 8;

/// Why a goal is not proved.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WhyNot {
    /// The goal, as the rule language writes it.
    pub goal: String,
    /// The goal in words.
    pub text: String,
    /// The rule that came closest (`None` when no rule concludes the goal).
    pub rule: Option<RuleRef>,
    /// Premises of that rule the facts satisfied, as facts of the base (in body
    /// order).
    #[serde(skip)]
    pub satisfied: Vec<FactId>,
    /// The satisfied premises, as the rule language writes them.
    pub satisfied_facts: Vec<String>,
    /// What stopped the rule.
    pub blocker: Blocker,
    /// For a missing premise that rules could derive: why they did not.
    pub because: Option<Box<WhyNot>>,
}

/// A rule, by name and tag.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RuleRef {
    /// Its name.
    pub name: String,
    /// `RULE-n`.
    pub tag: String,
    /// Its id.
    #[serde(skip)]
    pub id: RuleId,
}

/// What stopped a rule.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Blocker {
    /// No fact matches this positive premise.
    Missing {
        /// The premise with what was bound (unbound columns as `_`).
        fact: String,
        /// In words.
        text: String,
    },
    /// A fact matches a negated premise: its presence blocks the rule.
    Present {
        /// The blocking fact.
        fact: String,
        /// In words.
        text: String,
        /// The fact in the base.
        #[serde(skip)]
        id: FactId,
    },
    /// A comparison or aggregate condition fails for every binding tried.
    Condition {
        /// The condition.
        text: String,
    },
    /// No rule concludes the goal's relation, and no evidence gives it.
    NoRule,
}

impl WhyNot {
    /// The blocking fact at the bottom of the explanation, if a fact blocks it.
    pub fn blocking_fact(&self) -> Option<FactId> {
        match (&self.because, &self.blocker) {
            (Some(b), _) => b.blocking_fact(),
            (None, Blocker::Present { id, .. }) => Some(*id),
            _ => None,
        }
    }

    /// The explanation at the bottom of the chain.
    pub fn root_cause(&self) -> &WhyNot {
        match &self.because {
            Some(b) => b.root_cause(),
            None => self,
        }
    }

    fn score(&self) -> (usize, bool) {
        let reached = self.satisfied.len();
        (reached, self.blocking_fact().is_some())
    }
}

/// Explain why `goal` (a pattern with no match in `facts`) is not proved.
pub fn why_not(facts: &FactBase, goal: &Goal) -> WhyNot {
    explain(facts, goal, 0)
}

fn goal_values(goal: &Goal) -> Vec<Option<Value>> {
    goal.args
        .iter()
        .map(|a| match a {
            GoalArg::Const(v) => Some(v.clone()),
            _ => None,
        })
        .collect()
}

fn pattern_text(program: &Program, rel: u32, args: &[Option<Value>]) -> (String, String) {
    let r = program.relation(rel);
    let shown: Vec<String> = args
        .iter()
        .map(|a| a.as_ref().map_or("_".to_string(), |v| v.to_string()))
        .collect();
    let fact = format!("{}({})", r.name, shown.join(", "));
    let words: Vec<Value> = args
        .iter()
        .map(|a| {
            a.clone()
                .unwrap_or_else(|| Value::Symbol("some value".into()))
        })
        .collect();
    (fact, verbalise(r.text.as_deref(), &r.name, &words))
}

fn explain(facts: &FactBase, goal: &Goal, depth: usize) -> WhyNot {
    let program = facts.program();
    let values = goal_values(goal);
    let rel = program.relation_id(&goal.predicate);
    let (goal_fact, goal_words) = match rel {
        Some(r) => pattern_text(program, r, &values),
        None => (crate::proof::goal_text(goal), crate::proof::goal_text(goal)),
    };
    let mut best: Option<WhyNot> = None;
    for rule in program.rules().iter().filter(|r| Some(r.head.rel) == rel) {
        let Some(env) = bind_head(rule, &values) else {
            continue;
        };
        let mut attempt = Attempt {
            facts,
            rule,
            best: None,
        };
        attempt.walk(0, env, Vec::new());
        if let Some((satisfied, blocker, bound)) = attempt.best {
            let because = match &blocker {
                Blocker::Missing { .. } if depth + 1 < MAX_DEPTH => missing_goal(program, &bound)
                    .and_then(|g| {
                        let derivable = program
                            .rules()
                            .iter()
                            .any(|r| Some(r.head.rel) == program.relation_id(&g.predicate));
                        derivable.then(|| Box::new(explain(facts, &g, depth + 1)))
                    }),
                _ => None,
            };
            let candidate = WhyNot {
                goal: goal_fact.clone(),
                text: goal_words.clone(),
                rule: Some(RuleRef {
                    name: rule.name.clone(),
                    tag: format!("RULE-{}", rule.id),
                    id: rule.id,
                }),
                satisfied_facts: satisfied.iter().map(|&f| facts.fact_text(f)).collect(),
                satisfied,
                blocker,
                because,
            };
            if best.as_ref().is_none_or(|b| candidate.score() > b.score()) {
                best = Some(candidate);
            }
        }
    }
    best.unwrap_or(WhyNot {
        goal: goal_fact,
        text: goal_words,
        rule: None,
        satisfied: Vec::new(),
        satisfied_facts: Vec::new(),
        blocker: Blocker::NoRule,
        because: None,
    })
}

/// The goal a missing premise names (bound columns as constants, the rest as
/// wildcards).
fn missing_goal(program: &Program, bound: &Option<(u32, Vec<Option<Value>>)>) -> Option<Goal> {
    let (rel, args) = bound.as_ref()?;
    let text = format!(
        "{}({})",
        program.relation(*rel).name,
        args.iter()
            .map(|a| a.as_ref().map_or("_".to_string(), |v| v.to_string()))
            .collect::<Vec<_>>()
            .join(", ")
    );
    crate::syntax::parse_goal(&text).ok()
}

/// The rule's variables bound by unifying its head with the goal's constants; `None`
/// when a constant of the head contradicts the goal.
fn bind_head(rule: &Rule, values: &[Option<Value>]) -> Option<Vec<Option<Value>>> {
    let mut env = vec![None; rule.vars.len()];
    for (e, v) in rule.head.args.iter().zip(values) {
        let Some(v) = v else { continue };
        match e {
            Expr::Var(x) => match &env[*x as usize] {
                Some(old) if old != v => return None,
                _ => env[*x as usize] = Some(v.clone()),
            },
            Expr::Const(c) if c != v => return None,
            _ => {}
        }
    }
    Some(env)
}

type Found = (Vec<FactId>, Blocker, Option<(u32, Vec<Option<Value>>)>);

struct Attempt<'a> {
    facts: &'a FactBase,
    rule: &'a Rule,
    /// The furthest failure so far: satisfied premises, what stopped, and the missing
    /// premise's pattern.
    best: Option<Found>,
}

impl Attempt<'_> {
    fn fail(
        &mut self,
        satisfied: Vec<FactId>,
        blocker: Blocker,
        bound: Option<(u32, Vec<Option<Value>>)>,
    ) {
        let better = match &self.best {
            None => true,
            Some((s, b, _)) => {
                satisfied.len() > s.len()
                    || (satisfied.len() == s.len()
                        && matches!(blocker, Blocker::Present { .. })
                        && !matches!(b, Blocker::Present { .. }))
            }
        };
        if better {
            self.best = Some((satisfied, blocker, bound));
        }
    }

    /// Match body literals from `i` on; returns whether the whole body matched.
    fn walk(&mut self, i: usize, env: Vec<Option<Value>>, satisfied: Vec<FactId>) -> bool {
        let program = self.facts.program();
        let Some(lit) = self.rule.body.get(i) else {
            return true;
        };
        match lit {
            Literal::Atom(a) => {
                let args: Vec<Option<Value>> = a
                    .args
                    .iter()
                    .map(|t| match t {
                        Term::Var(v) => env[*v as usize].clone(),
                        Term::Const(c) => Some(c.clone()),
                        Term::Wildcard => None,
                    })
                    .collect();
                let matches = self.matches(a.rel, &args);
                if matches.is_empty() {
                    let (fact, text) = pattern_text(program, a.rel, &args);
                    self.fail(
                        satisfied,
                        Blocker::Missing { fact, text },
                        Some((a.rel, args)),
                    );
                    return false;
                }
                for f in matches.into_iter().take(MAX_BRANCH) {
                    let row = self.facts.args(f);
                    let mut env = env.clone();
                    let mut ok = true;
                    for (t, x) in a.args.iter().zip(&row) {
                        if let Term::Var(v) = t {
                            match &env[*v as usize] {
                                Some(old) if old != x => ok = false,
                                _ => env[*v as usize] = Some(x.clone()),
                            }
                        }
                    }
                    if !ok {
                        continue;
                    }
                    let mut s = satisfied.clone();
                    s.push(f);
                    if self.walk(i + 1, env, s) {
                        return true;
                    }
                }
                false
            }
            Literal::Negated(a) => {
                let args: Vec<Option<Value>> = a
                    .args
                    .iter()
                    .map(|t| match t {
                        Term::Var(v) => env[*v as usize].clone(),
                        Term::Const(c) => Some(c.clone()),
                        Term::Wildcard => None,
                    })
                    .collect();
                if let Some(&f) = self.matches(a.rel, &args).first() {
                    let r = program.relation(a.rel);
                    let values = self.facts.args(f);
                    self.fail(
                        satisfied,
                        Blocker::Present {
                            fact: fact_text(&r.name, &values),
                            text: verbalise(r.text.as_deref(), &r.name, &values),
                            id: f,
                        },
                        None,
                    );
                    return false;
                }
                self.walk(i + 1, env, satisfied)
            }
            Literal::Compare {
                op,
                left,
                right,
                assigns,
                ..
            } => {
                if let Some(v) = assigns
                    && env[*v as usize].is_none()
                {
                    let source = if *left == Expr::Var(*v) { right } else { left };
                    return match eval(source, &env) {
                        Some(x) => {
                            let mut env = env;
                            env[*v as usize] = Some(x);
                            self.walk(i + 1, env, satisfied)
                        }
                        None => {
                            self.fail(
                                satisfied,
                                Blocker::Condition {
                                    text: "an arithmetic condition has no value".into(),
                                },
                                None,
                            );
                            false
                        }
                    };
                }
                match (eval(left, &env), eval(right, &env)) {
                    (Some(l), Some(r)) if compare(*op, &l, &r) => self.walk(i + 1, env, satisfied),
                    (l, r) => {
                        let show = |x: Option<Value>| x.map_or("?".to_string(), |v| v.to_string());
                        self.fail(
                            satisfied,
                            Blocker::Condition {
                                text: format!(
                                    "{} {} {} does not hold",
                                    show(l),
                                    op_text(*op),
                                    show(r)
                                ),
                            },
                            None,
                        );
                        false
                    }
                }
            }
            Literal::Test { test, negated, .. } => {
                self.fail(
                    satisfied,
                    Blocker::Condition {
                        text: format!(
                            "the {}`{}` condition of rule {}",
                            if *negated { "negated " } else { "" },
                            test.name(),
                            self.rule.name
                        ),
                    },
                    None,
                );
                false
            }
            Literal::Aggregate { .. } => {
                self.fail(
                    satisfied,
                    Blocker::Condition {
                        text: format!("the aggregate condition of rule {}", self.rule.name),
                    },
                    None,
                );
                false
            }
        }
    }

    /// Facts of `rel` matching the bound columns, in value order.
    fn matches(&self, rel: u32, args: &[Option<Value>]) -> Vec<FactId> {
        if args.iter().all(Option::is_some) {
            let values: Vec<Value> = args.iter().flatten().cloned().collect();
            return self.facts.lookup(rel, &values).into_iter().collect();
        }
        let goal = Goal {
            predicate: self.facts.program().relation(rel).name.clone(),
            args: args
                .iter()
                .map(|a| match a {
                    Some(v) => GoalArg::Const(v.clone()),
                    None => GoalArg::Wildcard,
                })
                .collect(),
            arg_spans: Vec::new(),
            span: Default::default(),
        };
        self.facts
            .query(&goal)
            .map(|ms| ms.into_iter().map(|m| m.fact).collect())
            .unwrap_or_default()
    }
}

fn op_text(op: CmpOp) -> &'static str {
    match op {
        CmpOp::Eq => "=",
        CmpOp::Ne => "!=",
        CmpOp::Lt => "<",
        CmpOp::Le => "<=",
        CmpOp::Gt => ">",
        CmpOp::Ge => ">=",
    }
}

fn eval(e: &Expr, env: &[Option<Value>]) -> Option<Value> {
    match e {
        Expr::Var(v) => env.get(*v as usize)?.clone(),
        Expr::Const(c) => Some(c.clone()),
        Expr::Neg(x) => match eval(x, env)? {
            Value::Number(n) => n.checked_neg().map(Value::Number),
            Value::Float(f) => Some(Value::Float(-f)),
            _ => None,
        },
        Expr::Call(..) => None,
        Expr::Binary(op, l, r) => {
            let (l, r) = (eval(l, env)?, eval(r, env)?);
            match (l, r) {
                (Value::Number(a), Value::Number(b)) => match op {
                    ArithOp::Add => a.checked_add(b),
                    ArithOp::Sub => a.checked_sub(b),
                    ArithOp::Mul => a.checked_mul(b),
                    ArithOp::Div => a.checked_div(b),
                    ArithOp::Rem => a.checked_rem(b),
                    // Functors and bitwise operators are not replayed here.
                    _ => None,
                }
                .map(Value::Number),
                (Value::Unsigned(a), Value::Unsigned(b)) => match op {
                    ArithOp::Add => a.checked_add(b),
                    ArithOp::Sub => a.checked_sub(b),
                    ArithOp::Mul => a.checked_mul(b),
                    ArithOp::Div => a.checked_div(b),
                    ArithOp::Rem => a.checked_rem(b),
                    _ => None,
                }
                .map(Value::Unsigned),
                (Value::Float(a), Value::Float(b)) => {
                    let x = match op {
                        ArithOp::Add => a + b,
                        ArithOp::Sub => a - b,
                        ArithOp::Mul => a * b,
                        ArithOp::Div => a / b,
                        ArithOp::Rem => a % b,
                        _ => return None,
                    };
                    (!x.is_nan()).then_some(Value::Float(x))
                }
                _ => None,
            }
        }
    }
}

fn compare(op: CmpOp, l: &Value, r: &Value) -> bool {
    let ord = l.cmp(r);
    match op {
        CmpOp::Eq => ord.is_eq(),
        CmpOp::Ne => ord.is_ne(),
        CmpOp::Lt => ord.is_lt(),
        CmpOp::Le => ord.is_le(),
        CmpOp::Gt => ord.is_gt(),
        CmpOp::Ge => ord.is_ge(),
    }
}
