//! Every control of the profile is checked to take effect before the first case: a
//! control the target answers 2xx and then ignores would otherwise be blamed on the
//! target. With the rate limit on, a valid create (the card under the profile's
//! `card_field`) must not be executed (RATE-01: the target's own 429); with the channel
//! paused, likewise (RATE-04: its own 503). Which refusal it answers is the target's to
//! get right, judged by the cases, not here. The clock is
//! checked at each move, with `clock.read` (`run.rs`). A control that takes no effect is
//! an error naming it (exit 2), never a violation.

use super::case::Switch;
use super::run::{self, Target};

/// Switches each control of the profile on, sends one create, and switches it off.
pub async fn check_controls(t: &Target, tag: &str) -> Result<(), String> {
    let c = &t.profile.profile.controls;
    let checks = [
        (
            c.rate_limit.is_some(),
            "controls.rate_limit",
            Switch::RateLimit {
                merchant: 1,
                on: true,
            },
            Switch::RateLimit {
                merchant: 1,
                on: false,
            },
        ),
        (
            c.pause.is_some(),
            "controls.pause",
            Switch::Pause { on: true },
            Switch::Pause { on: false },
        ),
    ];
    for (n, (present, name, on, off)) in checks.into_iter().enumerate() {
        if !present {
            continue;
        }
        run::switch(t, on).await?;
        let status = create(t, &format!("{tag}-{n}")).await;
        run::switch(t, off).await?;
        let status = status?;
        if (200..300).contains(&status) {
            return Err(format!(
                "{name} took no effect: switched on (answered 2xx), the target then executed a create ({status}); check the control's path, method and body"
            ));
        }
    }
    Ok(())
}

/// One create under a fresh key and order number: its status.
async fn create(t: &Target, tag: &str) -> Result<u16, String> {
    let prefix = t.profile.prefix();
    let card = t
        .profile
        .card(super::profile::CardOutcome::Approve)
        .cloned()
        .unwrap_or_else(|| "A".into());
    let body = serde_json::json!({"merchant_order_no": format!("{prefix}-{tag}-o1"),
        "amount": 1000, "currency": "USD", "card": card});
    let headers = vec![
        (
            "Authorization".into(),
            format!("Bearer {}", t.profile.target_key(1).unwrap_or("")),
        ),
        ("Idempotency-Key".into(), format!("{prefix}-{tag}-k1")),
    ];
    let body = t.profile.target_body(Some(&body.to_string()));
    run::direct(t, "POST", "/v1/payments", headers, body)
        .await
        .map(|r| r.status)
        .map_err(|e| run::down_or("checking the controls: POST /v1/payments", e))
}
