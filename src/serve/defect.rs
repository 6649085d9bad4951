//! The edge zoo's planted defects: small, realistic bugs of the code that faces the
//! outside world (the sandbox's HTTP mapping and fault plan, check-log's HAR reader,
//! conform's faults, the sandbox's events export), each planted through one decision point of [`super::seam::EdgeSeam`].

use serde::Serialize;

payhub_model::named! {
    fn name;
    /// Which edge a defect is planted in.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
    #[serde(rename_all = "kebab-case")]
    pub enum Edge {
        /// `serve`: the HTTP mapping.
        SandboxHttp = "sandbox http",
        /// `serve`: the fault plan.
        SandboxFaults = "sandbox faults",
        /// `serve`: what the sandbox exports of a session.
        SandboxExports = "sandbox exports",
        /// `check-log`: the HAR reader.
        CheckLog = "check-log",
        /// `conform`: the faults its HTTP client applies (the name kept from when a loopback proxy applied them).
        ConformProxy = "conform proxy",
    }
}

macro_rules! edge_defects {
    ($( $(#[doc = $doc:literal])* $variant:ident = $name:literal, $edge:ident, $about:literal; )*) => {
        /// A planted defect of an edge: its name, the edge it is planted in and what it
        /// does, in one line.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
        #[serde(rename_all = "snake_case")]
        pub enum EdgeDefect {
            $( $(#[doc = $doc])* $variant, )*
        }

        impl EdgeDefect {
            pub const ALL: [EdgeDefect; [$(stringify!($variant)),*].len()] =
                [$(EdgeDefect::$variant),*];

            pub fn name(self) -> &'static str {
                match self { $(EdgeDefect::$variant => $name,)* }
            }

            pub fn edge(self) -> Edge {
                match self { $(EdgeDefect::$variant => Edge::$edge,)* }
            }

            /// What the defect does, in one line.
            pub fn about(self) -> &'static str {
                match self { $(EdgeDefect::$variant => $about,)* }
            }
        }
    };
}

edge_defects! {
    /// The sandbox reads no `Idempotency-Key` header (a header ignored).
    IdempotencyKeyHeaderIgnored = "idempotency_key_header_ignored", SandboxHttp,
        "the sandbox reads no Idempotency-Key header: every keyed request is answered as keyless";
    /// The sandbox writes the platform's 409 as 400 (a status mapped wrongly).
    ConflictWritten400 = "conflict_written_400", SandboxHttp,
        "the sandbox writes the platform's 409 as 400, the body unchanged";
    /// The sandbox drops the platform's `Retry-After` (RATE-02).
    RetryAfterDropped = "retry_after_dropped", SandboxHttp,
        "the sandbox writes a 429 without the platform's Retry-After";
    /// `reset_before` executes the request (a fault that should lose it executes it).
    ResetBeforeExecutes = "reset_before_executes", SandboxFaults,
        "the fault reset_before executes the request before it resets the connection";
    /// `500_before` executes the request (a 500 that executed).
    Fail500BeforeExecutes = "fail_500_before_executes", SandboxFaults,
        "the fault 500_before executes the request before the edge answers 500";
    /// `reset_after` loses the request instead of the answer (a "drop the answer" fault
    /// that also drops the execution).
    ResetAfterDropsExecution = "reset_after_drops_execution", SandboxFaults,
        "the fault reset_after loses the request: nothing executes";
    /// The sandbox's events export leaves out the messages the network lost (an exporter
    /// that keeps what was delivered).
    EventsExportWithoutLost = "events_export_without_lost", SandboxExports,
        "GET /__sandbox/events leaves out the events of lost requests and answers";
    /// check-log takes a HAR entry's end for its start (entries ordered by end).
    HarOrderedByEnd = "har_ordered_by_end", CheckLog,
        "check-log takes startedDateTime + time as an entry's start: overlapping exchanges ordered by their end";
    /// check-log matches header names case-sensitively (an HTTP/2 capture's lowercase
    /// `authorization` is no key: every merchant's requests resolved to one scope).
    HarHeaderCaseSensitive = "har_header_case_sensitive", CheckLog,
        "check-log matches header names case-sensitively: a capture's lowercase authorization and idempotency-key are not read";
    /// check-log ignores a response's `Retry-After` header.
    HarRetryAfterIgnored = "har_retry_after_ignored", CheckLog,
        "check-log ignores the response's Retry-After header";
    /// check-log reads a response's body from the request's `postData`.
    HarResponseBodyFromRequest = "har_response_body_from_request", CheckLog,
        "check-log reads a response's body from the request's postData";
    /// conform's faults send a request it was told to reset before forwarding.
    ProxyResetBeforeForwards = "proxy_reset_before_forwards", ConformProxy,
        "conform's proxy forwards a request it was told to reset before forwarding, then resets";
}
