//! Parsing expectations: every field, code, status and counter an expectation names
//! is checked here, so a misspelt one is a `file:line:column` error, not a failed run.

use super::ast::*;
use super::cursor::{Cursor, LineError};
use super::parse::{Parser, err};
use super::parse_settings::is_name;
use super::request::{parse_payment_id, parse_refund_id};
use payhub_model::{ErrorCode, PaymentStatus};

const PAYMENT_FIELDS: &[&str] = &[
    "id",
    "merchant_order_no",
    "amount",
    "currency",
    "status",
    "resolution_status",
    "attempt_count",
    "failure",
    "failure.code",
    "failure.attempt_id",
    "next_action",
    "expires_at",
    "fee_rate_bps",
    "amount_refunded",
    "version",
];

/// Fields an expectation on a response may name (Payment, Refund, session, list, error).
pub(crate) const RESPONSE_FIELDS: &[&[&str]] = &[
    PAYMENT_FIELDS,
    &[
        "payment_id",
        "merchant_refund_no",
        "code",
        "field",
        "retryable",
        "related_resource_id",
        "retry_after",
        "count",
    ],
];

const REFUND_FIELDS: &[&str] = &[
    "id",
    "payment_id",
    "merchant_refund_no",
    "amount",
    "status",
    "resolution_status",
    "version",
];

const WEBHOOK_FIELDS: &[&str] = &[
    "event",
    "delivery",
    "id",
    "status",
    "resolution_status",
    "attempt_count",
    "version",
    "amount",
    "payment_id",
];

/// Fields of a client's order record (its database).
pub(crate) const ORDER_FIELDS: &[&str] = &[
    "state",
    "status",
    "version",
    "payment_id",
    "key",
    "seq",
    "card",
    "outcome",
    "attempt_count",
    "fulfilled",
];

const RESOLUTIONS: &[&str] = &["known", "needs_query", "manual_review"];

/// The counters of `expect ledger:` and `expect platform:` and the filters each takes.
const LEDGER_COUNTERS: &[(&str, &[&str])] = &[
    (
        "charges",
        &["payment", "card", "key", "order", "merchant", "env"],
    ),
    ("refunds", &["refund", "payment"]),
    ("charge-calls", &["payment", "card", "key"]),
    ("refund-calls", &["refund"]),
];
const PLATFORM_COUNTERS: &[(&str, &[&str])] = &[
    ("payments", &["order", "merchant", "env", "status"]),
    ("attempts", &["payment"]),
    ("refunds", &["payment", "refund_no"]),
    ("sessions", &["payment"]),
    ("records", &[]),
];

/// `expect payment ID: …` and `expect refund ID: …` (`w` is `payment` or `refund`).
fn object_expectation(w: &str, cur: &mut Cursor) -> Result<Expectation, LineError> {
    let (id, icol) = cur.expect_word("an object id followed by ':'")?;
    let Some(id) = id.strip_suffix(':') else {
        return err(icol, format!("expected '{id}:'"));
    };
    let (kind, n, allowed) = if w == "payment" {
        (
            ObjectKind::Payment,
            parse_payment_id(id).map(|p| p.0),
            PAYMENT_FIELDS,
        )
    } else {
        (
            ObjectKind::Refund,
            parse_refund_id(id).map(|r| r.0),
            REFUND_FIELDS,
        )
    };
    let n = n.ok_or((icol, format!("'{id}' is not a {w} id")))?;
    let fields = fields(cur, &[allowed], w)?;
    Ok(Expectation::Object {
        kind,
        id: n,
        fields,
    })
}

