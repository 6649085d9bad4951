//! Parsing steps: requests, business commands, faults, the environment, time and
//! the world's step labels.

use super::ast::*;
use super::command::command;
use super::cursor::{Cursor, Parsed, fail};
use super::label::{choice, then_crash};
use super::parse::Parser;
use super::parse_settings::{is_name, known_key, parse_duration, parse_merchant};
use super::request::{self, parse_api_key};
use super::suggest::hint;
use crate::config::WorkItem;
use payhub_model::event::BusinessOrder;
use payhub_model::{
    AcquirerDecision, ApiKeyId, ApiKeySpec, AttemptId, Branch, Control, Endpoint, MerchantId,
};

impl Parser {
    pub(super) fn action(&mut self, first: &str, col: u32, cur: &mut Cursor) -> Parsed<Action> {
        Ok(match first {
            "net:" => self.net(cur)?,
            "platform:" => self.platform_fault(cur)?,
            "upstream:" => self.upstream(CallKind::Any, cur)?,
            "upstream" => self.upstream_of_kind(cur)?,
            "payer:" => payer(cur)?,
            "env:" => Action::Control(self.env(cur)?),
            "branch:" => Action::Branch(branch(cur)?),
            "wait" => Action::Wait(cur.read("a duration (15s, 7d)", parse_duration, |d| {
                format!("'{d}' is not a duration of at most 36500d (15s, 2min, 7d)")
            })?),
            "tick" => Action::Tick,
            "until" => until_quiet(cur)?,
            "crash" => Action::Crash {
                server: self.client_named(cur)?,
            },
            "restart" => Action::Restart {
                server: self.client_named(cur)?,
            },
            "expect:" => Action::Expect(self.expect_response(None, col, cur)?),
            "expect" => Action::Expect(self.expect(cur)?),
            _ if STEPS.split(' ').any(|w| w == first) => {
                Action::Step(choice(first, col, cur, true)?)
            }
            _ => {
                let Some(name) = first.strip_suffix(':').filter(|n| is_name(n)) else {
                    let hint = hint(first, statement_words());
                    fail!(
                        col,
                        "unknown statement '{first}'{hint} (a statement starts with SERVER:, net:, platform:, upstream, payer:, env:, branch:, wait, tick, until quiet, crash, restart, expect, use, server, assume, or a step label such as 'deliver m1')"
                    );
                };
                let request = cur.peek_word().is_some_and(|w| starts_request(&w));
                let server = self.server(name, col);
                let action = server.clone().and_then(|s| self.request_or_command(s, cur));
                if action.is_err() && request {
                    // A request line with an error still counts as one: its
                    // expectations are not reported as a second error.
                    self.requested.extend(server.ok());
                    self.requested.insert(usize::MAX);
                }
                return action;
            }
        })
    }

    /// `crash SERVER`, `restart SERVER`: a client server.
    fn client_named(&self, cur: &mut Cursor) -> Parsed<usize> {
        let (name, ncol) = cur.expect_word("a server")?;
        self.client_server(&name, ncol)
    }

    /// `platform: 500 before|after [executing] [of SERVER]`.
    fn platform_fault(&mut self, cur: &mut Cursor) -> Parsed<Action> {
        let wrong = |w: &str| format!("platform: 500 before|after, not '{w}'");
        cur.keyword("500", wrong)?;
        // `500 before` and `500 after` are the only operations named so.
        let op = |w: &str| NetOp::from_name(&format!("500 {w}"));
        let op = cur.read("before or after", op, wrong)?;
        cur.eat("executing");
        let server = self.of_server(cur)?;
        let kind = Some(MsgKind::Request);
        Ok(Action::Net { op, kind, server })
    }

