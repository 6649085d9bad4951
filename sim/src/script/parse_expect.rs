//! Parsing expectations: every field, code, status and counter an expectation names
//! is checked here, so a misspelt one is a `file:line:column` error, not a failed run.

use super::ast::*;
use super::cursor::{Cursor, Parsed, fail};
use super::parse::Parser;
use super::parse_settings::is_name;
use super::request::numbered;
use payhub_model::{ErrorCode, PaymentStatus};

/// Fields an expectation may name, by what it expects, space-separated.
const PAYMENT_FIELDS: &str = "id merchant_order_no amount currency status resolution_status \
    attempt_count failure failure.code failure.attempt_id next_action expires_at fee_rate_bps \
    amount_refunded version";

/// Fields an expectation on a response may name (Payment, Refund, session, list, error).
const RESPONSE_FIELDS: &[&str] = &[
    PAYMENT_FIELDS,
    "payment_id merchant_refund_no code field retryable related_resource_id retry_after count",
];

const REFUND_FIELDS: &str =
    "id payment_id merchant_refund_no amount status resolution_status version";

const WEBHOOK_FIELDS: &str =
    "event delivery id status resolution_status attempt_count version amount payment_id";

/// Fields of a client's order record (its database).
const ORDER_FIELDS: &str =
    "state status version payment_id key seq card outcome attempt_count fulfilled";

const RESOLUTIONS: &[&str] = &["known", "needs_query", "manual_review"];

/// The counters of `expect ledger:` and `expect platform:` and the filters each takes.
const LEDGER_COUNTERS: &[(&str, &str)] = &[
    ("charges", "payment card key order merchant env"),
    ("refunds", "refund payment"),
    ("charge-calls", "payment card key"),
    ("refund-calls", "refund"),
];
const PLATFORM_COUNTERS: &[(&str, &str)] = &[
    ("payments", "order merchant env status"),
    ("attempts", "payment"),
    ("refunds", "payment refund_no"),
    ("sessions", "payment"),
    ("records", ""),
];

/// `expect payment ID: …` and `expect refund ID: …` (`w` is `payment` or `refund`).
fn object_expectation(w: &str, cur: &mut Cursor) -> Parsed<Expectation> {
    let (id, icol) = cur.expect_word("an object id followed by ':'")?;
    let Some(id) = id.strip_suffix(':') else {
        fail!(icol, "expected '{id}:'");
    };
    let (kind, prefix, allowed) = match w {
        "payment" => (ObjectKind::Payment, "pay_demo_", PAYMENT_FIELDS),
        _ => (ObjectKind::Refund, "ref_demo_", REFUND_FIELDS),
    };
    let Some(id) = numbered(id, prefix) else {
        fail!(icol, "'{id}' is not a {w} id");
    };
    let fields = fields(cur, &[allowed], w)?;
    Ok(Expectation::Object { kind, id, fields })
}

impl Parser {
    pub(super) fn expect(&mut self, cur: &mut Cursor) -> Parsed<Expectation> {
        let (w, wcol) = cur.expect_word("what to expect (expect: 201, expect ledger: …)")?;
        match w.as_str() {
            "ledger:" => counter(CounterScope::Ledger, cur),
            "platform:" => counter(CounterScope::Platform, cur),
            "payment" | "refund" => object_expectation(&w, cur),
            "webhook:" => webhook(true, cur),
            "no" => {
                cur.keyword("webhook:", |x| {
                    format!("expect no webhook: KIND, not 'no {x}'")
                })?;
                webhook(false, cur)
            }
            _ => self.expect_of_server(&w, wcol, cur),
        }
    }

