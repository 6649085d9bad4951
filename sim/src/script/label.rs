//! The world's choice labels, read back: every label [`Choice`]'s `Display` writes
//! (`deliver m3 S5:wait`, `acquire u1 approve`, `send merchant-2 POST /v1/payments …`,
//! `advance 15s`, `command 0 then crash`, `rate-limit merchant_1 on`, …) parses to the
//! same choice. Saved tapes use it for the choices a world does not list as enabled but
//! applies all the same (scripted sends, advances, controls, ticks).

use super::cursor::{Cursor, Parsed, fail};
use super::parse_settings::{parse_duration, parse_merchant};
use super::parse_step::{api_key, attempt, branch, key_spec, parse_decision, yes_no};
use super::request;
use crate::choice::Choice;
use crate::error::LabelError;
use crate::network::MsgId;
use payhub_model::api_keys::M1_TEST;
use payhub_model::{ApiRequest, Control};

/// The request of a `send` label: a script request line written against `ak_1`, so that
/// another key shows as `Authorization: Bearer ak_N` and every field reads back.
pub(crate) fn render_send(request: &ApiRequest) -> String {
    request::render(request, M1_TEST)
}

/// Parses one choice label; the error names the column and what is wrong.
pub(crate) fn parse_label(label: &str) -> Result<Choice, LabelError> {
    let mut cur = Cursor::new(label);
    let verb = cur.expect_word("a choice label (deliver m1, tick, …)");
    let choice = verb.and_then(|(verb, vcol)| choice(&verb, vcol, &mut cur, false));
    let choice = choice.map_err(|(column, message)| LabelError { column, message })?;
    if !cur.at_end() {
        let (rest, column) = cur.rest();
        return Err(LabelError {
            column,
            message: format!("unexpected '{rest}' after the label"),
        });
    }
    Ok(choice)
}

/// `m3` (a merchant-network message) or, where `upstream` allows it, `u2`. A script's
/// step names both links in its messages, and reads the number as Rust does (`m+3`).
fn msg(cur: &mut Cursor, upstream: bool, script: bool) -> Parsed<(MsgId, bool)> {
    let what = match script || upstream {
        true => "a message id (m3, or u2 on the upstream link)",
        false => "a message id (m3)",
    };
    let (w, c) = cur.expect_word(if script {
        "a message id (m3, u2)"
    } else {
        what
    })?;
    let (link, digits) = w.split_at(w.chars().next().map_or(0, char::len_utf8));
    let digits_only = script || digits.chars().all(|d| d.is_ascii_digit());
    let number = digits.parse::<u32>().ok().filter(|_| digits_only);
    match (link, number) {
        ("m", Some(n)) => Ok((MsgId(n), false)),
        ("u", Some(n)) if upstream => Ok((MsgId(n), true)),
        _ => fail!(c, "'{w}' is not {what}"),
    }
}

/// `merchant-2`: a node of the world, as traces and labels name it.
fn node(cur: &mut Cursor) -> Parsed<u8> {
    let read = |w: &str| w.strip_prefix("merchant-")?.parse().ok();
    cur.read("a node (merchant-0)", read, |w| {
        format!("'{w}' is not a node (merchant-0)")
    })
}

fn optional_branch(cur: &mut Cursor) -> Parsed<Option<payhub_model::Branch>> {
    (!cur.at_end()).then(|| branch(cur)).transpose()
}