    /// `upstream charge: …`, `upstream u3: …`: a decision on calls of one kind (or one id).
    fn upstream_of_kind(&mut self, cur: &mut Cursor) -> Parsed<Action> {
        let (sel, scol) =
            cur.expect_word("a call kind (charge:, query:, cancel:, refund:, query-refund:, u3:)")?;
        let Some(sel) = sel.strip_suffix(':') else {
            fail!(scol, "expected 'upstream {sel}:'");
        };
        let call = match sel {
            "charge" => CallKind::Charge,
            "query" => CallKind::Query,
            "cancel" => CallKind::Cancel,
            "refund" => CallKind::Refund,
            "query-refund" => CallKind::QueryRefund,
            _ => match sel.strip_prefix('u').and_then(|n| n.parse().ok()) {
                Some(n) => CallKind::Id(n),
                None => fail!(
                    scol,
                    "unknown call kind '{sel}' (charge, query, cancel, refund, query-refund, uN)"
                ),
            },
        };
        self.upstream(call, cur)
    }

    /// `of SERVER`, `to SERVER` or `from SERVER`, if there.
    fn of_server(&self, cur: &mut Cursor) -> Parsed<Option<usize>> {
        if !["of", "to", "from"].iter().any(|w| cur.eat(w)) {
            return Ok(None);
        }
        let (name, col) = cur.expect_word("a server")?;
        self.server(&name, col).map(Some)
    }

    fn net(&mut self, cur: &mut Cursor) -> Parsed<Action> {
        // A word holds no space: `500 before` is `platform:`'s, never found here.
        let op = cur.read("drop, duplicate, hold or release", NetOp::from_name, |op| {
            format!("unknown net operation '{op}' (drop, duplicate, hold, release)")
        })?;
        if op == NetOp::Release && cur.at_end() {
            let (kind, server) = (None, None);
            return Ok(Action::Net { op, kind, server });
        }
        let (op_name, kcol) = (op.as_str(), cur.col());
        let kind = cur.read("request, response or webhook", MsgKind::from_name, |k| {
            format!("net: {op_name} request|response|webhook, not '{k}'")
        })?;
        let server = self.of_server(cur)?;
        if kind != MsgKind::Webhook && server.is_none() && !self.requested.contains(&usize::MAX) {
            // Without a server, a request or response is the last request line's.
            let kind = kind.as_str();
            fail!(
                kcol,
                "net: {op_name} {kind} needs a request line before it (or 'to SERVER')"
            );
        }
        let kind = Some(kind);
        Ok(Action::Net { op, kind, server })
    }

    fn upstream(&mut self, call: CallKind, cur: &mut Cursor) -> Parsed<Action> {
        let (w, wcol) = cur.expect_word(
            "a decision (approve, decline, require_action, fail, approve_silently), lost or reply",
        )?;
        if w == "lost" {
            return Ok(Action::UpstreamLost { call });
        }
        if w == "reply" {
            let deliver = !cur.eat("lost");
            if deliver {
                cur.eat("deliver");
            }
            return Ok(Action::UpstreamReply { deliver });
        }
        let Some(decision) = parse_decision(&w) else {
            fail!(
                wcol,
                "unknown decision '{w}' (approve, decline, require_action, fail, approve_silently, lost, reply)"
            );
        };
        let mut reply = ReplyFate::Deliver;
        for (k, v, c) in cur.pairs()? {
            if k != "reply" {
                fail!(c, "upstream takes reply=deliver|lost|held, not '{k}'");
            }
            let Some(fate) = ReplyFate::from_name(&v) else {
                fail!(c + 6, "reply=deliver, lost or held, not '{v}'");
            };
            reply = fate;
        }
        Ok(Action::Upstream {
            call,
            decision,
            reply,
        })
    }

