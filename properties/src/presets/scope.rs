//! A preset's scope as parameters, as TLC's constants: the fault budget (drops,
//! duplicates, 500s, upstream drops, crashes, and the sends, controls and waits of the
//! platform presets), and for a client preset the number of merchant servers and of
//! orders. A user grows a scope knob by knob (`check --faults drops=2 --servers 2`)
//! until the time budget ends; every preset's default scope is the one written in its
//! definition, so a default run keeps its counts.

use super::Preset;
use payhub_model::client::Command;
use payhub_sim::{Budget, WorkItem};

macro_rules! knobs {
    (
        faults { $( $fault:ident = $fault_name:literal, $fault_field:ident; )* }
        others { $( $other:ident = $other_name:literal, $other_field:ident; )* }
    ) => {
        /// One budget the scope sets, named as on the command line.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum Knob {
            $($fault,)*
            $($other,)*
        }

        impl Knob {
            pub const ALL: &'static [Knob] = &[$(Knob::$fault,)* $(Knob::$other,)*];

            /// The fault kinds (the others are the adversary's alphabet and the environment).
            pub const FAULTS: &'static [Knob] = &[$(Knob::$fault),*];

            pub fn name(self) -> &'static str {
                match self {
                    $(Knob::$fault => $fault_name,)*
                    $(Knob::$other => $other_name,)*
                }
            }

            /// The budget field this knob sets.
            pub fn of(self, budget: &mut Budget) -> &mut u8 {
                match self {
                    $(Knob::$fault => &mut budget.$fault_field,)*
                    $(Knob::$other => &mut budget.$other_field,)*
                }
            }
        }
    };
}

knobs! {
    faults {
        Drops = "drops", drops;
        Dups = "dups", duplicates;
        Fail500 = "fail_500", fail_500;
        UpstreamDrops = "upstream_drops", upstream_drops;
        Crashes = "crashes", crashes;
    }
    others {
        Sends = "sends", sends;
        Controls = "controls", controls;
        Waits = "waits", waits;
    }
}

impl Knob {
    pub fn from_name(name: &str) -> Option<Knob> {
        Knob::ALL.iter().copied().find(|k| k.name() == name)
    }

    pub fn get(self, budget: &Budget) -> u8 {
        let mut copy = *budget;
        *self.of(&mut copy)
    }
}

/// Most merchant servers and orders a scope asks for: the world's node ids are `u8`, and
/// a scope past a handful does not finish anyway.
pub const SERVERS_MAX: u8 = 8;
pub const ORDERS_MAX: u8 = 8;

/// What a user changes of a preset's default scope: the knobs given, nothing else.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ScopeChange {
    pub faults: Vec<(Knob, u8)>,
    pub servers: Option<u8>,
    pub orders: Option<u8>,
}

impl ScopeChange {
    pub fn is_empty(&self) -> bool {
        self.faults.is_empty() && self.servers.is_none() && self.orders.is_none()
    }
}

/// The orders a client preset's workload pays, in order of first appearance, and
/// whether every server pays each of them (the same order from every server) or each
/// order has one server.
fn orders(preset: &Preset) -> (Vec<String>, bool) {
    let mut names: Vec<String> = Vec::new();
    let mut shared = false;
    for item in &preset.config.workload {
        if let Command::PayOrder { order, .. } = &item.command {
            let order = order.to_string();
            if names.contains(&order) {
                shared = true;
            } else {
                names.push(order);
            }
        }
    }
    (names, shared)
}

/// Changing a preset's scope ([`Preset::with_scope`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ScopeError {
    /// `--servers` or `--orders` on a preset that runs no merchant server.
    #[error(
        "--servers and --orders set the merchant servers of a client preset; '{0}' is a platform preset (an adversarial sender, no client)"
    )]
    NotAClientPreset(String),
    /// A client preset whose servers have no order to pay, so none to copy.
    #[error("preset {0}: no workload to grow")]
    NoWorkload(String),
}

impl Preset {
    /// Whether the merchant side is the reference client (servers and orders apply).
    /// What the preset's setup spends of each budget, found by running it with every
    /// fault knob plentiful (a setup is a fixed list of choices: the budget only lets
    /// them happen). Nothing if the setup does not run.
    pub fn setup_spends(&self) -> Budget {
        const PLENTY: u8 = 100;
        let mut probe = self.clone();
        for knob in Knob::FAULTS {
            *knob.of(&mut probe.config.budget) = PLENTY;
        }
        let mut spent = Budget::default();
        if let Ok(world) = probe.initial_state() {
            for &knob in Knob::FAULTS {
                *knob.of(&mut spent) = PLENTY - knob.get(&world.budget);
            }
        }
        spent
    }

    pub fn is_client(&self) -> bool {
        !self.config.clients.is_empty()
    }

    /// The scope as the flags that set it: `drops=1 (servers 1, orders 1)`.
    pub fn scope_text(&self) -> String {
        let b = &self.config.budget;
        let set: Vec<String> = Knob::ALL
            .iter()
            .filter(|k| k.get(b) > 0)
            .map(|k| format!("{}={}", k.name(), k.get(b)))
            .collect();
        let mut s = if set.is_empty() {
            "no faults".to_owned()
        } else {
            set.join(",")
        };
        if self.is_client() {
            let (orders, _) = orders(self);
            s.push_str(&format!(
                "; servers {}, orders {}",
                self.config.clients.len(),
                orders.len()
            ));
        }
        s
    }

