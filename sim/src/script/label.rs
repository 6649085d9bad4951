//! The world's choice labels, read back: every label [`Choice`]'s `Display` writes
//! (`deliver m3 S5:wait`, `acquire u1 approve`, `send merchant-2 POST /v1/payments …`,
//! `advance 15s`, `command 0 then crash`, `rate-limit merchant_1 on`, …) parses to the
//! same choice. Saved tapes use it for the choices a world does not list as enabled but
//! applies all the same (scripted sends, advances, controls, ticks).

use super::cursor::{Cursor, LineError};
use super::parse::err;
use super::parse_settings::parse_duration;
use super::parse_settings::parse_merchant;
use super::parse_step::{branch, key_spec, parse_attempt, parse_decision, yes_no};
use super::request;
use super::request::parse_api_key;
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
    let choice = cur
        .expect_word("a choice label (deliver m1, tick, …)")
        .and_then(|(verb, vcol)| choice(&verb, vcol, &mut cur, false))
        .map_err(|(column, message)| LabelError { column, message })?;
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
fn msg(cur: &mut Cursor, upstream: bool, script: bool) -> Result<(MsgId, bool), LineError> {
    let what = if script || upstream {
        "a message id (m3, or u2 on the upstream link)"
    } else {
        "a message id (m3)"
    };
    let (w, c) = cur.expect_word(if script {
        "a message id (m3, u2)"
    } else {
        what
    })?;
    let (link, digits) = w.split_at(w.chars().next().map_or(0, char::len_utf8));
    let number = (script || digits.chars().all(|d| d.is_ascii_digit()))
        .then(|| digits.parse::<u32>().ok())
        .flatten();
    match (link, number) {
        ("m", Some(n)) => Ok((MsgId(n), false)),
        ("u", Some(n)) if upstream => Ok((MsgId(n), true)),
        _ => err(c, format!("'{w}' is not {what}")),
    }
}

/// `merchant-2`: a node of the world, as traces and labels name it.
fn node(cur: &mut Cursor) -> Result<u8, LineError> {
    let (w, c) = cur.expect_word("a node (merchant-0)")?;
    w.strip_prefix("merchant-")
        .and_then(|n| n.parse().ok())
        .ok_or((c, format!("'{w}' is not a node (merchant-0)")))
}

fn optional_branch(cur: &mut Cursor) -> Result<Option<payhub_model::Branch>, LineError> {
    if cur.at_end() {
        Ok(None)
    } else {
        branch(cur).map(Some)
    }
}

fn number<T: std::str::FromStr>(cur: &mut Cursor, what: &str) -> Result<T, LineError> {
    let (w, c) = cur.expect_word(what)?;
    w.parse().map_err(|_| (c, format!("'{w}' is not {what}")))
}

/// The choice a label's `verb` names, its arguments read from `cur`. `script`: a script's
/// step statement, whose errors keep the words scripts have always used.
pub(super) fn choice(
    verb: &str,
    vcol: u32,
    cur: &mut Cursor,
    script: bool,
) -> Result<Choice, LineError> {
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
        "authenticate" => {
            let (w, c) = cur.expect_word("an attempt id (att_001)")?;
            let attempt = parse_attempt(&w).ok_or((c, format!("'{w}' is not an attempt id")))?;
            Choice::Authenticate {
                attempt,
                ok: yes_no(cur, "ok", "fail")?,
            }
        }
        "command" => command(cur)?,
        "crash" => Choice::Crash {
            merchant: node(cur)?,
        },
        "restart" => Choice::Restart {
            merchant: node(cur)?,
        },
        // The environment's switches: `rate-limit merchant_1 on`, `pause-channel off`,
        // `issue-api-key …`, `revoke-api-key ak_2`.
        "rate-limit" => {
            let (m, c) = cur.expect_word("a merchant (merchant_1)")?;
            let merchant = parse_merchant(&m).ok_or((c, format!("'{m}' is not a merchant")))?;
            let on = yes_no(cur, "on", "off")?;
            Choice::Control(Control::SetRateLimited { merchant, on })
        }
        "pause-channel" => Choice::Control(Control::SetChannelPaused {
            on: yes_no(cur, "on", "off")?,
        }),
        "issue-api-key" => Choice::Control(Control::IssueApiKey(key_spec(cur)?)),
        "revoke-api-key" => {
            let (k, c) = cur.expect_word("an API key (ak_1)")?;
            let id = parse_api_key(&k).ok_or((c, format!("'{k}' is not an API key")))?;
            Choice::Control(Control::RevokeApiKey(id))
        }
        "fee-rate" if script => {
            let (n, c) = cur.expect_word("basis points")?;
            Choice::Control(Control::SetFeeRate {
                bps: n
                    .parse()
                    .map_err(|_| (c, format!("'{n}' is not a number")))?,
            })
        }
        "fee-rate" => Choice::Control(Control::SetFeeRate {
            bps: number(cur, "a number of basis points")?,
        }),
        "send" => {
            let merchant = node(cur)?;
            let request = request::parse(cur, M1_TEST)?;
            Choice::Send {
                merchant,
                request: request.into(),
            }
        }
        "tick" => Choice::Tick,
        "advance" => {
            let (expected, what) = if script {
                ("a duration", "of at most 36500d")
            } else {
                ("a duration (15s)", "(15s, 2min)")
            };
            let (d, dc) = cur.expect_word(expected)?;
            Choice::Advance(
                parse_duration(&d).ok_or((dc, format!("'{d}' is not a duration {what}")))?,
            )
        }
        _ => {
            return err(
                vcol,
                format!(
                    "unknown choice '{verb}' (deliver, drop, duplicate, 500-before, 500-after, acquire, authenticate, command, crash, restart, rate-limit, pause-channel, issue-api-key, revoke-api-key, fee-rate, send, tick, advance)"
                ),
            );
        }
    })
}

/// `acquire u2 approve`.
fn acquire(cur: &mut Cursor, script: bool) -> Result<Choice, LineError> {
    let (w, c) = cur.expect_word("an upstream message id (u2)")?;
    let msg = w
        .strip_prefix('u')
        .and_then(|n| n.parse().ok())
        .map(MsgId)
        .ok_or((c, format!("'{w}' is not an upstream message id (u2)")))?;
    let (d, dc) = cur.expect_word("a decision")?;
    let names = if script {
        ""
    } else {
        " (approve, decline, require_action, fail, approve_silently)"
    };
    let decision = parse_decision(&d).ok_or((dc, format!("unknown decision '{d}'{names}")))?;
    Ok(Choice::Acquire { msg, decision })
}

/// `command 3` or `command 3 then crash`.
fn command(cur: &mut Cursor) -> Result<Choice, LineError> {
    let item = number(cur, "a workload item number")?;
    let crash_after = then_crash(cur)?;
    Ok(Choice::Command { item, crash_after })
}

/// An optional `then crash` after a command: whether it is there.
pub(super) fn then_crash(cur: &mut Cursor) -> Result<bool, LineError> {
    if cur.peek_word().as_deref() != Some("then") {
        return Ok(false);
    }
    cur.word();
    cur.keyword("crash", |w| format!("'then crash', not 'then {w}'"))?;
    Ok(true)
}
