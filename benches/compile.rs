//! Front-end speed: parse, check and stratify programs of growing size.

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use prooflog::Program;

/// `n` rules over a mix of joins, negation, comparisons and recursion.
fn program(n: usize) -> String {
    let mut text = String::from(".decl e0(a: number, b: number)\ne0(1, 2).\n");
    for i in 1..=n {
        let p = i - 1;
        let rule = match i % 4 {
            0 => format!("e{i}(x, y) :- e{p}(x, z), e{p}(z, y), x != y.\n"),
            1 => format!("e{i}(x, y) :- e{p}(x, y), !e0(y, x), w = x + 1, w > y.\n"),
            2 => format!("e{i}(x, y) :- e{p}(x, y).\ne{i}(x, y) :- e{i}(x, z), e{p}(z, y).\n"),
            _ => format!("e{i}(x, n) :- e{p}(x, _), n = count : {{ e{p}(x, _) }}.\n"),
        };
        text.push_str(&rule);
    }
    text
}

fn compile(c: &mut Criterion) {
    let mut group = c.benchmark_group("compile");
    group.sample_size(10);
    for n in [1_000usize, 10_000] {
        let text = program(n);
        group.bench_with_input(BenchmarkId::from_parameter(n), &text, |b, text| {
            b.iter(|| Program::from_source("bench.dl", text).map(|p| p.rules().len()))
        });
    }
    group.finish();
}

criterion_group!(benches, compile);
criterion_main!(benches);
