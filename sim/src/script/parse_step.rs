//! Parsing steps: requests, business commands, faults, the environment, time and
//! the world's step labels.

use super::ast::*;
use super::command::command;
use super::cursor::{Cursor, LineError};
use super::label::{choice, then_crash};
use super::parse::{Parser, err};
use super::parse_settings::{is_name, known_key, parse_duration, parse_merchant};
use super::request::{self, parse_api_key};
use crate::config::WorkItem;
use payhub_model::event::BusinessOrder;
use payhub_model::{
    AcquirerDecision, ApiKeySpec, AttemptId, Branch, Control, Endpoint, MerchantId,
};

impl Parser {
    pub(super) fn action(
        &mut self,
        first: &str,
        col: u32,
        cur: &mut Cursor,
    ) -> Result<Action, LineError> {
        Ok(match first {
            "net:" => self.net(cur)?,
            "platform:" => self.platform_fault(cur)?,
            "upstream:" => self.upstream(CallKind::Any, cur)?,
            "upstream" => self.upstream_of_kind(cur)?,
            "payer:" => payer(cur)?,
            "env:" => Action::Control(self.env(cur)?),
            "branch:" => Action::Branch(branch(cur)?),
            "wait" => {
                let (d, dcol) = cur.expect_word("a duration (15s, 7d)")?;
                Action::Wait(parse_duration(&d).ok_or((
                    dcol,
                    format!("'{d}' is not a duration of at most 36500d (15s, 2min, 7d)"),
                ))?)
            }
            "tick" => Action::Tick,
            "until" => until_quiet(cur)?,
            "crash" | "restart" => {
                let (name, ncol) = cur.expect_word("a server")?;
                let server = self.client_server(&name, ncol)?;
                if first == "crash" {
                    Action::Crash { server }
                } else {
                    Action::Restart { server }
                }
            }
            "expect:" => Action::Expect(self.expect_response(None, col, cur)?),
            "expect" => Action::Expect(self.expect(cur)?),
            "deliver" | "drop" | "duplicate" | "500-before" | "500-after" | "acquire"
            | "advance" | "authenticate" | "rate-limit" | "pause-channel" | "issue-api-key"
            | "revoke-api-key" | "fee-rate" => Action::Step(choice(first, col, cur, true)?),
            _ => {
                if let Some(name) = first.strip_suffix(':') {
                    if is_name(name) {
                        let request = cur.peek_word().is_some_and(|w| {
                            w == "for" || w.starts_with(|c: char| c.is_ascii_uppercase())
                        });
                        let server = self.server(name, col);
                        let action = server
                            .clone()
                            .and_then(|server| self.request_or_command(server, cur));
                        if action.is_err() && request {
                            // A request line with an error still counts as one: its
                            // expectations are not reported as a second error.
                            if let Ok(server) = server {
                                self.requested.insert(server);
                            }
                            self.requested.insert(usize::MAX);
                        }
                        return action;
                    }
                }
                let hint = super::suggest::hint(first, STATEMENTS.iter().chain(PREFIXES).copied());
                return err(
                    col,
                    format!(
                        "unknown statement '{first}'{hint} (a statement starts with SERVER:, net:, platform:, upstream, payer:, env:, branch:, wait, tick, until quiet, crash, restart, expect, use, server, assume, or a step label such as 'deliver m1')"
                    ),
                );
            }
        })
    }

    /// `platform: 500 before|after [executing] [of SERVER]`.
    fn platform_fault(&mut self, cur: &mut Cursor) -> Result<Action, LineError> {
        cur.keyword("500", |w| format!("platform: 500 before|after, not '{w}'"))?;
        let (when, wcol) = cur.expect_word("before or after")?;
        let op = match when.as_str() {
            "before" => NetOp::Fail500Before,
            "after" => NetOp::Fail500After,
            _ => return err(wcol, format!("platform: 500 before|after, not '{when}'")),
        };
        if cur.peek_word().as_deref() == Some("executing") {
            cur.word();
        }
        let server = self.of_server(cur)?;
        Ok(Action::Net {
            op,
            kind: Some(MsgKind::Request),
            server,
        })
    }

