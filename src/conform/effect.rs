//! Every control of the profile is checked to take effect before the first case, else a
//! control the target answers 2xx and ignores would be blamed on the target: switched
//! on, a valid create must not be executed (RATE-01: its own 429; RATE-04: its own 503).
//! One that takes no effect is exit 2 naming it, never a violation.

use super::case::Switch;
use super::run::{self, Target};

/// Switches each control of the profile on, sends one create, and switches it off.
pub async fn check_controls(t: &Target, tag: &str) -> Result<(), String> {
    let c = &t.profile.profile.controls;
    let rate_limit: fn(bool) -> Switch = |on| Switch::RateLimit { merchant: 1, on };
    let checks = [
        (c.rate_limit.is_some(), "controls.rate_limit", rate_limit),
        (c.pause.is_some(), "controls.pause", |on| Switch::Pause {
            on,
        }),
    ];
    for (n, (present, name, switch)) in checks.into_iter().enumerate() {
        if !present {
            continue;
        }
        run::switch(t, switch(true)).await?;
        let status = create(t, &format!("{tag}-{n}")).await;
        run::switch(t, switch(false)).await?;
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