    /// `expect SERVER: …` and `expect SERVER order ORDER: …`.
    fn expect_of_server(&mut self, w: &str, wcol: u32, cur: &mut Cursor) -> Parsed<Expectation> {
        let unknown = |name: &str| self.script.servers.iter().all(|s| s.name != name);
        if let Some(name) = w.strip_suffix(':') {
            let near = super::suggest::closest(w, ["ledger:", "platform:", "webhook:"]);
            if let Some(near) = near.filter(|_| unknown(name)) {
                fail!(
                    wcol,
                    "unknown expectation 'expect {w}' (did you mean 'expect {near}'?)"
                );
            }
            let server = self.server(name, wcol)?;
            return self.expect_response(Some(server), wcol, cur);
        }
        if is_name(w) && cur.eat("order") {
            let server = self.client_server(w, wcol)?;
            let (order, ocol) = cur.expect_word("an order number followed by ':'")?;
            let Some(order) = order.strip_suffix(':') else {
                fail!(ocol, "expected '{order}:'");
            };
            let fields = fields(cur, &[ORDER_FIELDS], "client order")?;
            return Ok(Expectation::ClientOrder {
                server,
                order: order.to_owned(),
                fields,
            });
        }
        if is_name(w) && unknown(w) {
            fail!(wcol, "expect {w}: … names {}", self.unknown_server(w));
        }
        fail!(
            wcol,
            "unknown expectation '{w}' (expect: …, expect SERVER: …, expect ledger: …, expect platform: …, expect payment ID: …, expect refund ID: …, expect webhook: …, expect no webhook: …, expect SERVER order ORDER: …, expect violation NAME)"
        )
    }

    pub(super) fn expect_response(
        &mut self,
        server: Option<usize>,
        col: u32,
        cur: &mut Cursor,
    ) -> Parsed<Expectation> {
        if !self.requested.contains(&server.unwrap_or(usize::MAX)) {
            let who = server.map(|s| format!(" of server {}", self.script.servers[s].name));
            let who = who.unwrap_or_default();
            fail!(col, "this expectation needs a request line{who} before it");
        }
        let (w, wcol) = cur.expect_word("a status (201), lost or pending")?;
        let want = match w.as_str() {
            "lost" => Want::Lost,
            "pending" => Want::Pending,
            _ => {
                let Some(status) = w.parse().ok().filter(|s| (100..600).contains(s)) else {
                    fail!(wcol, "expected an HTTP status, lost or pending, not '{w}'");
                };
                let mut code = None;
                if let Some(next) = cur.peek_word().filter(|n| !n.contains('=')) {
                    let ccol = cur.col();
                    cur.word();
                    let Some(c) = error_code(&next) else {
                        fail!(ccol, "unknown error code '{next}'");
                    };
                    if c.http_status() != status {
                        fail!(ccol, "{next} is a {} code, not {status}", c.http_status());
                    }
                    code = Some(c);
                }
                let fields = fields(cur, RESPONSE_FIELDS, "response")?;
                Want::Answer {
                    status,
                    code,
                    fields,
                }
            }
        };
        Ok(Expectation::Response { server, want })
    }
}