/// The choice a label's `verb` names, its arguments read from `cur`. `script`: a script's
/// step statement, whose errors keep the words scripts have always used.
pub(super) fn choice(verb: &str, vcol: u32, cur: &mut Cursor, script: bool) -> Parsed<Choice> {
    Ok(match verb {
        "deliver" => match msg(cur, true, script)? {
            (msg, true) => Choice::DeliverUpstream { msg },
            (msg, false) => Choice::Deliver {
                msg,
                branch: optional_branch(cur)?,
            },
        },
        "drop" => match msg(cur, true, script)? {
            (msg, true) => Choice::DropUpstream { msg },
            (msg, false) => Choice::Drop { msg },
        },
        "duplicate" => Choice::Duplicate {
            msg: msg(cur, false, script)?.0,
        },
        "500-before" => Choice::Fail500Before {
            msg: msg(cur, false, script)?.0,
        },
        "500-after" => Choice::Fail500After {
            msg: msg(cur, false, script)?.0,
            branch: optional_branch(cur)?,
        },
        "acquire" => acquire(cur, script)?,
        "authenticate" => Choice::Authenticate {
            attempt: attempt(cur)?,
            ok: yes_no(cur, "ok", "fail")?,
        },
        "command" => Choice::Command {
            item: cur.number("a workload item number")?,
            crash_after: then_crash(cur)?,
        },
        "crash" => Choice::Crash {
            merchant: node(cur)?,
        },
        "restart" => Choice::Restart {
            merchant: node(cur)?,
        },
        // The environment's switches: `rate-limit merchant_1 on`, `pause-channel off`,
        // `issue-api-key …`, `revoke-api-key ak_2`.
        "rate-limit" => {
            let merchant = cur.read("a merchant (merchant_1)", parse_merchant, |m| {
                format!("'{m}' is not a merchant")
            })?;
            let on = yes_no(cur, "on", "off")?;
            Choice::Control(Control::SetRateLimited { merchant, on })
        }
        "pause-channel" => Choice::Control(Control::SetChannelPaused {
            on: yes_no(cur, "on", "off")?,
        }),
        "issue-api-key" => Choice::Control(Control::IssueApiKey(key_spec(cur)?)),
        "revoke-api-key" => {
            Choice::Control(Control::RevokeApiKey(api_key(cur, "an API key (ak_1)")?))
        }
        "fee-rate" if script => {
            let bps = cur.read(
                "basis points",
                |n| n.parse().ok(),
                |n| format!("'{n}' is not a number"),
            )?;
            Choice::Control(Control::SetFeeRate { bps })
        }
        "fee-rate" => Choice::Control(Control::SetFeeRate {
            bps: cur.number("a number of basis points")?,
        }),
        "send" => {
            let merchant = node(cur)?;
            let request = request::parse(cur, M1_TEST)?.into();
            Choice::Send { merchant, request }
        }
        "tick" => Choice::Tick,
        "advance" => {
            let (expected, what) = match script {
                true => ("a duration", "of at most 36500d"),
                false => ("a duration (15s)", "(15s, 2min)"),
            };
            let not = |d: &str| format!("'{d}' is not a duration {what}");
            Choice::Advance(cur.read(expected, parse_duration, not)?)
        }
        _ => fail!(
            vcol,
            "unknown choice '{verb}' (deliver, drop, duplicate, 500-before, 500-after, acquire, authenticate, command, crash, restart, rate-limit, pause-channel, issue-api-key, revoke-api-key, fee-rate, send, tick, advance)"
        ),
    })
}

/// `acquire u2 approve`.
fn acquire(cur: &mut Cursor, script: bool) -> Parsed<Choice> {
    let read = |w: &str| w.strip_prefix('u')?.parse().ok().map(MsgId);
    let not = |w: &str| format!("'{w}' is not an upstream message id (u2)");
    let msg = cur.read("an upstream message id (u2)", read, not)?;
    let names = match script {
        true => "",
        false => " (approve, decline, require_action, fail, approve_silently)",
    };
    let decision = cur.read("a decision", parse_decision, |d| {
        format!("unknown decision '{d}'{names}")
    })?;
    Ok(Choice::Acquire { msg, decision })
}

/// An optional `then crash` after a command: whether it is there.
pub(super) fn then_crash(cur: &mut Cursor) -> Parsed<bool> {
    if !cur.eat("then") {
        return Ok(false);
    }
    cur.keyword("crash", |w| format!("'then crash', not 'then {w}'"))?;
    Ok(true)
}
