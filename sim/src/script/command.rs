//! A merchant's business command on a script line (`NAME: pay ORDER-1 10000 USD card A`):
//! parsed for the client model, and rendered back for exported scripts.

use super::cursor::{Cursor, LineError};
use super::parse::err;
use payhub_model::Card;
use payhub_model::client::Command;

pub(super) fn command(cur: &mut Cursor) -> Result<Command, LineError> {
    let (verb, vcol) =
        cur.expect_word("a business command (pay, retry-card, cancel, amend, refund, reconcile)")?;
    let amount = |(w, c): (String, u32)| -> Result<u64, LineError> {
        w.parse()
            .map_err(|_| (c, format!("'{w}' is not an amount")))
    };
    Ok(match verb.as_str() {
        "pay" => {
            let (order, _) = cur.expect_word("an order number")?;
            let amount = amount(cur.expect_word("an amount")?)?;
            let (currency, _) = cur.expect_word("a currency")?;
            let card = card(cur)?;
            Command::PayOrder {
                order: order.into(),
                amount,
                currency: currency.into(),
                card,
            }
        }
        "retry-card" => {
            let (order, _) = cur.expect_word("an order number")?;
            let card = card(cur)?;
            Command::RetryWithCard {
                order: order.into(),
                card,
            }
        }
        "cancel" => Command::CancelOrder {
            order: cur.expect_word("an order number")?.0.into(),
        },
        "amend" => {
            let (order, _) = cur.expect_word("an order number")?;
            let amount = amount(cur.expect_word("an amount")?)?;
            Command::AmendOrder {
                order: order.into(),
                amount,
            }
        }
        "refund" => {
            let (order, _) = cur.expect_word("an order number")?;
            let (refund, _) = cur.expect_word("a refund number")?;
            let amount = amount(cur.expect_word("an amount")?)?;
            Command::RefundOrder {
                order: order.into(),
                refund: refund.into(),
                amount,
            }
        }
        "reconcile" => Command::Reconcile,
        _ => {
            return err(
                vcol,
                format!(
                    "unknown business command '{verb}' (pay, retry-card, cancel, amend, refund, reconcile)"
                ),
            );
        }
    })
}

fn card(cur: &mut Cursor) -> Result<Card, LineError> {
    let (w, c) = cur.expect_word("card")?;
    if w != "card" {
        return err(c, format!("expected 'card X', not '{w}'"));
    }
    let (label, lc) = cur.expect_word("a card label (A)")?;
    let mut chars = label.chars();
    match (chars.next(), chars.next()) {
        (Some(ch), None) => Ok(Card(ch)),
        _ => err(lc, format!("a card is one letter, not '{label}'")),
    }
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