    /// `upstream charge: …`, `upstream u3: …`: a decision on calls of one kind (or one id).
    fn upstream_of_kind(&mut self, cur: &mut Cursor) -> Result<Action, LineError> {
        let (sel, scol) =
            cur.expect_word("a call kind (charge:, query:, cancel:, refund:, query-refund:, u3:)")?;
        let Some(sel) = sel.strip_suffix(':') else {
            return err(scol, format!("expected 'upstream {sel}:'"));
        };
        let call = match sel {
            "charge" => CallKind::Charge,
            "query" => CallKind::Query,
            "cancel" => CallKind::Cancel,
            "refund" => CallKind::Refund,
            "query-refund" => CallKind::QueryRefund,
            other => match other.strip_prefix('u').and_then(|n| n.parse().ok()) {
                Some(n) => CallKind::Id(n),
                None => {
                    return err(
                        scol,
                        format!(
                            "unknown call kind '{other}' (charge, query, cancel, refund, query-refund, uN)"
                        ),
                    );
                }
            },
        };
        self.upstream(call, cur)
    }

    fn of_server(&self, cur: &mut Cursor) -> Result<Option<usize>, LineError> {
        match cur.peek_word().as_deref() {
            Some("of") | Some("to") | Some("from") => {
                cur.word();
                let (name, col) = cur.expect_word("a server")?;
                Ok(Some(self.server(&name, col)?))
            }
            _ => Ok(None),
        }
    }

    fn net(&mut self, cur: &mut Cursor) -> Result<Action, LineError> {
        let (op, ocol) = cur.expect_word("drop, duplicate, hold or release")?;
        // A word holds no space: `500 before` is `platform:`'s, never found here.
        let op = NetOp::from_name(&op).ok_or((
            ocol,
            format!("unknown net operation '{op}' (drop, duplicate, hold, release)"),
        ))?;
        if op == NetOp::Release && cur.at_end() {
            return Ok(Action::Net {
                op,
                kind: None,
                server: None,
            });
        }
        let (kind, kcol) = cur.expect_word("request, response or webhook")?;
        let kind = MsgKind::from_name(&kind).ok_or((
            kcol,
            format!(
                "net: {} request|response|webhook, not '{kind}'",
                op.as_str()
            ),
        ))?;
        let server = self.of_server(cur)?;
        if kind != MsgKind::Webhook && server.is_none() && !self.requested.contains(&usize::MAX) {
            // Without a server, a request or response is the last request line's.
            return err(
                kcol,
                format!(
                    "net: {} {} needs a request line before it (or 'to SERVER')",
                    op.as_str(),
                    kind.as_str()
                ),
            );
        }
        Ok(Action::Net {
            op,
            kind: Some(kind),
            server,
        })
    }

    fn upstream(&mut self, call: CallKind, cur: &mut Cursor) -> Result<Action, LineError> {
        let (w, wcol) = cur.expect_word(
            "a decision (approve, decline, require_action, fail, approve_silently), lost or reply",
        )?;
        if w == "lost" {
            return Ok(Action::UpstreamLost { call });
        }
        if w == "reply" {
            let deliver = match cur.peek_word().as_deref() {
                Some("lost") => {
                    cur.word();
                    false
                }
                Some("deliver") => {
                    cur.word();
                    true
                }
                _ => true,
            };
            return Ok(Action::UpstreamReply { deliver });
        }
        let decision = parse_decision(&w).ok_or((
            wcol,
            format!("unknown decision '{w}' (approve, decline, require_action, fail, approve_silently, lost, reply)"),
        ))?;
        let mut reply = ReplyFate::Deliver;
        for (k, v, c) in cur.pairs()? {
            if k != "reply" {
                return err(
                    c,
                    format!("upstream takes reply=deliver|lost|held, not '{k}'"),
                );
            }
            reply = match v.as_str() {
                "deliver" => ReplyFate::Deliver,
                "lost" => ReplyFate::Lost,
                "held" => ReplyFate::Held,
                _ => return err(c + 6, format!("reply=deliver, lost or held, not '{v}'")),
            };
        }
        Ok(Action::Upstream {
            call,
            decision,
            reply,
        })
    }

