//! [`Metrics`]: what `GET /metrics` reports, in the Prometheus text format.

use std::fmt::Write;

use prometheus_client::encoding::{EncodeLabelSet, EncodeLabelValue, LabelValueEncoder};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

/// A call's tool and how it ended.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct CallLabels {
    pub tool: String,
    pub outcome: Outcome,
}

/// How a call ended.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// The tool answered.
    Ok,
    /// The answer is an `Error: ...` text.
    Error,
    /// Refused: too many calls at once.
    Busy,
    /// The client cancelled it.
    Cancelled,
}

/// Whether a reload took.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct ReloadLabels {
    pub result: ReloadResult,
}

/// How a reload ended.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
pub(crate) enum ReloadResult {
    /// The new set of modules is served.
    Applied,
    /// The config did not parse; the old set is still served.
    Failed,
}

impl EncodeLabelValue for Outcome {
    fn encode(&self, encoder: &mut LabelValueEncoder<'_>) -> std::fmt::Result {
        encoder.write_str(match self {
            Outcome::Ok => "ok",
            Outcome::Error => "error",
            Outcome::Busy => "busy",
            Outcome::Cancelled => "cancelled",
        })
    }
}

impl EncodeLabelValue for ReloadResult {
    fn encode(&self, encoder: &mut LabelValueEncoder<'_>) -> std::fmt::Result {
        encoder.write_str(match self {
            ReloadResult::Applied => "applied",
            ReloadResult::Failed => "failed",
        })
    }
}

/// The server's metrics.
pub(crate) struct Metrics {
    registry: Registry,
    pub calls: Family<CallLabels, Counter>,
    pub latency: Histogram,
    pub in_flight: Gauge,
    pub modules: Gauge,
    pub reloads: Family<ReloadLabels, Counter>,
    /// HTTP connections open now.
    pub connections_open: Gauge,
    /// HTTP connections closed at once: `max_connections` were open.
    pub connections_refused: Counter,
    /// Accepts of HTTP connections that failed.
    pub accept_errors: Counter,
    /// 2025-11-25 sessions open over HTTP.
    pub sessions: Gauge,
}

impl Metrics {
    pub(crate) fn new() -> Self {
        let mut registry = Registry::with_prefix("toolhost");
        let calls = Family::<CallLabels, Counter>::default();
        registry.register(
            "tool_calls",
            "Tool calls, by tool and outcome",
            calls.clone(),
        );
        // 100 µs to about 52 s.
        let latency = Histogram::new(exponential_buckets(0.0001, 2.0, 20));
        registry.register(
            "tool_call_duration_seconds",
            "Time from a tool call's arrival to its answer",
            latency.clone(),
        );
        let in_flight = Gauge::default();
        registry.register(
            "tool_calls_in_flight",
            "Tool calls running now",
            in_flight.clone(),
        );
        let modules = Gauge::default();
        registry.register("modules_loaded", "Tool modules served", modules.clone());
        let reloads = Family::<ReloadLabels, Counter>::default();
        registry.register(
            "reloads",
            "Reloads of the config, by result",
            reloads.clone(),
        );
        for result in [ReloadResult::Applied, ReloadResult::Failed] {
            reloads.get_or_create(&ReloadLabels { result }).get();
        }
        let connections_open = Gauge::default();
        registry.register(
            "http_connections_open",
            "HTTP connections open now",
            connections_open.clone(),
        );
        let connections_refused = Counter::default();
        registry.register(
            "http_connections_refused",
            "HTTP connections closed as soon as accepted, because serve.max_connections were open",
            connections_refused.clone(),
        );
        let accept_errors = Counter::default();
        registry.register(
            "http_accept_errors",
            "Accepts of HTTP connections that failed (out of file descriptors, say)",
            accept_errors.clone(),
        );
        let sessions = Gauge::default();
        registry.register(
            "mcp_sessions",
            "2025-11-25 sessions open over HTTP",
            sessions.clone(),
        );
        Self {
            registry,
            calls,
            latency,
            in_flight,
            modules,
            reloads,
            connections_open,
            connections_refused,
            accept_errors,
            sessions,
        }
    }

    /// Counts a call of `tool` that ended as `outcome`.
    pub(crate) fn call(&self, tool: &str, outcome: Outcome) {
        let labels = CallLabels {
            tool: tool.to_string(),
            outcome,
        };
        self.calls.get_or_create(&labels).inc();
    }

    /// Counts a reload.
    pub(crate) fn reload(&self, result: ReloadResult) {
        self.reloads.get_or_create(&ReloadLabels { result }).inc();
    }

    /// The metrics in the Prometheus text format.
    pub(crate) fn encode(&self) -> String {
        let mut text = String::new();
        if let Err(e) = prometheus_client::encoding::text::encode(&mut text, &self.registry) {
            tracing::warn!("cannot encode the metrics: {e}");
        }
        text
    }
}
