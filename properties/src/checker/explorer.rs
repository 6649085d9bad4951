//! The Explorer's view of a preset: stateright's Explorer over [`Shown`] states, whose
//! pane reads in the contract's terms ([`state_text`], [`step_text`]).

use super::PresetModel;
use crate::World;
use crate::presets::Preset;
use crate::property::Kind;
use crate::registry::PROPERTIES;
use payhub_sim::Choice;
use stateright::{Checker, Model};

/// Serves stateright's Explorer for `preset` on `addr` until the process stops. Its state
/// pane shows [`state_text`], its steps read as the trace lines they cause.
pub fn serve(preset: Preset, addr: std::net::SocketAddr) -> Result<(), super::CheckError> {
    let model = ExplorerModel(PresetModel::new(preset)?);
    let checker = model.checker().serve(addr);
    let _ = checker.unique_state_count();
    Ok(())
}

/// A world as the Explorer shows it: its `Debug` is [`state_text`]. Hashed and compared
/// as the world alone, so the Explorer's states are the checker's.
#[derive(Clone)]
pub struct Shown {
    pub world: World,
    config: std::sync::Arc<payhub_sim::WorldConfig>,
}

impl PartialEq for Shown {
    fn eq(&self, other: &Shown) -> bool {
        self.world == other.world
    }
}

impl Eq for Shown {}

impl std::hash::Hash for Shown {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.world.hash(state);
    }
}

impl std::fmt::Debug for Shown {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&state_text(&self.config, &self.world))
    }
}

/// The Explorer's model: the preset's, over [`Shown`] states.
pub struct ExplorerModel(pub PresetModel);

impl ExplorerModel {
    fn config(&self) -> std::sync::Arc<payhub_sim::WorldConfig> {
        std::sync::Arc::new(self.0.preset.config.clone())
    }
}

/// `fn(&ExplorerModel, &Shown) -> bool` for property `I` of the registry.
fn shown_condition<const I: usize>(_: &ExplorerModel, shown: &Shown) -> bool {
    PROPERTIES[I].holds_in(&shown.world.facts)
}

static SHOWN_CONDITIONS: &[fn(&ExplorerModel, &Shown) -> bool] = slots!(shown_condition);

impl Model for ExplorerModel {
    type State = Shown;
    type Action = Choice;

    fn init_states(&self) -> Vec<Shown> {
        let config = self.config();
        self.0
            .init_states()
            .into_iter()
            .map(|world| Shown {
                world,
                config: config.clone(),
            })
            .collect()
    }

    fn actions(&self, state: &Shown, actions: &mut Vec<Choice>) {
        self.0.actions(&state.world, actions);
    }

    fn next_state(&self, last: &Shown, action: Choice) -> Option<Shown> {
        let world = self.0.next_state(&last.world, action)?;
        Some(Shown {
            world,
            config: last.config.clone(),
        })
    }

    fn format_action(&self, action: &Choice) -> String {
        action.to_string()
    }

    /// The step as the trace lines it causes (`merchant-0 → platform  POST /v1/payments …`).
    fn format_step(&self, last: &Shown, action: Choice) -> Option<String> {
        Some(step_text(&self.0.preset.config, &last.world, &action))
    }

    fn properties(&self) -> Vec<stateright::Property<Self>> {
        self.0
            .active
            .iter()
            .map(|&i| {
                let p = &PROPERTIES[i];
                match p.kind() {
                    Kind::Always => stateright::Property::always(p.name, SHOWN_CONDITIONS[i]),
                    Kind::Sometimes => stateright::Property::sometimes(p.name, SHOWN_CONDITIONS[i]),
                }
            })
            .collect()
    }

    fn within_boundary(&self, state: &Shown) -> bool {
        self.0.within_boundary(&state.world)
    }
}

/// What `choice` does in `world`, as the trace lines it causes, one per line, after the
/// choice's label.
pub fn step_text(config: &payhub_sim::WorldConfig, world: &World, choice: &Choice) -> String {
    let mut next = world.clone();
    let mut trace = payhub_sim::Trace::new();
    let mut s = choice.to_string();
    if next.apply(config, choice, Some(&mut trace)).is_err() {
        s.push_str(": does not apply here");
        return s;
    }
    for line in trace.to_text().lines() {
        s.push('\n');
        s.push_str(line);
    }
    s
}