    fn env(&mut self, cur: &mut Cursor) -> Parsed<Control> {
        let (what, wcol) =
            cur.expect_word("rate-limit, pause-channel, issue-key, revoke-key or fee-rate")?;
        Ok(match what.as_str() {
            "rate-limit" | "429" => {
                let on = yes_no(cur, "on", "off")?;
                let mut merchant = MerchantId(1);
                for (k, v, c) in cur.pairs()? {
                    if k != "merchant" {
                        fail!(c, "rate-limit takes merchant=N, not '{k}'");
                    }
                    merchant = parse_merchant(&v).ok_or((c, format!("'{v}' is not a merchant")))?;
                }
                Control::SetRateLimited { merchant, on }
            }
            "pause-channel" | "503" => Control::SetChannelPaused {
                on: yes_no(cur, "on", "off")?,
            },
            "issue-key" => Control::IssueApiKey(key_spec(cur)?),
            "revoke-key" => Control::RevokeApiKey(api_key(cur, "an API key")?),
            "fee-rate" => Control::SetFeeRate {
                bps: cur.read(
                    "basis points",
                    |n| n.parse().ok(),
                    |n| format!("'{n}' is not a number of basis points"),
                )?,
            },
            _ => fail!(
                wcol,
                "unknown env switch '{what}' (rate-limit, pause-channel, issue-key, revoke-key, fee-rate)"
            ),
        })
    }

    /// `for order ORDER [db=N]` before a request line: the business order the request is
    /// for, in the server's database unless `db=` names another.
    fn business_clause(&self, server: usize, cur: &mut Cursor) -> Parsed<BusinessOrder> {
        cur.word().expect("peeked 'for'");
        let what = "'order' (for order ORDER-1 POST /v1/payments …)";
        cur.read(
            what,
            |w| (w == "order").then_some(()),
            |w| {
                format!(
                    "expected 'for order ORDER', found 'for {w}'{}",
                    hint(w, ["order"])
                )
            },
        )?;
        let ocol = cur.col();
        let Some((order, _)) = cur.value()?.filter(|(o, _)| !o.is_empty()) else {
            fail!(ocol, "'for order' needs an order number (ORDER-1)");
        };
        if matches!(order.as_str(), "GET" | "POST" | "DELETE") {
            fail!(ocol, "'for order' needs an order number before the method");
        }
        let mut db = self.script.servers[server].db;
        if cur.peek_word().is_some_and(|w| w.starts_with("db=")) {
            let (_, v, vcol) = cur.pair()?.expect("a db= pair");
            let wrong = || {
                (
                    vcol,
                    format!("db= is a database number (0 … 255), not '{v}'"),
                )
            };
            db = v.parse().map_err(|_| wrong())?;
        }
        Ok(BusinessOrder {
            db,
            order: order.as_str().into(),
        })
    }