    fn env(&mut self, cur: &mut Cursor) -> Result<Control, LineError> {
        let (what, wcol) =
            cur.expect_word("rate-limit, pause-channel, issue-key, revoke-key or fee-rate")?;
        Ok(match what.as_str() {
            "rate-limit" | "429" => {
                let on = yes_no(cur, "on", "off")?;
                let mut merchant = MerchantId(1);
                for (k, v, c) in cur.pairs()? {
                    if k != "merchant" {
                        return err(c, format!("rate-limit takes merchant=N, not '{k}'"));
                    }
                    merchant = parse_merchant(&v).ok_or((c, format!("'{v}' is not a merchant")))?;
                }
                Control::SetRateLimited { merchant, on }
            }
            "pause-channel" | "503" => Control::SetChannelPaused {
                on: yes_no(cur, "on", "off")?,
            },
            "issue-key" => Control::IssueApiKey(key_spec(cur)?),
            "revoke-key" => {
                let (k, c) = cur.expect_word("an API key")?;
                Control::RevokeApiKey(
                    parse_api_key(&k).ok_or((c, format!("'{k}' is not an API key")))?,
                )
            }
            "fee-rate" => {
                let (n, c) = cur.expect_word("basis points")?;
                Control::SetFeeRate {
                    bps: n
                        .parse()
                        .map_err(|_| (c, format!("'{n}' is not a number of basis points")))?,
                }
            }
            _ => {
                return err(
                    wcol,
                    format!(
                        "unknown env switch '{what}' (rate-limit, pause-channel, issue-key, revoke-key, fee-rate)"
                    ),
                );
            }
        })
    }

    /// `for order ORDER [db=N]` before a request line: the business order the request is
    /// for, in the server's database unless `db=` names another.
    fn business_clause(&self, server: usize, cur: &mut Cursor) -> Result<BusinessOrder, LineError> {
        cur.word().expect("peeked 'for'");
        let (word, wcol) = cur.expect_word("'order' (for order ORDER-1 POST /v1/payments …)")?;
        if word != "order" {
            return err(
                wcol,
                format!(
                    "expected 'for order ORDER', found 'for {word}'{}",
                    super::suggest::hint(&word, ["order"])
                ),
            );
        }
        let ocol = cur.col();
        let (order, _) = cur.value()?.filter(|(o, _)| !o.is_empty()).ok_or((
            ocol,
            "'for order' needs an order number (ORDER-1)".to_owned(),
        ))?;
        if order.chars().next().is_some_and(|c| c.is_ascii_uppercase())
            && matches!(order.as_str(), "GET" | "POST" | "DELETE")
        {
            return err(ocol, "'for order' needs an order number before the method");
        }
        let mut db = self.script.servers[server].db;
        if cur.peek_word().is_some_and(|w| w.starts_with("db=")) {
            let (_, v, vcol) = cur.pair()?.expect("a db= pair");
            db = v.parse().map_err(|_| {
                (
                    vcol,
                    format!("db= is a database number (0 … 255), not '{v}'"),
                )
            })?;
        }
        Ok(BusinessOrder {
            db,
            order: order.as_str().into(),
        })
    }

    fn request_or_command(&mut self, server: usize, cur: &mut Cursor) -> Result<Action, LineError> {
        let col = cur.col();
        let first = cur.peek_word().unwrap_or_default();
        if first == "for" {
            let business = self.business_clause(server, cur)?;
            let rcol = cur.col();
            let request = request::parse(cur, self.script.servers[server].api_key)?;
            if !matches!(
                request.endpoint,
                Endpoint::CreatePayment { .. }
                    | Endpoint::ConfirmPayment { .. }
                    | Endpoint::CreateRefund { .. }
            ) {
                return err(
                    rcol,
                    "'for order' files a request under a business order: it goes on a POST /v1/payments, POST /v1/payments/{id}/confirm or POST /v1/refunds line",
                );
            }
            return Ok(Action::Request {
                server,
                request,
                business: Some(business),
            });
        }
        if first.chars().next().is_some_and(|c| c.is_ascii_uppercase()) {
            let request = request::parse(cur, self.script.servers[server].api_key)?;
            return Ok(Action::Request {
                server,
                request,
                business: None,
            });
        }
        let s = &self.script.servers[server];
        if s.policy.is_none() {
            if first.is_empty() {
                return err(col, "expected a request (POST /v1/payments …)");
            }
            return err(
                col,
                format!(
                    "'{first}' is not a method{}; server {} is a scripted sender and sends requests (GET, POST, DELETE, or 'for order ORDER POST …'). Business commands need a client server (server {} client=reference)",
                    super::suggest::hint(&first, ["for"]),
                    s.name,
                    s.name
                ),
            );
        }
        let command = command(cur)?;
        let crash_after = then_crash(cur)?;
        let item = u16::try_from(self.script.config.workload.len())
            .map_err(|_| (col, "too many commands".to_owned()))?;
        self.script.config.workload.push(WorkItem {
            node: s.node,
            command,
            times: 1,
        });
        Ok(Action::Command {
            server,
            item,
            crash_after,
        })
    }
}