    /// This preset with `change` applied. A fault knob counts the faults the search may
    /// spend: what the preset's setup spends itself comes on top (the two 500s that
    /// bring `two-servers-rate-limited` to its starting state), so every client preset
    /// is a scope at any faults, and a preset at its setup's faults and no more is its
    /// default. Servers and orders only apply to a client preset: the added servers
    /// share the first's policy and database, the added orders are `ORDER-2`,
    /// `ORDER-3`, … paid like the first (by every server if the preset's servers all pay
    /// one order, else each by one server in turn).
    pub fn with_scope(mut self, change: &ScopeChange) -> Result<Preset, ScopeError> {
        let spent = self.setup_spends();
        for &(knob, n) in &change.faults {
            let setup = if Knob::FAULTS.contains(&knob) {
                knob.get(&spent)
            } else {
                0
            };
            *knob.of(&mut self.config.budget) = n.saturating_add(setup);
        }
        if change.servers.is_none() && change.orders.is_none() {
            return Ok(self);
        }
        if !self.is_client() {
            return Err(ScopeError::NotAClientPreset(self.name.to_string()));
        }
        let (mut names, shared) = orders(&self);
        let template = self
            .config
            .workload
            .first()
            .cloned()
            .ok_or_else(|| ScopeError::NoWorkload(self.name.to_string()))?;
        let servers = change
            .servers
            .unwrap_or(self.config.clients.len() as u8)
            .clamp(1, SERVERS_MAX);
        let first = self.config.clients[0].clone();
        self.config.clients = (0..servers)
            .map(|node| payhub_sim::ClientSpec {
                node,
                ..first.clone()
            })
            .collect();
        let wanted = change
            .orders
            .unwrap_or(names.len() as u8)
            .clamp(1, ORDERS_MAX) as usize;
        names.truncate(wanted);
        while names.len() < wanted {
            names.push(format!("ORDER-{}", names.len() + 1));
        }
        let item = |node: u8, order: &str| {
            let mut item: WorkItem = template.clone();
            item.node = node;
            if let Command::PayOrder { order: o, .. } = &mut item.command {
                *o = order.into();
            }
            item
        };
        self.config.workload = if shared {
            names
                .iter()
                .flat_map(|o| (0..servers).map(move |n| (n, o)))
                .map(|(n, o)| item(n, o))
                .collect()
        } else {
            names
                .iter()
                .enumerate()
                .map(|(i, o)| item(i as u8 % servers, o))
                .collect()
        };
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::presets::preset;

    #[test]
    fn the_default_scope_reads_as_its_flags() {
        let p = preset("create-lossy").unwrap();
        assert_eq!(p.scope_text(), "drops=1; servers 1, orders 1");
        let p = preset("replay-conflict").unwrap();
        assert_eq!(p.scope_text(), "drops=1,fail_500=1,sends=2");
    }

    #[test]
    fn an_empty_change_keeps_the_preset() {
        let p = preset("two-servers-one-order").unwrap();
        let q = p.clone().with_scope(&ScopeChange::default()).unwrap();
        assert_eq!(p.config, q.config);
    }

    #[test]
    fn knobs_set_the_budget_and_the_shape() {
        let p = preset("two-servers-one-order").unwrap();
        let change = ScopeChange {
            faults: vec![(Knob::Drops, 2), (Knob::Crashes, 1)],
            servers: Some(3),
            orders: Some(2),
        };
        let q = p.with_scope(&change).unwrap();
        assert_eq!((q.config.budget.drops, q.config.budget.crashes), (2, 1));
        assert_eq!(q.config.clients.len(), 3);
        // Every server pays each order (the preset's shape).
        assert_eq!(q.config.workload.len(), 6);
        assert_eq!(q.scope_text(), "drops=2,crashes=1; servers 3, orders 2");
        let lossy = preset("create-lossy")
            .unwrap()
            .with_scope(&ScopeChange {
                orders: Some(2),
                ..ScopeChange::default()
            })
            .unwrap();
        let nodes: Vec<u8> = lossy.config.workload.iter().map(|w| w.node).collect();
        assert_eq!(nodes, [0, 0], "one server pays both orders");
    }

    #[test]
    fn the_faults_a_setup_spends_come_on_top_of_a_scope() {
        let p = preset("two-servers-rate-limited").unwrap();
        assert_eq!(p.setup_spends().fail_500, 2);
        let none: Vec<(Knob, u8)> = Knob::FAULTS.iter().map(|&k| (k, 0)).collect();
        let q = p
            .clone()
            .with_scope(&ScopeChange {
                faults: none.clone(),
                ..ScopeChange::default()
            })
            .unwrap();
        assert_eq!(
            p.config, q.config,
            "no faults for the search is the preset itself"
        );
        let r = p
            .with_scope(&ScopeChange {
                faults: vec![(Knob::Drops, 1), (Knob::Fail500, 1)],
                ..ScopeChange::default()
            })
            .unwrap();
        assert_eq!((r.config.budget.drops, r.config.budget.fail_500), (1, 3));
        // Every client preset is a scope at no faults.
        for p in crate::presets::presets()
            .into_iter()
            .filter(|p| p.is_client())
        {
            let name = p.name;
            let q = p
                .with_scope(&ScopeChange {
                    faults: none.clone(),
                    ..ScopeChange::default()
                })
                .unwrap();
            assert!(q.initial_state().is_ok(), "{name}");
        }
    }

    #[test]
    fn servers_of_a_platform_preset_are_an_error() {
        let e = preset("refund")
            .unwrap()
            .with_scope(&ScopeChange {
                servers: Some(2),
                ..ScopeChange::default()
            })
            .unwrap_err();
        assert!(e.to_string().contains("platform preset"), "{e}");
    }
}
