//! The edge zoo's planted defects: small, realistic bugs of the code that faces the
//! outside world (the sandbox's HTTP mapping and fault plan, check-log's HAR reader,
//! conform's proxy, the sandbox's events export), each planted through one decision point of [`super::seam::EdgeSeam`].

use serde::Serialize;

/// Which edge a defect is planted in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Edge {
    /// `serve`: the HTTP mapping.
    SandboxHttp,
    /// `serve`: the fault plan.
    SandboxFaults,
    /// `serve`: what the sandbox exports of a session.
    SandboxExports,
    /// `check-log`: the HAR reader.
    CheckLog,
    /// `conform`: the fault-injecting proxy.
    ConformProxy,
}

impl Edge {
    pub fn name(self) -> &'static str {
        match self {
            Edge::SandboxHttp => "sandbox http",
            Edge::SandboxFaults => "sandbox faults",
            Edge::SandboxExports => "sandbox exports",
            Edge::CheckLog => "check-log",
            Edge::ConformProxy => "conform proxy",
        }
    }
}

/// A planted defect of an edge.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EdgeDefect {
    /// The sandbox reads no `Idempotency-Key` header (a header ignored).
    IdempotencyKeyHeaderIgnored,
    /// The sandbox writes the platform's 409 as 400 (a status mapped wrongly).
    ConflictWritten400,
    /// The sandbox drops the platform's `Retry-After` (RATE-02).
    RetryAfterDropped,
    /// `reset_before` executes the request (a fault that should lose it executes it).
    ResetBeforeExecutes,
    /// `500_before` executes the request (a 500 that executed).
    Fail500BeforeExecutes,
    /// `reset_after` loses the request instead of the answer (a "drop the answer" fault
    /// that also drops the execution).
    ResetAfterDropsExecution,
    /// The sandbox's events export leaves out the messages the network lost (an exporter
    /// that keeps what was delivered).
    EventsExportWithoutLost,
    /// check-log takes a HAR entry's end for its start (entries ordered by end).
    HarOrderedByEnd,
    /// check-log matches header names case-sensitively (an HTTP/2 capture's lowercase
    /// `authorization` is no key: every merchant's requests resolved to one scope).
    HarHeaderCaseSensitive,
    /// check-log ignores a response's `Retry-After` header.
    HarRetryAfterIgnored,
    /// check-log reads a response's body from the request's `postData`.
    HarResponseBodyFromRequest,
    /// conform's proxy forwards a request it was told to reset before forwarding.
    ProxyResetBeforeForwards,
}

impl EdgeDefect {
    pub const ALL: [EdgeDefect; 12] = [
        EdgeDefect::IdempotencyKeyHeaderIgnored,
        EdgeDefect::ConflictWritten400,
        EdgeDefect::RetryAfterDropped,
        EdgeDefect::ResetBeforeExecutes,
        EdgeDefect::Fail500BeforeExecutes,
        EdgeDefect::ResetAfterDropsExecution,
        EdgeDefect::EventsExportWithoutLost,
        EdgeDefect::HarOrderedByEnd,
        EdgeDefect::HarHeaderCaseSensitive,
        EdgeDefect::HarRetryAfterIgnored,
        EdgeDefect::HarResponseBodyFromRequest,
        EdgeDefect::ProxyResetBeforeForwards,
    ];

    pub fn name(self) -> &'static str {
        match self {
            EdgeDefect::IdempotencyKeyHeaderIgnored => "idempotency_key_header_ignored",
            EdgeDefect::ConflictWritten400 => "conflict_written_400",
            EdgeDefect::RetryAfterDropped => "retry_after_dropped",
            EdgeDefect::ResetBeforeExecutes => "reset_before_executes",
            EdgeDefect::Fail500BeforeExecutes => "fail_500_before_executes",
            EdgeDefect::ResetAfterDropsExecution => "reset_after_drops_execution",
            EdgeDefect::EventsExportWithoutLost => "events_export_without_lost",
            EdgeDefect::HarOrderedByEnd => "har_ordered_by_end",
            EdgeDefect::HarHeaderCaseSensitive => "har_header_case_sensitive",
            EdgeDefect::HarRetryAfterIgnored => "har_retry_after_ignored",
            EdgeDefect::HarResponseBodyFromRequest => "har_response_body_from_request",
            EdgeDefect::ProxyResetBeforeForwards => "proxy_reset_before_forwards",
        }
    }

    pub fn edge(self) -> Edge {
        match self {
            EdgeDefect::IdempotencyKeyHeaderIgnored
            | EdgeDefect::ConflictWritten400
            | EdgeDefect::RetryAfterDropped => Edge::SandboxHttp,
            EdgeDefect::ResetBeforeExecutes
            | EdgeDefect::Fail500BeforeExecutes
            | EdgeDefect::ResetAfterDropsExecution => Edge::SandboxFaults,
            EdgeDefect::EventsExportWithoutLost => Edge::SandboxExports,
            EdgeDefect::HarOrderedByEnd
            | EdgeDefect::HarHeaderCaseSensitive
            | EdgeDefect::HarRetryAfterIgnored
            | EdgeDefect::HarResponseBodyFromRequest => Edge::CheckLog,
            EdgeDefect::ProxyResetBeforeForwards => Edge::ConformProxy,
        }
    }

    /// What the defect does, in one line.
    pub fn about(self) -> &'static str {
        match self {
            EdgeDefect::IdempotencyKeyHeaderIgnored => {
                "the sandbox reads no Idempotency-Key header: every keyed request is answered as keyless"
            }
            EdgeDefect::ConflictWritten400 => {
                "the sandbox writes the platform's 409 as 400, the body unchanged"
            }
            EdgeDefect::RetryAfterDropped => {
                "the sandbox writes a 429 without the platform's Retry-After"
            }
            EdgeDefect::ResetBeforeExecutes => {
                "the fault reset_before executes the request before it resets the connection"
            }
            EdgeDefect::Fail500BeforeExecutes => {
                "the fault 500_before executes the request before the edge answers 500"
            }
            EdgeDefect::ResetAfterDropsExecution => {
                "the fault reset_after loses the request: nothing executes"
            }
            EdgeDefect::EventsExportWithoutLost => {
                "GET /__sandbox/events leaves out the events of lost requests and answers"
            }
            EdgeDefect::HarOrderedByEnd => {
                "check-log takes startedDateTime + time as an entry's start: overlapping exchanges ordered by their end"
            }
            EdgeDefect::HarHeaderCaseSensitive => {
                "check-log matches header names case-sensitively: a capture's lowercase authorization and idempotency-key are not read"
            }
            EdgeDefect::HarRetryAfterIgnored => {
                "check-log ignores the response's Retry-After header"
            }
            EdgeDefect::HarResponseBodyFromRequest => {
                "check-log reads a response's body from the request's postData"
            }
            EdgeDefect::ProxyResetBeforeForwards => {
                "conform's proxy forwards a request it was told to reset before forwarding, then resets"
            }
        }
    }
}