impl Parser {
    pub(super) fn expect(&mut self, cur: &mut Cursor) -> Result<Expectation, LineError> {
        let (w, wcol) = cur.expect_word("what to expect (expect: 201, expect ledger: …)")?;
        match w.as_str() {
            "ledger:" => self.counter(CounterScope::Ledger, cur),
            "platform:" => self.counter(CounterScope::Platform, cur),
            "payment" | "refund" => object_expectation(&w, cur),
            "webhook:" => self.webhook(true, cur),
            "no" => {
                cur.keyword("webhook:", |x| {
                    format!("expect no webhook: KIND, not 'no {x}'")
                })?;
                self.webhook(false, cur)
            }
            _ => {
                if let Some(name) = w.strip_suffix(':')
                    && self.script.servers.iter().all(|s| s.name != name)
                    && let Some(near) =
                        super::suggest::closest(&w, ["ledger:", "platform:", "webhook:"])
                {
                    return err(
                        wcol,
                        format!("unknown expectation 'expect {w}' (did you mean 'expect {near}'?)"),
                    );
                }
                if let Some(name) = w.strip_suffix(':') {
                    let server = self.server(name, wcol)?;
                    return self.expect_response(Some(server), wcol, cur);
                }
                if is_name(&w) && cur.peek_word().as_deref() == Some("order") {
                    let server = self.client_server(&w, wcol)?;
                    cur.word();
                    let (order, ocol) = cur.expect_word("an order number followed by ':'")?;
                    let Some(order) = order.strip_suffix(':') else {
                        return err(ocol, format!("expected '{order}:'"));
                    };
                    let fields = fields(cur, &[ORDER_FIELDS], "client order")?;
                    return Ok(Expectation::ClientOrder {
                        server,
                        order: order.to_owned(),
                        fields,
                    });
                }
                if is_name(&w) && self.script.servers.iter().all(|s| s.name != w) {
                    return err(
                        wcol,
                        format!("expect {w}: … names {}", self.unknown_server(&w)),
                    );
                }
                err(
                    wcol,
                    format!(
                        "unknown expectation '{w}' (expect: …, expect SERVER: …, expect ledger: …, expect platform: …, expect payment ID: …, expect refund ID: …, expect webhook: …, expect no webhook: …, expect SERVER order ORDER: …, expect violation NAME)"
                    ),
                )
            }
        }
    }

    pub(super) fn expect_response(
        &mut self,
        server: Option<usize>,
        col: u32,
        cur: &mut Cursor,
    ) -> Result<Expectation, LineError> {
        let key = server.unwrap_or(usize::MAX);
        if !self.requested.contains(&key) {
            let who = server
                .map(|s| format!(" of server {}", self.script.servers[s].name))
                .unwrap_or_default();
            return err(
                col,
                format!("this expectation needs a request line{who} before it"),
            );
        }
        let (w, wcol) = cur.expect_word("a status (201), lost or pending")?;
        let want = match w.as_str() {
            "lost" => Want::Lost,
            "pending" => Want::Pending,
            _ => {
                let status: u16 = w.parse().ok().filter(|s| (100..600).contains(s)).ok_or((
                    wcol,
                    format!("expected an HTTP status, lost or pending, not '{w}'"),
                ))?;
                let mut code = None;
                if let Some(next) = cur.peek_word().filter(|n| !n.contains('=')) {
                    let ccol = cur.col();
                    cur.word();
                    let c =
                        error_code(&next).ok_or((ccol, format!("unknown error code '{next}'")))?;
                    if c.http_status() != status {
                        return err(
                            ccol,
                            format!("{next} is a {} code, not {status}", c.http_status()),
                        );
                    }
                    code = Some(c);
                }
                Want::Answer {
                    status,
                    code,
                    fields: fields(cur, RESPONSE_FIELDS, "response")?,
                }
            }
        };
        Ok(Expectation::Response { server, want })
    }

    fn webhook(&mut self, present: bool, cur: &mut Cursor) -> Result<Expectation, LineError> {
        let (kind, kcol) = cur.expect_word("an event kind (payment.succeeded)")?;
        let valid = match kind.split_once('.') {
            Some(("payment", s)) => PaymentStatus::from_name(s).is_some(),
            Some(("refund", s)) => ["processing", "succeeded", "failed"].contains(&s),
            _ => false,
        };
        if !valid {
            return err(
                kcol,
                format!("'{kind}' is not an event kind (payment.succeeded, refund.failed, …)"),
            );
        }
        let fields = if present {
            fields(cur, &[WEBHOOK_FIELDS], "webhook")?
        } else {
            Vec::new()
        };
        Ok(Expectation::Webhook {
            present,
            kind,
            fields,
        })
    }

    fn counter(&mut self, scope: CounterScope, cur: &mut Cursor) -> Result<Expectation, LineError> {
        let (text, col) = cur.rest();
        let chars: Vec<char> = text.chars().collect();
        let mut i = 0;
        while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '-' || chars[i] == '_')
        {
            i += 1;
        }
        let term: String = chars[..i].iter().collect();
        let table = match scope {
            CounterScope::Ledger => LEDGER_COUNTERS,
            CounterScope::Platform => PLATFORM_COUNTERS,
        };
        let Some((_, allowed)) = table.iter().find(|(t, _)| *t == term) else {
            let names: Vec<&str> = table.iter().map(|(t, _)| *t).collect();
            return err(
                col,
                format!("unknown counter '{term}' (counters: {})", names.join(", ")),
            );
        };
        let (filters, i) = counter_filters(&chars, i, col, &term, allowed)?;
        let rest: String = chars[i..].iter().collect();
        let rest_col = col + i as u32 + (rest.len() - rest.trim_start().len()) as u32;
        let (cmp, value) = comparison(rest.trim(), rest_col, &term)?;
        Ok(Expectation::Count {
            scope,
            counter: Counter {
                term,
                filters,
                cmp,
                value,
            },
        })
    }
}

