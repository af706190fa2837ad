//! Random Datalog programs from bytes: each byte is a choice (facts of two input
//! relations; rules over four derived ones with recursion, negation, comparisons,
//! arithmetic, aggregates and confidences). Shared by the `proof_random` fuzz target
//! and the proptest cases in `tests/fuzz_props.rs`; a program need not compile.

/// Reads choices from the input, then zeros.
struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn next(&mut self, n: u8) -> u8 {
        match self.0.split_first() {
            Some((&b, rest)) => {
                self.0 = rest;
                b % n.max(1)
            }
            None => 0,
        }
    }
}

/// Variable names rules use.
pub const VARS: [&str; 4] = ["x", "y", "z", "w"];
/// Relation name and arity: two inputs, four derived.
pub const RELS: [(&str, usize); 6] = [
    ("e0", 2),
    ("e1", 2),
    ("p0", 2),
    ("p1", 2),
    ("p2", 1),
    ("p3", 1),
];

fn atom(b: &mut Bytes<'_>) -> String {
    let (name, arity) = RELS[b.next(6) as usize];
    let args: Vec<&str> = (0..arity)
        .map(|_| match b.next(6) {
            4 => "_",
            5 => "1",
            v => VARS[v as usize],
        })
        .collect();
    format!("{name}({})", args.join(", "))
}

fn var(b: &mut Bytes<'_>) -> &'static str {
    VARS[b.next(3) as usize]
}

/// The program `data` describes.
pub fn program(data: &[u8]) -> String {
    let b = &mut Bytes(data);
    let mut text = String::new();
    for _ in 0..b.next(12) {
        let rel = b.next(2);
        let (x, y) = (b.next(6), b.next(6));
        text.push_str(&format!("e{rel}({x}, {y}).\n"));
    }
    for _ in 0..1 + b.next(6) {
        if b.next(3) == 0 {
            text.push_str(&format!("@confidence(0.{})\n", 1 + b.next(9)));
        }
        let (name, arity) = RELS[2 + b.next(4) as usize];
        let head: Vec<&str> = (0..arity).map(|_| var(b)).collect();
        let mut body = Vec::new();
        for _ in 0..1 + b.next(3) {
            body.push(atom(b));
        }
        let extra = match b.next(7) {
            0 => Some(format!("!{}", atom(b))),
            1 => Some(format!("{} < {}", var(b), var(b))),
            2 => Some(format!("w = {} + {}", var(b), b.next(3))),
            3 => Some(format!("w = count : {{ {} }}", atom(b))),
            4 => Some(format!("w = max {} : {{ {} }}", var(b), atom(b))),
            _ => None,
        };
        body.extend(extra);
        text.push_str(&format!(
            "{name}({}) :- {}.\n",
            head.join(", "),
            body.join(", ")
        ));
    }
    text
}
