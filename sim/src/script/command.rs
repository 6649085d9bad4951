//! A merchant's business command on a script line (`NAME: pay ORDER-1 10000 USD card A`):
//! parsed for the client model, and rendered back for exported scripts.

use super::cursor::{Cursor, Parsed, fail};
use super::request::one_letter;
use payhub_model::client::Command;
use payhub_model::{Card, Text};

pub(super) fn command(cur: &mut Cursor) -> Parsed<Command> {
    let (verb, vcol) =
        cur.expect_word("a business command (pay, retry-card, cancel, amend, refund, reconcile)")?;
    let word =
        |cur: &mut Cursor, what: &str| -> Parsed<Text> { Ok(cur.expect_word(what)?.0.into()) };
    let order = |cur: &mut Cursor| word(cur, "an order number");
    Ok(match verb.as_str() {
        "pay" => Command::PayOrder {
            order: order(cur)?,
            amount: cur.number("an amount")?,
            currency: word(cur, "a currency")?,
            card: card(cur)?,
        },
        "retry-card" => Command::RetryWithCard {
            order: order(cur)?,
            card: card(cur)?,
        },
        "cancel" => Command::CancelOrder { order: order(cur)? },
        "amend" => Command::AmendOrder {
            order: order(cur)?,
            amount: cur.number("an amount")?,
        },
        "refund" => Command::RefundOrder {
            order: order(cur)?,
            refund: word(cur, "a refund number")?,
            amount: cur.number("an amount")?,
        },
        "reconcile" => Command::Reconcile,
        _ => fail!(
            vcol,
            "unknown business command '{verb}' (pay, retry-card, cancel, amend, refund, reconcile)"
        ),
    })
}

fn card(cur: &mut Cursor) -> Parsed<Card> {
    cur.keyword("card", |w| format!("expected 'card X', not '{w}'"))?;
    let card = cur.read("a card label (A)", one_letter, |w| {
        format!("a card is one letter, not '{w}'")
    });
    card.map(Card)
}

/// A client command as a script line (after `NAME: `).
pub(crate) fn render_command(command: &Command) -> String {
    match command {
        Command::PayOrder {
            order,
            amount,
            currency,
            card,
        } => {
            format!("pay {order} {amount} {currency} card {}", card.0)
        }
        Command::RetryWithCard { order, card } => format!("retry-card {order} card {}", card.0),
        Command::CancelOrder { order } => format!("cancel {order}"),
        Command::AmendOrder { order, amount } => format!("amend {order} {amount}"),
        Command::RefundOrder {
            order,
            refund,
            amount,
        } => format!("refund {order} {refund} {amount}"),
        Command::Reconcile => "reconcile".to_owned(),
    }
}