/// `(name=value, …)` after a counter's term at `chars[i]`, if there: the filters, each
/// one the term allows, and the index after the `)`.
fn counter_filters(
    chars: &[char],
    mut i: usize,
    col: u32,
    term: &str,
    allowed: &[&str],
) -> Result<(Vec<FieldCheck>, usize), LineError> {
    let mut filters = Vec::new();
    if chars.get(i) == Some(&'(') {
        let close = chars[i..]
            .iter()
            .position(|c| *c == ')')
            .map(|p| p + i)
            .ok_or((col + i as u32, "missing ')'".to_owned()))?;
        let inner: String = chars[i + 1..close].iter().collect();
        let base = col + i as u32 + 1;
        for part in inner.split(',') {
            let offset = inner[..inner.find(part).unwrap_or(0)].chars().count() as u32;
            let part_col = base + offset + (part.len() - part.trim_start().len()) as u32;
            let part = part.trim();
            if part.is_empty() {
                continue;
            }
            let (k, v) = part
                .split_once('=')
                .ok_or((part_col, format!("expected name=value, not '{part}'")))?;
            if !allowed.contains(&k) {
                return err(
                    part_col,
                    format!(
                        "'{term}' has no filter '{k}' (filters: {})",
                        allowed.join(", ")
                    ),
                );
            }
            filters.push(FieldCheck {
                name: k.to_owned(),
                value: v.trim().trim_matches('"').to_owned(),
                pos: Pos {
                    line: 0,
                    column: part_col,
                },
            });
        }
        i = close + 1;
    }
    Ok((filters, i))
}

/// `= N`, `<= N` or `>= N` after a counter.
fn comparison(rest: &str, rest_col: u32, term: &str) -> Result<(Cmp, u64), LineError> {
    let (cmp, n) = if let Some(n) = rest.strip_prefix("<=") {
        (Cmp::Le, n)
    } else if let Some(n) = rest.strip_prefix(">=") {
        (Cmp::Ge, n)
    } else if let Some(n) = rest.strip_prefix('=') {
        (Cmp::Eq, n)
    } else {
        return err(
            rest_col,
            format!("expected '= N', '<= N' or '>= N' after {term}"),
        );
    };
    let value: u64 = n
        .trim()
        .parse()
        .map_err(|_| (rest_col, format!("'{}' is not a count", n.trim())))?;
    Ok((cmp, value))
}

fn fields(cur: &mut Cursor, allowed: &[&[&str]], what: &str) -> Result<Vec<FieldCheck>, LineError> {
    let mut out = Vec::new();
    for (name, value, col) in cur.pairs()? {
        if !allowed.iter().any(|a| a.contains(&name.as_str())) {
            return err(
                col,
                format!(
                    "unknown field '{name}' of a {what} (fields: {})",
                    allowed.concat().join(", ")
                ),
            );
        }
        let vcol = col + name.chars().count() as u32 + 1;
        match name.as_str() {
            // A Payment's status, or a Refund's own (SCHED-03, A-REFUND-REVIEW).
            "status"
                if what != "client order"
                    && PaymentStatus::from_name(&value).is_none()
                    && value != "pending_review" =>
            {
                let names = PaymentStatus::ALL.iter().map(|s| s.as_str());
                let names: Vec<&str> = names.chain(["pending_review"]).collect();
                return err(
                    vcol,
                    format!("'{value}' is not a status ({})", names.join(", ")),
                );
            }
            "resolution_status" if !RESOLUTIONS.contains(&value.as_str()) => {
                return err(
                    vcol,
                    format!(
                        "'{value}' is not a resolution status ({})",
                        RESOLUTIONS.join(", ")
                    ),
                );
            }
            "code" if error_code(&value).is_none() => {
                return err(vcol, format!("unknown error code '{value}'"));
            }
            _ => {}
        }
        out.push(FieldCheck {
            name,
            value,
            pos: Pos {
                line: 0,
                column: col,
            },
        });
    }
    Ok(out)
}

pub(crate) fn error_code(name: &str) -> Option<ErrorCode> {
    ErrorCode::ALL.iter().copied().find(|c| c.as_str() == name)
}
