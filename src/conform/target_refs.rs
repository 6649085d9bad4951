//! The target's ids for the objects a case names, read off its answers (the oracle
//! renders a case's requests for each model state with the ids that state bound them to).

use std::collections::BTreeMap;

/// The target's ids for the objects a case names, read off its answers.
/// Keyed by namespace (see [`super::profile::Loaded::namespace`]) and number.
#[derive(Clone, Debug, Default)]
pub struct TargetRefs {
    pub payments: BTreeMap<(u32, String), String>,
    pub refunds: BTreeMap<(u32, String), String>,
}

impl TargetRefs {
    /// Reads the Payments and Refunds of an answer body seen in namespace `ns`.
    pub fn learn(&mut self, ns: u32, body: &serde_json::Value) {
        let mut objects: Vec<&serde_json::Value> = vec![body];
        if let Some(data) = body.get("data").and_then(|d| d.as_array()) {
            objects.extend(data);
        }
        for o in objects {
            let id = o.get("id").and_then(|v| v.as_str());
            if let (Some(id), Some(no)) = (id, o.get("merchant_order_no").and_then(|v| v.as_str()))
            {
                self.payments.insert((ns, no.to_owned()), id.to_owned());
            }
            if let (Some(id), Some(no)) = (id, o.get("merchant_refund_no").and_then(|v| v.as_str()))
            {
                self.refunds.insert((ns, no.to_owned()), id.to_owned());
            }
        }
    }
}
