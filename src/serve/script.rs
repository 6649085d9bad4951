//! The session as a what-if script: its tape written by `script_from_tape`, which
//! `payhub-verify run` replays choice for choice in the simulated world.
//!
//! The script's world is the sandbox's, minus what a script cannot say: the business
//! orders the sandbox read off the wire (`business.rs`). The export replays the tape to
//! find the verdict `run` will give, expects its first violation (so the script passes
//! while the behaviour is there), and says in a comment which verdicts the session had
//! that the script's world cannot reproduce.
//!
//! Why a script cannot say a business order: the world takes it from a request's origin
//! (`Origin::business`), which only a client model's business command sets (`pay`); a
//! script's request line is a scripted send (`Choice::Send` carries the request alone),
//! and the sandbox files its exchanges under business orders beside the tape, not on it.
//! So `client-never-charges-an-order-twice`, which judges captures per business order,
//! sees none in the script's world. What the script can reproduce is the ledger that
//! verdict judged: for each business order the session captured more than once, the
//! export adds `expect ledger: charges(order=N) = n` for each order number filed under
//! it, which `run` checks against the replayed acquirer (and fails if the replay did not
//! charge them).

use super::sandbox::Sandbox;
use crate::judge_cmd::verdicts;
use payhub_sim::World;
use payhub_sim::driver::Violation;

/// The session's script.
pub fn export(sandbox: &Sandbox) -> Result<String, String> {
    let config = sandbox.config();
    let tape = sandbox.tape()?;
    let mut no_check = |_: &World| -> Option<Violation> { None };
    let (replayed, _) = payhub_sim::driver::replay(config, tape, &mut no_check, None)
        .map_err(|(i, e)| format!("the session does not replay at step {}: {e}", i + 1))?;
    let script_verdicts = verdicts(&replayed.facts);
    let session_verdicts = verdicts(&sandbox.world().facts);
    let violation = script_verdicts
        .iter()
        .find(|v| v.status == crate::judge_cmd::Status::Violated)
        .map(|v| v.name);
    let about = format!(
        "A payhub-verify serve session: {} choices, {} events, ending at {}",
        tape.len(),
        sandbox.record().events_total(),
        sandbox.world_now()
    );
    let text = payhub_sim::script::script_from_tape(config, tape, violation, &about)?;
    let differ: Vec<String> = session_verdicts
        .iter()
        .zip(&script_verdicts)
        .filter(|(s, r)| s.status != r.status)
        .map(|(s, r)| {
            format!(
                "{} ({} in the session, {} here)",
                s.name, s.status, r.status
            )
        })
        .collect();
    if differ.is_empty() {
        return Ok(text);
    }
    let (title, rest) = text.split_once('\n').unwrap_or((&text, ""));
    Ok(format!(
        "{title}\n# The session filed creates under business orders its wire witnessed (a new order number for an order whose result was unknown), which a script cannot express; verdicts that differ: {}.\n{rest}{}",
        differ.join("; "),
        ledger_expectations(sandbox.world())
    ))
}

/// `expect ledger:` lines for every business order the session captured more than once:
/// the captures of each order number filed under it, as the session's ledger has them.
fn ledger_expectations(world: &World) -> String {
    use payhub_model::LedgerEntry;
    use std::collections::BTreeMap;
    let money = &world.facts.money;
    // Business order → (order number → captures).
    let mut captured: BTreeMap<String, BTreeMap<String, usize>> = BTreeMap::new();
    for e in money.ledger() {
        let LedgerEntry::Capture { payment, .. } = e else {
            continue;
        };
        let (Some(business), Some(p)) = (
            money.payment_business.get(payment),
            world.platform.payments().get(payment),
        ) else {
            continue;
        };
        *captured
            .entry(business.order.to_string())
            .or_default()
            .entry(p.merchant_order_no.to_string())
            .or_default() += 1;
    }
    let mut s = String::new();
    for (business, numbers) in captured {
        if numbers.values().sum::<usize>() < 2 {
            continue;
        }
        let list: Vec<&str> = numbers.keys().map(String::as_str).collect();
        s.push_str(&format!(
            "# The session filed order numbers {} under business order {business} and captured it {} times (client-never-charges-an-order-twice, UNKNOWN-03, EFFECT-01); a script's request lines carry no business order, so `run` judges the ledger instead:\n",
            list.join(", "),
            numbers.values().sum::<usize>()
        ));
        for (number, n) in numbers {
            let bare = number
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
            if bare {
                s.push_str(&format!("expect ledger: charges(order={number}) = {n}\n"));
            } else {
                s.push_str(&format!(
                    "# ({n} captured under an order number a filter cannot spell: {number:?})\n"
                ));
            }
        }
    }
    s
}
