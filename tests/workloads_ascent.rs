//! The benchmark workloads' programs (`benches/support/workloads.rs`) against
//! ascent, at smaller sizes: every output row and its confidence must be the same,
//! with provenance on and off, on one thread and two. (The benchmarks then compare
//! the two engines on work whose answers agree; `WORKLOAD_ANSWER=1` checks that at
//! full size.)

#[path = "../benches/support/workloads.rs"]
mod workloads;

use workloads::Workload;

/// Each workload with an ascent version, scaled down so that a debug build runs them
/// all in seconds.
fn small_workloads() -> Vec<Workload> {
    vec![
        workloads::tc_random("tc_small", 300, 600),
        workloads::tc_chain(150),
        workloads::tc_weighted("tc_weighted_small", 300, 600),
        workloads::same_generation(500, 40),
        workloads::points_to("points_to_small", 250, 400),
        workloads::cspa("cspa_small", 60, 70, 20),
    ]
}

#[test]
fn workloads_match_ascent_row_for_row() {
    for w in small_workloads() {
        let expected = match workloads::ascent_output(&w) {
            Some(out) => out.rows(),
            None => panic!("{} has no ascent version", w.name),
        };
        assert!(
            !expected.is_empty(),
            "{}: an empty answer tests nothing",
            w.name
        );
        let prepared = workloads::prepare(&w);
        for (provenance, threads) in [(true, 1), (false, 1), (true, 2)] {
            let fb = workloads::evaluate_prooflog(&w, &prepared, provenance, threads);
            let actual = workloads::output_rows(&w, &fb);
            assert_eq!(
                actual.len(),
                expected.len(),
                "{} (provenance {provenance}, {threads} threads): row count",
                w.name
            );
            for (a, e) in actual.iter().zip(&expected) {
                assert_eq!(
                    a, e,
                    "{} (provenance {provenance}, {threads} threads): first differing row",
                    w.name
                );
            }
        }
    }
}

#[test]
fn only_the_workloads_ascent_can_run_say_they_have_a_version() {
    for w in small_workloads() {
        assert!(workloads::has_ascent(&w), "{}", w.name);
    }
    let lubm = workloads::lubm(1);
    assert!(!workloads::has_ascent(&lubm) && workloads::ascent_output(&lubm).is_none());
}

#[test]
fn the_weighted_workload_has_confidences_to_compare() {
    // Rows of one confidence would let a wrong lattice pass.
    let w = workloads::tc_weighted("tc_weighted_small", 300, 600);
    let rows = workloads::ascent_output(&w).expect("ascent version").rows();
    let mut confs: Vec<u64> = rows.iter().map(|r| r.2.to_bits()).collect();
    confs.sort_unstable();
    confs.dedup();
    assert!(confs.len() >= 3, "{} distinct confidences", confs.len());
}
