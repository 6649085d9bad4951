//! The session as a what-if script (`script_from_tape_filed`), which `payhub-verify run`
//! replays choice for choice.
//!
//! Every request line the session filed under a business order (`business.rs`, read back
//! from its `handled` events) gets `for order ORDER db=N`, which `run` sets on the origin
//! at the same point. The export replays the tape to find the verdict `run` will give,
//! says in a comment which verdict still differs (events no longer held), and names a
//! violation with the `expect violation` line that would accept it. When the replay holds
//! but the ledger has an order captured twice (its filing lost with dropped events), it
//! adds `expect ledger: charges(order=N) = n` for each number filed under it.

use super::sandbox::Sandbox;
use payhub_model::RequestId;
use payhub_model::event::{BusinessOrder, What};
use payhub_properties::World;
use payhub_properties::verdict::{Status, WireSide, verdicts};
use payhub_sim::choice::Choice;
use payhub_sim::network::Payload;
use std::collections::BTreeMap;

/// The session's script.
pub fn export(sandbox: &Sandbox) -> Result<String, String> {
    let config = sandbox.config();
    let tape = sandbox.record().tape()?;
    let (replayed, filed, wire_side) = replay_filed(sandbox, tape)?;
    let script_verdicts = verdicts(&replayed.facts);
    let session_verdicts = verdicts(&sandbox.world().facts);
    let violation = script_verdicts
        .iter()
        .find(|v| v.status == Status::Violated);
    let violation = violation.map(|v| v.name);
    // What `run` judges over the replayed exchanges at the end, and what the session's
    // own did (a client's hang-up is not a choice: no script replays it).
    let wire_of = |side: &WireSide, facts| -> Vec<&'static str> {
        let verdicts = side.verdicts(facts).into_iter();
        let witnessed = verdicts.filter(|v| v.status == Status::Violated && v.witness.is_some());
        witnessed.map(|v| v.name).collect()
    };
    let replayed_wire = wire_of(&wire_side, &replayed.facts);
    let wire = replayed_wire.first().copied();
    let not_replayed: Vec<&str> = wire_of(&sandbox.record().wire_side(), &sandbox.world().facts)
        .into_iter()
        .filter(|n| !replayed_wire.contains(n))
        .collect();
    let about = format!(
        "A payhub-verify serve session: {} choices, {} events, ending at {}",
        tape.len(),
        sandbox.record().events_total(),
        sandbox.world().now
    );
    let text = payhub_sim::script::script_from_tape_filed(config, tape, &filed, None, &about)
        .map_err(|e| e.to_string())?;
    // `run` judges the wire properties of the session's script, as its verdict did.
    let mut text = text.replacen("\nuse ", "\nuse wire=judged\nuse ", 1);
    if let Some(name) = violation.or(wire) {
        text.push_str(&format!(
            "# The session violated {name} [{}]: `payhub-verify run` exits 1 naming it; a line `expect violation {name}` accepts it.\n",
            payhub_properties::rules_of(name).join(", ")
        ));
    }
    if !not_replayed.is_empty() {
        text.push_str(&format!(
            "# The session also violated {}, which this script does not replay (a client's hang-up is not a step of the tape): the session's verdict names it.\n",
            not_replayed.join(", ")
        ));
    }
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
    // After a violation the run stops: ledger lines there would not be reached.
    let ledger = match violation.or(wire) {
        Some(_) => String::new(),
        None => ledger_expectations(sandbox.world()),
    };
    if differ.is_empty() {
        return Ok(text + &ledger);
    }
    let (title, rest) = text.split_once('\n').unwrap_or((&text, ""));
    Ok(format!(
        "{title}\n# The session's events are no longer all held, so some business orders it filed are not on these lines; verdicts that differ: {}.\n{rest}{ledger}",
        differ.join("; "),
    ))
}

/// A replayed tape: its world, the filing by step, the wire side of its events.
type Replayed = (World, BTreeMap<usize, BusinessOrder>, WireSide);

/// The tape replayed with each send filed under the business order the session gave its
/// request (from the `handled` events held), that filing by step, and the wire side of
/// its events (what `run` judges at the end).
fn replay_filed(sandbox: &Sandbox, tape: &[Choice]) -> Result<Replayed, String> {
    let by_request: BTreeMap<RequestId, BusinessOrder> = sandbox
        .record()
        .events_held()
        .filter_map(|e| match &e.what {
            What::Handled {
                id,
                business: Some(b),
                ..
            } => Some((*id, b.clone())),
            _ => None,
        })
        .collect();
    let config = sandbox.config();
    let mut world = World::new(config);
    let mut filed = BTreeMap::new();
    let mut trace = payhub_sim::Trace::new();
    for (i, choice) in tape.iter().enumerate() {
        world
            .apply(config, choice, Some(&mut trace))
            .map_err(|e| format!("the session does not replay at step {}: {e}", i + 1))?;
        if !matches!(choice, Choice::Send { .. }) {
            continue;
        }
        let Some((_, Payload::Request { id, .. })) = world.net.iter().last() else {
            continue;
        };
        let id = *id;
        if let (Some(b), Some(origin)) = (by_request.get(&id), world.origins.get_mut(&id)) {
            origin.business = Some(b.clone());
            filed.insert(i, b.clone());
        }
    }
    let mut side = WireSide::default();
    for e in &trace.stream {
        side.observe(e);
    }
    side.close();
    Ok((world, filed, side))
}

/// `expect ledger:` lines for every business order the session captured more than once:
/// the captures of each order number filed under it, as the session's ledger has them.
fn ledger_expectations(world: &World) -> String {
    use payhub_model::LedgerEntry;
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
            "# The session filed order numbers {} under business order {business} and captured it {} times (client-never-charges-an-order-twice, UNKNOWN-03, EFFECT-01); the ledger as the session left it:\n",
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