/// `expect webhook: KIND …` or `expect no webhook: KIND`.
fn webhook(present: bool, cur: &mut Cursor) -> Parsed<Expectation> {
    let (kind, kcol) = cur.expect_word("an event kind (payment.succeeded)")?;
    let valid = match kind.split_once('.') {
        Some(("payment", s)) => PaymentStatus::from_name(s).is_some(),
        Some(("refund", s)) => ["processing", "succeeded", "failed"].contains(&s),
        _ => false,
    };
    if !valid {
        fail!(
            kcol,
            "'{kind}' is not an event kind (payment.succeeded, refund.failed, …)"
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

/// `expect ledger: TERM(FILTERS) CMP N` and `expect platform: …`.
fn counter(scope: CounterScope, cur: &mut Cursor) -> Parsed<Expectation> {
    let (text, col) = cur.rest();
    let chars: Vec<char> = text.chars().collect();
    let in_term = |c: &&char| c.is_alphanumeric() || **c == '-' || **c == '_';
    let i = chars.iter().take_while(in_term).count();
    let term: String = chars[..i].iter().collect();
    let table = match scope {
        CounterScope::Ledger => LEDGER_COUNTERS,
        CounterScope::Platform => PLATFORM_COUNTERS,
    };
    let Some((_, allowed)) = table.iter().find(|(t, _)| *t == term) else {
        let names: Vec<&str> = table.iter().map(|(t, _)| *t).collect();
        let names = names.join(", ");
        fail!(col, "unknown counter '{term}' (counters: {names})");
    };
    let (filters, i) = counter_filters(&chars, i, col, &term, allowed)?;
    let rest: String = chars[i..].iter().collect();
    let rest_col = col + i as u32 + (rest.len() - rest.trim_start().len()) as u32;
    let (cmp, value) = comparison(rest.trim(), rest_col, &term)?;
    let counter = Counter {
        term,
        filters,
        cmp,
        value,
    };
    Ok(Expectation::Count { scope, counter })
}

/// `(name=value, …)` after a counter's term at `chars[i]`, if there: the filters, each
/// one the term allows, and the index after the `)`.
fn counter_filters(
    chars: &[char],
    i: usize,
    col: u32,
    term: &str,
    allowed: &str,
) -> Parsed<(Vec<FieldCheck>, usize)> {
    if chars.get(i) != Some(&'(') {
        return Ok((Vec::new(), i));
    }
    let Some(close) = chars[i..].iter().position(|c| *c == ')').map(|p| p + i) else {
        fail!(col + i as u32, "missing ')'");
    };
    let inner: String = chars[i + 1..close].iter().collect();
    let base = col + i as u32 + 1;
    let mut filters = Vec::new();
    for part in inner.split(',') {
        let offset = inner[..inner.find(part).unwrap_or(0)].chars().count() as u32;
        let column = base + offset + (part.len() - part.trim_start().len()) as u32;
        let part = part.trim();
        if part.is_empty() {
            continue;
        }
        let Some((k, v)) = part.split_once('=') else {
            fail!(column, "expected name=value, not '{part}'");
        };
        if !allowed.split_whitespace().any(|a| a == k) {
            let names = allowed.split_whitespace().collect::<Vec<_>>().join(", ");
            fail!(column, "'{term}' has no filter '{k}' (filters: {names})");
        }
        let (name, value) = (k.to_owned(), v.trim().trim_matches('"').to_owned());
        filters.push(FieldCheck {
            name,
            value,
            pos: Pos { line: 0, column },
        });
    }
    Ok((filters, close + 1))
}

/// `= N`, `<= N` or `>= N` after a counter.
fn comparison(rest: &str, rest_col: u32, term: &str) -> Parsed<(Cmp, u64)> {
    let Some((cmp, n)) = [Cmp::Le, Cmp::Ge, Cmp::Eq]
        .into_iter()
        .find_map(|cmp| Some((cmp, rest.strip_prefix(cmp.as_str())?.trim())))
    else {
        fail!(rest_col, "expected '= N', '<= N' or '>= N' after {term}");
    };
    let Ok(value) = n.parse() else {
        fail!(rest_col, "'{n}' is not a count");
    };
    Ok((cmp, value))
}

/// The `name=value` checks left on the line, each a field `allowed` names (space-separated
/// lists) with a value it may have.
fn fields(cur: &mut Cursor, allowed: &[&str], what: &str) -> Parsed<Vec<FieldCheck>> {
    let names = || allowed.iter().flat_map(|a| a.split(' '));
    let mut out = Vec::new();
    for (name, value, column) in cur.pairs()? {
        if !names().any(|n| n == name) {
            let names = names().collect::<Vec<_>>().join(", ");
            fail!(
                column,
                "unknown field '{name}' of a {what} (fields: {names})"
            );
        }
        let vcol = column + name.chars().count() as u32 + 1;
        match name.as_str() {
            // A Payment's status, or a Refund's own (SCHED-03, A-REFUND-REVIEW).
            "status"
                if what != "client order"
                    && PaymentStatus::from_name(&value).is_none()
                    && value != "pending_review" =>
            {
                let names = PaymentStatus::ALL.iter().map(|s| s.as_str());
                let names: Vec<&str> = names.chain(["pending_review"]).collect();
                fail!(vcol, "'{value}' is not a status ({})", names.join(", "));
            }
            "resolution_status" if !RESOLUTIONS.contains(&value.as_str()) => {
                let all = RESOLUTIONS.join(", ");
                fail!(vcol, "'{value}' is not a resolution status ({all})");
            }
            "code" if error_code(&value).is_none() => fail!(vcol, "unknown error code '{value}'"),
            _ => {}
        }
        out.push(FieldCheck {
            name,
            value,
            pos: Pos { line: 0, column },
        });
    }
    Ok(out)
}

pub(crate) fn error_code(name: &str) -> Option<ErrorCode> {
    ErrorCode::ALL.iter().copied().find(|c| c.as_str() == name)
}
