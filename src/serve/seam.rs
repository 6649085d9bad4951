//! The edges' decision points, and the planted defects that answer them otherwise. Where
//! the edge zoo (`crate::edges`) plants a defect, the sandbox, check-log's HAR reader and
//! conform's fault layer ask their [`EdgeSeam`]: each method is one point, answered as documented
//! by [`EdgeSeam::REFERENCE`] (the default), otherwise by one [`EdgeDefect`]. The seam is
//! fixed when the edge is built.

use super::defect::EdgeDefect;
use crate::serve::faults::Action;

/// Which edge runs: the reference, or the reference with one planted defect.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EdgeSeam(Option<EdgeDefect>);

impl EdgeSeam {
    /// Every point as documented.
    pub const REFERENCE: EdgeSeam = EdgeSeam(None);

    /// The reference with `defect` planted.
    pub fn planted(defect: EdgeDefect) -> EdgeSeam {
        EdgeSeam(Some(defect))
    }

    // ---- the sandbox: HTTP mapping ---------------------------------------------------

    /// The `Idempotency-Key` the sandbox reads from a request (RFC: the header as sent).
    pub fn idempotency_key(self, sent: Option<Vec<u8>>) -> Option<Vec<u8>> {
        match self.0 {
            Some(EdgeDefect::IdempotencyKeyHeaderIgnored) => None,
            _ => sent,
        }
    }

    /// The status written for the platform's answer `status` (the model's own).
    pub fn status(self, status: u16) -> u16 {
        match (self.0, status) {
            (Some(EdgeDefect::ConflictWritten400), 409) => 400,
            _ => status,
        }
    }

    /// The `Retry-After` written for the platform's answer (RATE-02: a 429 carries it).
    pub fn retry_after(self, retry_after_s: Option<u32>) -> Option<u32> {
        match self.0 {
            Some(EdgeDefect::RetryAfterDropped) => None,
            _ => retry_after_s,
        }
    }

    // ---- the sandbox: fault plan -------------------------------------------------------

    /// The action the sandbox applies for the plan's `action` (documented in
    /// `serve::faults`: `reset_before` and `500_before` execute nothing, `reset_after`
    /// executes and loses the answer).
    pub fn fault(self, action: Action) -> Action {
        match (self.0, action) {
            (Some(EdgeDefect::ResetBeforeExecutes), Action::ResetBefore) => Action::ResetAfter,
            (Some(EdgeDefect::Fail500BeforeExecutes), Action::Fail500Before) => {
                Action::Fail500After
            }
            (Some(EdgeDefect::ResetAfterDropsExecution), Action::ResetAfter) => Action::ResetBefore,
            _ => action,
        }
    }

    // ---- the sandbox: exports ---------------------------------------------------------

    /// Whether the events export writes event `line` (JSON Lines; every event is).
    pub fn exports_event(self, line: &str) -> bool {
        !(self.0 == Some(EdgeDefect::EventsExportWithoutLost) && line.contains("\"kind\":\"lost\""))
    }

    // ---- check-log: the HAR reader -------------------------------------------------------

    /// An entry's start, from `startedDateTime` (HAR 1.2: when the request started) and
    /// its `time` (ms).
    pub fn har_start(self, started_ms: i64, time_ms: u64) -> i64 {
        match self.0 {
            Some(EdgeDefect::HarOrderedByEnd) => {
                started_ms.saturating_add(i64::try_from(time_ms).unwrap_or(i64::MAX))
            }
            _ => started_ms,
        }
    }

    /// Whether header names are matched in any case (RFC 9110 §5.1: they are
    /// case-insensitive; HTTP/2 captures write them lowercase).
    pub fn headers_any_case(self) -> bool {
        self.0 != Some(EdgeDefect::HarHeaderCaseSensitive)
    }

    /// Whether the response's `Retry-After` header is read.
    pub fn har_reads_retry_after(self) -> bool {
        self.0 != Some(EdgeDefect::HarRetryAfterIgnored)
    }

    /// Whether an entry's response body is read from `response.content` (HAR 1.2), not
    /// from the request's `postData`.
    pub fn har_response_body_from_response(self) -> bool {
        self.0 != Some(EdgeDefect::HarResponseBodyFromRequest)
    }

    // ---- conform: its faults -------------------------------------------------------------

    /// Whether conform's faults send a request it was told to reset before forwarding.
    pub fn proxy_forwards_reset_before(self) -> bool {
        self.0 == Some(EdgeDefect::ProxyResetBeforeForwards)
    }
}
