//! Service metrics in the Prometheus text format: requests by endpoint and status
//! class, latency histograms, and what evaluation computed. Lock-free counters, so
//! recording costs a few atomic adds per request.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// The endpoints measured, in the order of [`Metrics`]' arrays.
pub const ENDPOINTS: [&str; 11] = [
    "/v1/ask",
    "/v1/prove",
    "/v1/check",
    "/v1/gate",
    "/v1/ground",
    "/v1/evidence",
    "/v1/packs",
    "/healthz",
    "/metrics",
    "/openapi.json",
    "other",
];

/// Upper bounds of the latency buckets, in seconds.
const BUCKETS: [f64; 14] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// Status classes counted: 2xx, 4xx, 5xx, other.
const CLASSES: [&str; 4] = ["2xx", "4xx", "5xx", "other"];

#[derive(Default)]
struct Endpoint {
    by_class: [AtomicU64; 4],
    buckets: [AtomicU64; BUCKETS.len()],
    count: AtomicU64,
    sum_us: AtomicU64,
}

/// Counters of one service.
#[derive(Default)]
pub struct Metrics {
    endpoints: [Endpoint; ENDPOINTS.len()],
    overlay_evidence: AtomicU64,
    overlay_new_facts: AtomicU64,
    overlay_derived_facts: AtomicU64,
    evaluations_in_flight: AtomicU64,
    base_extensions: AtomicU64,
    base_facts: AtomicU64,
    stored_evidence: AtomicU64,
}

/// The index of a path in [`ENDPOINTS`].
pub fn endpoint_index(path: &str) -> usize {
    ENDPOINTS
        .iter()
        .position(|e| *e == path)
        .unwrap_or(ENDPOINTS.len() - 1)
}

