//! Every control of the profile is checked to take effect before the first case, else a
//! control the target answers 2xx and ignores would be blamed on the target: switched
//! on, a valid create must not be executed (RATE-01: its own 429; RATE-04: its own 503).
//! One that takes no effect is exit 2 naming it, never a violation.

use super::case::{Fault, KeyUse, Names, Op, Req, Switch};
use super::run::{self, Target};

/// Switches each control of the profile on, sends one create, and switches it off.
pub async fn check_controls(t: &Target, tag: &str) -> Result<(), String> {
    let c = &t.profile.profile.controls;
    let rate_limit: fn(bool) -> Switch = |on| Switch::RateLimit { merchant: 1, on };
    let pause: fn(bool) -> Switch = |on| Switch::Pause { on };
    let checks = [
        (c.rate_limit.is_some(), "controls.rate_limit", rate_limit),
        (c.pause.is_some(), "controls.pause", pause),
    ];
    for (n, (_, name, switch)) in checks.into_iter().enumerate().filter(|(_, c)| c.0) {
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
    let req = Req {
        key_of: 1,
        key: KeyUse::Slot(1),
        op: Op::approved(1),
        fault: Fault::None,
        rotation: 0,
    };
    let names = Names::new(t.profile.prefix(), tag);
    let http = run::render(t, &names, &Default::default(), &req).wire();
    crate::wire::send(&t.addr, &http, run::timeout(t))
        .await
        .map(|r| r.status)
        .map_err(|e| run::down_or("checking the controls: POST /v1/payments", e))
}