/// A world in the contract's terms: the platform's Payments (status, resolution_status,
/// version) and idempotency records (scope and state), the messages in flight as the
/// contract writes them, the acquirer's ledger, and each client's orders.
pub fn state_text(config: &payhub_sim::WorldConfig, world: &World) -> String {
    use payhub_sim::Payload;
    use payhub_sim::network::UpstreamMsg;
    use std::fmt::Write as _;
    let mut s = String::new();
    let _ = writeln!(s, "time {:.3}s", world.now.0 as f64 / 1000.0);
    let _ = writeln!(s, "Payments:");
    let platform = &world.platform;
    if platform.payments().is_empty() {
        let _ = writeln!(s, "  (none)");
    }
    for id in platform.payments().keys() {
        if let Some(p) = platform.payment_view(*id) {
            let _ = writeln!(
                s,
                "  {} {} {} {}  status={} resolution_status={} version={} attempt_count={}",
                p.id,
                p.merchant_order_no,
                p.amount,
                p.currency,
                p.status.as_str(),
                p.resolution_status.as_str(),
                p.version,
                p.attempt_count
            );
        }
    }
    let _ = writeln!(s, "Idempotency records:");
    if platform.records().is_empty() {
        let _ = writeln!(s, "  (none)");
    }
    for (scope, record) in platform.records().iter() {
        let state = match &record.state {
            payhub_model::platform::RecordState::InFlight { executor } => {
                format!("in flight (executing {executor})")
            }
            payhub_model::platform::RecordState::Done { resource } => format!("done → {resource}"),
        };
        use payhub_model::platform::Route;
        let route = match scope.route {
            Route::CreatePayment => "POST /v1/payments".to_owned(),
            Route::Confirm(p) => format!("POST /v1/payments/{p}/confirm"),
            Route::Cancel(p) => format!("POST /v1/payments/{p}/cancel"),
            Route::CheckoutSession => "POST /v1/checkout/sessions".to_owned(),
            Route::Refund => "POST /v1/refunds".to_owned(),
        };
        let _ = writeln!(
            s,
            "  {} {} {route}  Idempotency-Key: {}  {state}",
            scope.merchant, scope.environment, scope.key
        );
    }
    let _ = writeln!(s, "Messages in flight:");
    let mut any = false;
    for (msg, payload) in world.net.iter() {
        any = true;
        let line = match payload {
            Payload::Request { from, request, .. } => {
                format!("merchant-{from} → platform    {request}")
            }
            Payload::Response { to, response, .. } => {
                format!("platform → merchant-{to}    {response}")
            }
            Payload::Webhook { to, event } => {
                format!("platform → merchant-{to}    webhook {event}")
            }
        };
        let _ = writeln!(s, "  {msg}  {line}");
    }
    for (msg, payload) in world.link.iter() {
        any = true;
        let line = match payload {
            UpstreamMsg::Call(call) => format!("platform → acquirer    {call}"),
            UpstreamMsg::Reply(reply) => format!("acquirer → platform    {reply}"),
        };
        let _ = writeln!(s, "  {msg}  {line}");
    }
    if !any {
        let _ = writeln!(s, "  (none)");
    }
    let _ = writeln!(s, "Ledger:");
    if world.acquirer.ledger.entries.is_empty() {
        let _ = writeln!(s, "  (no money moved)");
    }
    for entry in &world.acquirer.ledger.entries {
        let _ = writeln!(s, "  {}", ledger_text(entry));
    }
    for spec in &config.clients {
        let up = if world.server_up(spec.node) {
            "up"
        } else {
            "DOWN"
        };
        let _ = writeln!(
            s,
            "merchant-{} ({up}, database {}) orders:",
            spec.node, spec.db
        );
        let Some(db) = world.dbs.get(spec.db as usize) else {
            continue;
        };
        let mut none = true;
        for order in db.orders() {
            none = false;
            let payment = order
                .payment_id
                .map(|p| format!(" {p} version {}", order.version()))
                .unwrap_or_default();
            let _ = writeln!(s, "  {} {}{payment}", order.order_no, order.state());
        }
        if none {
            let _ = writeln!(s, "  (none)");
        }
    }
    s
}

fn ledger_text(entry: &payhub_model::LedgerEntry) -> String {
    match entry {
        payhub_model::LedgerEntry::Capture {
            attempt,
            payment,
            amount,
            card,
            ..
        } => format!("capture {attempt} of {payment}: {amount} ({card})"),
        payhub_model::LedgerEntry::Refund {
            refund,
            attempt,
            amount,
            ..
        } => format!("refund {refund} of {attempt}: {amount}"),
    }
}