    fn request_or_command(&mut self, server: usize, cur: &mut Cursor) -> Parsed<Action> {
        let col = cur.col();
        let first = cur.peek_word().unwrap_or_default();
        if starts_request(&first) {
            let business = (first == "for").then(|| self.business_clause(server, cur));
            let business = business.transpose()?;
            let rcol = cur.col();
            let request = request::parse(cur, self.script.servers[server].api_key)?;
            if business.is_some()
                && !matches!(
                    request.endpoint,
                    Endpoint::CreatePayment { .. }
                        | Endpoint::ConfirmPayment { .. }
                        | Endpoint::CreateRefund { .. }
                )
            {
                fail!(
                    rcol,
                    "'for order' files a request under a business order: it goes on a POST /v1/payments, POST /v1/payments/{{id}}/confirm or POST /v1/refunds line"
                );
            }
            return Ok(Action::Request {
                server,
                request,
                business,
            });
        }
        let s = &self.script.servers[server];
        if s.policy.is_none() {
            if first.is_empty() {
                fail!(col, "expected a request (POST /v1/payments …)");
            }
            let (name, hint) = (&s.name, hint(&first, ["for"]));
            fail!(
                col,
                "'{first}' is not a method{hint}; server {name} is a scripted sender and sends requests (GET, POST, DELETE, or 'for order ORDER POST …'). Business commands need a client server (server {name} client=reference)"
            );
        }
        let node = s.node;
        let command = command(cur)?;
        let crash_after = then_crash(cur)?;
        let workload = &mut self.script.config.workload;
        let item =
            u16::try_from(workload.len()).map_err(|_| (col, "too many commands".to_owned()))?;
        workload.push(WorkItem {
            node,
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

/// Whether a server's line starting with `word` is a request line (`POST …`, `for order …`).
fn starts_request(word: &str) -> bool {
    word == "for" || word.starts_with(|c: char| c.is_ascii_uppercase())
}

/// `payer: authenticate [att_001] ok|fail`.
fn payer(cur: &mut Cursor) -> Parsed<Action> {
    cur.keyword("authenticate", |w| {
        format!("payer: authenticate [att_001] ok|fail, not '{w}'")
    })?;
    let named = cur.peek_word().is_some_and(|w| w.starts_with("att_"));
    let attempt = if named { Some(attempt(cur)?) } else { None };
    Ok(Action::Payer {
        attempt,
        ok: yes_no(cur, "ok", "fail")?,
    })
}

/// `until quiet [upstream=DECISION]`.
fn until_quiet(cur: &mut Cursor) -> Parsed<Action> {
    cur.keyword("quiet", |w| format!("until quiet, not 'until {w}'"))?;
    let mut decision = AcquirerDecision::Approve;
    for (k, v, c) in cur.pairs()? {
        if k != "upstream" {
            fail!(c, "until quiet takes upstream=DECISION, not '{k}'");
        }
        let Some(d) = parse_decision(&v) else {
            fail!(
                c + 9,
                "unknown decision '{v}' (approve, decline, require_action, fail, approve_silently)"
            );
        };
        decision = d;
    }
    Ok(Action::UntilQuiet { decision })
}

pub(super) fn branch(cur: &mut Cursor) -> Parsed<Branch> {
    cur.read(
        "a branch (S4:conflict, S5:wait, …)",
        Branch::from_name,
        |w| {
            let names: Vec<&str> = Branch::ALL.iter().map(|b| b.as_str()).collect();
            format!("unknown branch '{w}' (branches: {})", names.join(", "))
        },
    )
}

/// `on` or `off`, `ok` or `fail`: whether it is the first word.
pub(super) fn yes_no(cur: &mut Cursor, yes: &str, no: &str) -> Parsed<bool> {
    cur.read(
        &format!("{yes} or {no}"),
        |w| (w == yes || w == no).then_some(w == yes),
        |w| format!("{yes} or {no}, not '{w}'"),
    )
}

/// `ak_2`, expected as `what`.
pub(super) fn api_key(cur: &mut Cursor, what: &str) -> Parsed<ApiKeyId> {
    cur.read(what, parse_api_key, |k| format!("'{k}' is not an API key"))
}

pub(super) fn key_spec(cur: &mut Cursor) -> Parsed<ApiKeySpec> {
    let (k, c) = cur.expect_word("an API key")?;
    let id = parse_api_key(&k).ok_or((c, format!("'{k}' is not an API key")))?;
    known_key(id).ok_or((
        c,
        format!("{k} is not a key the world can issue (ak_1 … ak_5)"),
    ))
}

/// `att_001`.
pub(super) fn attempt(cur: &mut Cursor) -> Parsed<AttemptId> {
    let read = |w: &str| w.strip_prefix("att_")?.parse().ok().map(AttemptId);
    cur.read("an attempt id (att_001)", read, |w| {
        format!("'{w}' is not an attempt id")
    })
}

pub(crate) fn parse_decision(s: &str) -> Option<AcquirerDecision> {
    AcquirerDecision::from_name(&s.replace('-', "_"))
}

/// The words a statement starts with, besides the step labels.
const STATEMENTS: &str = "wait tick until crash restart expect use server assume";

/// The step labels a statement may start with (the world's choices).
const STEPS: &str = "deliver drop duplicate 500-before 500-after acquire advance authenticate \
    rate-limit pause-channel issue-api-key revoke-api-key fee-rate";

/// The statements written `WORD:` that are not a server's.
pub(super) const PREFIXES: &[&str] = &[
    "net", "platform", "upstream", "payer", "env", "branch", "expect",
];

/// Every word a statement starts with (and the step labels), for a did-you-mean.
pub(super) fn statement_words() -> impl Iterator<Item = &'static str> {
    let words = STATEMENTS.split(' ').chain(STEPS.split_whitespace());
    words.chain(PREFIXES.iter().copied())
}