impl Metrics {
    /// Count a request to `endpoint` (an index of `ENDPOINTS`, the endpoints
    /// measured; any other index counts nothing) that was answered with `status`
    /// after `elapsed`.
    pub fn request(&self, endpoint: usize, status: u16, elapsed: Duration) {
        let Some(e) = self.endpoints.get(endpoint) else {
            return;
        };
        let class = match status {
            200..=299 => 0,
            400..=499 => 1,
            500..=599 => 2,
            _ => 3,
        };
        e.by_class[class].fetch_add(1, Ordering::Relaxed);
        e.count.fetch_add(1, Ordering::Relaxed);
        e.sum_us
            .fetch_add(elapsed.as_micros() as u64, Ordering::Relaxed);
        let secs = elapsed.as_secs_f64();
        if let Some(b) = BUCKETS.iter().position(|&le| secs <= le) {
            e.buckets[b].fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Count what one overlay computed.
    pub fn overlay(&self, stats: &prooflog::eval::OverlayStats) {
        self.overlay_evidence
            .fetch_add(stats.evidence as u64, Ordering::Relaxed);
        self.overlay_new_facts
            .fetch_add(stats.new_facts as u64, Ordering::Relaxed);
        self.overlay_derived_facts
            .fetch_add(stats.derived_facts as u64, Ordering::Relaxed);
    }

    /// An evaluation started (`true`) or ended.
    pub fn evaluating(&self, started: bool) {
        if started {
            self.evaluations_in_flight.fetch_add(1, Ordering::Relaxed);
        } else {
            self.evaluations_in_flight.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// The base now holds `facts` facts and the store `stored` records.
    pub fn base(&self, facts: usize, stored: u64, extended: bool) {
        self.base_facts.store(facts as u64, Ordering::Relaxed);
        self.stored_evidence.store(stored, Ordering::Relaxed);
        if extended {
            self.base_extensions.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Requests answered by `endpoint` so far with a status of `class` (`2xx`, `4xx`,
    /// `5xx`).
    pub fn count(&self, endpoint: &str, class: &str) -> u64 {
        let e = &self.endpoints[endpoint_index(endpoint)];
        CLASSES
            .iter()
            .position(|c| *c == class)
            .map_or(0, |c| e.by_class[c].load(Ordering::Relaxed))
    }

    /// The Prometheus text exposition.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
        out.push_str("# HELP prooflog_requests_total Requests answered, by endpoint and status class.\n# TYPE prooflog_requests_total counter\n");
        for (name, e) in ENDPOINTS.iter().zip(&self.endpoints) {
            for (class, n) in CLASSES.iter().zip(&e.by_class) {
                let n = load(n);
                if n > 0 {
                    let _ = writeln!(
                        out,
                        "prooflog_requests_total{{endpoint=\"{name}\",status=\"{class}\"}} {n}"
                    );
                }
            }
        }
        out.push_str("# HELP prooflog_request_duration_seconds Time to answer a request.\n# TYPE prooflog_request_duration_seconds histogram\n");
        for (name, e) in ENDPOINTS.iter().zip(&self.endpoints) {
            let count = load(&e.count);
            if count == 0 {
                continue;
            }
            let mut cumulative = 0;
            for (le, n) in BUCKETS.iter().zip(&e.buckets) {
                cumulative += load(n);
                let _ = writeln!(
                    out,
                    "prooflog_request_duration_seconds_bucket{{endpoint=\"{name}\",le=\"{le}\"}} {cumulative}"
                );
            }
            let _ = writeln!(
                out,
                "prooflog_request_duration_seconds_bucket{{endpoint=\"{name}\",le=\"+Inf\"}} {count}"
            );
            let _ = writeln!(
                out,
                "prooflog_request_duration_seconds_sum{{endpoint=\"{name}\"}} {}",
                load(&e.sum_us) as f64 / 1e6
            );
            let _ = writeln!(
                out,
                "prooflog_request_duration_seconds_count{{endpoint=\"{name}\"}} {count}"
            );
        }
        let counters = [
            (
                "prooflog_overlay_evidence_total",
                "Input facts given to per-request overlays.",
                &self.overlay_evidence,
            ),
            (
                "prooflog_overlay_new_facts_total",
                "Rows per-request overlays held themselves.",
                &self.overlay_new_facts,
            ),
            (
                "prooflog_overlay_derived_facts_total",
                "Facts rules derived in per-request overlays.",
                &self.overlay_derived_facts,
            ),
            (
                "prooflog_base_extensions_total",
                "Times the shared base was extended by stored evidence.",
                &self.base_extensions,
            ),
        ];
        for (name, help, v) in counters {
            let _ = writeln!(
                out,
                "# HELP {name} {help}\n# TYPE {name} counter\n{name} {}",
                load(v)
            );
        }
        let gauges = [
            (
                "prooflog_evaluations_in_flight",
                "Evaluations running now.",
                &self.evaluations_in_flight,
            ),
            (
                "prooflog_base_facts",
                "Facts in the shared base (input and derived).",
                &self.base_facts,
            ),
            (
                "prooflog_stored_evidence",
                "Records in the durable evidence store.",
                &self.stored_evidence,
            ),
        ];
        for (name, help, v) in gauges {
            let _ = writeln!(
                out,
                "# HELP {name} {help}\n# TYPE {name} gauge\n{name} {}",
                load(v)
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_buckets_are_cumulative() {
        let m = Metrics::default();
        m.request(0, 200, Duration::from_micros(300));
        m.request(0, 200, Duration::from_millis(20));
        m.request(0, 400, Duration::from_secs(60));
        let text = m.render();
        assert!(text.contains("prooflog_requests_total{endpoint=\"/v1/ask\",status=\"2xx\"} 2"));
        assert!(text.contains("prooflog_requests_total{endpoint=\"/v1/ask\",status=\"4xx\"} 1"));
        assert!(text.contains(
            "prooflog_request_duration_seconds_bucket{endpoint=\"/v1/ask\",le=\"0.0005\"} 1"
        ));
        assert!(text.contains(
            "prooflog_request_duration_seconds_bucket{endpoint=\"/v1/ask\",le=\"0.025\"} 2"
        ));
        assert!(text.contains(
            "prooflog_request_duration_seconds_bucket{endpoint=\"/v1/ask\",le=\"+Inf\"} 3"
        ));
        assert_eq!(m.count("/v1/ask", "4xx"), 1);
    }
}