/// `payer: authenticate [att_001] ok|fail`.
fn payer(cur: &mut Cursor) -> Result<Action, LineError> {
    cur.keyword("authenticate", |w| {
        format!("payer: authenticate [att_001] ok|fail, not '{w}'")
    })?;
    let mut attempt = None;
    if let Some(w) = cur.peek_word().filter(|w| w.starts_with("att_")) {
        let c = cur.col();
        cur.word();
        attempt = Some(parse_attempt(&w).ok_or((c, format!("'{w}' is not an attempt id")))?);
    }
    Ok(Action::Payer {
        attempt,
        ok: yes_no(cur, "ok", "fail")?,
    })
}

/// `until quiet [upstream=DECISION]`.
fn until_quiet(cur: &mut Cursor) -> Result<Action, LineError> {
    cur.keyword("quiet", |w| format!("until quiet, not 'until {w}'"))?;
    let mut decision = AcquirerDecision::Approve;
    for (k, v, c) in cur.pairs()? {
        if k != "upstream" {
            return err(c, format!("until quiet takes upstream=DECISION, not '{k}'"));
        }
        decision = parse_decision(&v).ok_or((
            c + 9,
            format!(
                "unknown decision '{v}' (approve, decline, require_action, fail, approve_silently)"
            ),
        ))?;
    }
    Ok(Action::UntilQuiet { decision })
}

pub(super) fn branch(cur: &mut Cursor) -> Result<Branch, LineError> {
    let (w, c) = cur.expect_word("a branch (S4:conflict, S5:wait, …)")?;
    Branch::from_name(&w).ok_or_else(|| {
        let names: Vec<&str> = Branch::ALL.iter().map(|b| b.as_str()).collect();
        (
            c,
            format!("unknown branch '{w}' (branches: {})", names.join(", ")),
        )
    })
}

/// `on` or `off`, `ok` or `fail`: whether it is the first word.
pub(super) fn yes_no(cur: &mut Cursor, yes: &str, no: &str) -> Result<bool, LineError> {
    let (w, c) = cur.expect_word(&format!("{yes} or {no}"))?;
    match w {
        _ if w == yes => Ok(true),
        _ if w == no => Ok(false),
        _ => err(c, format!("{yes} or {no}, not '{w}'")),
    }
}

pub(super) fn key_spec(cur: &mut Cursor) -> Result<ApiKeySpec, LineError> {
    let (k, c) = cur.expect_word("an API key")?;
    let id = parse_api_key(&k).ok_or((c, format!("'{k}' is not an API key")))?;
    known_key(id).ok_or((
        c,
        format!("{k} is not a key the world can issue (ak_1 … ak_5)"),
    ))
}

pub(super) fn parse_attempt(s: &str) -> Option<AttemptId> {
    let digits = s.strip_prefix("att_")?;
    digits.parse().ok().map(AttemptId)
}

pub(crate) fn parse_decision(s: &str) -> Option<AcquirerDecision> {
    AcquirerDecision::from_name(&s.replace('-', "_"))
}

/// The words a statement starts with (and the step labels), for a did-you-mean.
pub(super) const STATEMENTS: &[&str] = &[
    "wait",
    "tick",
    "until",
    "crash",
    "restart",
    "expect",
    "use",
    "server",
    "assume",
    "deliver",
    "drop",
    "duplicate",
    "500-before",
    "500-after",
    "acquire",
    "advance",
    "authenticate",
    "rate-limit",
    "pause-channel",
    "issue-api-key",
    "revoke-api-key",
    "fee-rate",
];

/// The statements written `WORD:` that are not a server's.
pub(super) const PREFIXES: &[&str] = &[
    "net", "platform", "upstream", "payer", "env", "branch", "expect",
];
