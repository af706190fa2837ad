//! Gate throughput: a ~10 KB answer against 20 passages, reported as claims per second.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use prooflog::answer::gate::{Gate, tokenize};
use prooflog::answer::segment::segment;

const WORDS: &[&str] = &[
    "the",
    "tenant",
    "landlord",
    "shall",
    "pay",
    "rent",
    "deposit",
    "premises",
    "not",
    "notice",
    "days",
    "written",
    "consent",
    "fund",
    "invest",
    "securities",
    "rated",
    "grade",
    "patient",
    "dose",
    "every",
    "hours",
    "maximum",
    "alert",
    "fires",
    "when",
    "cpu",
    "above",
    "percent",
    "heat",
    "flows",
    "from",
    "hotter",
    "colder",
    "body",
    "until",
    "same",
    "temperature",
    "of",
    "to",
    "a",
    "and",
    "in",
    "on",
    "for",
    "with",
    "is",
    "are",
    "by",
    "at",
    "500.00",
    "10,000",
];

/// Deterministic pseudo-random source (64-bit LCG), so runs are comparable.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % n
    }
}

/// A vocabulary: the 52 common words above (dense: every token occurs many times in
/// every passage, the aligner's worst case), or those plus 5,000 synthetic content
/// words drawn with a skew towards the frequent ones (closer to real text).
struct Vocabulary {
    words: Vec<String>,
    skewed: bool,
}

impl Vocabulary {
    fn pick(&self, rng: &mut Lcg) -> &str {
        let n = self.words.len();
        let i = if self.skewed {
            rng.next(n) * rng.next(n) / n
        } else {
            rng.next(n)
        };
        &self.words[i]
    }
}

fn sentence(vocab: &Vocabulary, rng: &mut Lcg) -> String {
    let len = 8 + rng.next(12);
    let words: Vec<&str> = (0..len).map(|_| vocab.pick(rng)).collect();
    let mut s = words.join(" ");
    s[..1].make_ascii_uppercase();
    s + "."
}

/// 20 passages of ~40 sentences each, and an answer of ~10 KB: a third verbatim
/// sentences, a third compressed (two words dropped), a third unrelated.
fn workload(vocab: &Vocabulary) -> (Vec<String>, String) {
    let mut rng = Lcg(42);
    let passages: Vec<Vec<String>> = (0..20)
        .map(|_| (0..40).map(|_| sentence(vocab, &mut rng)).collect())
        .collect();
    let mut answer = String::new();
    while answer.len() < 10_000 {
        let p = &passages[rng.next(passages.len())];
        let s = &p[rng.next(p.len())];
        let claim = match rng.next(3) {
            0 => s.clone(),
            1 => {
                let mut words: Vec<&str> = s.split(' ').collect();
                if words.len() > 6 {
                    words.remove(3);
                    words.remove(4);
                }
                words.join(" ")
            }
            _ => sentence(vocab, &mut rng),
        };
        answer.push_str(&claim);
        answer.push(' ');
    }
    (passages.into_iter().map(|p| p.join(" ")).collect(), answer)
}

fn bench_gate(c: &mut Criterion) {
    let dense = Vocabulary {
        words: WORDS.iter().map(|w| w.to_string()).collect(),
        skewed: false,
    };
    let wide = Vocabulary {
        words: WORDS
            .iter()
            .map(|w| w.to_string())
            .chain((0..5000).map(|i| format!("term{i}")))
            .collect(),
        skewed: true,
    };
    let mut group = c.benchmark_group("gate");
    for (name, vocab) in [("dense_vocabulary", &dense), ("wide_vocabulary", &wide)] {
        let (passages, answer) = workload(vocab);
        let claims = segment(&answer).len();
        let gate = Gate::new(&passages);
        let result = gate.verify(&answer);
        eprintln!(
            "{name}: {} byte answer, {claims} claims, 20 passages ({} bytes); {} claims removed",
            answer.len(),
            passages.iter().map(String::len).sum::<usize>(),
            result.unsupported_claims_removed
        );
        group.throughput(Throughput::Elements(claims as u64));
        group.bench_function(format!("{name}/verify_10kb_answer_20_passages"), |b| {
            b.iter(|| gate.verify(std::hint::black_box(&answer)))
        });
        group.bench_function(format!("{name}/tokenize_passages"), |b| {
            b.iter(|| {
                passages
                    .iter()
                    .map(|p| tokenize(std::hint::black_box(p)).len())
                    .sum::<usize>()
            })
        });
        group.bench_function(format!("{name}/check_incl_indexing"), |b| {
            b.iter(|| Gate::check(std::hint::black_box(&answer), &passages))
        });
    }
    group.finish();
}

criterion_group!(benches, bench_gate);
criterion_main!(benches);
