//! What a parsed script is: its world, its servers and its statements.

use crate::choice::Choice;
use crate::config::WorldConfig;
use payhub_model::event::BusinessOrder;
use payhub_model::{
    AcquirerDecision, ApiKeyId, ApiRequest, AttemptId, Branch, Control, Environment, ErrorCode,
    MerchantId, Millis,
};
use serde::Serialize;

/// A place in a script file: 1-based line and column (in characters).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Pos {
    pub line: u32,
    pub column: u32,
}

/// A named merchant server of a script (`A`, `B`, …): a scripted sender, or a client
/// model when it has a policy.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Server {
    pub name: String,
    /// The world's node (`merchant-N` in traces).
    pub node: u8,
    /// The API key its requests carry unless a request line says otherwise.
    pub api_key: ApiKeyId,
    /// Merchant and environment of that key, when the key is one the world issues.
    pub merchant: Option<MerchantId>,
    pub environment: Option<Environment>,
    /// The client policy (`reference`, `new_key_after_timeout`, …) of a client server.
    pub policy: Option<String>,
    /// The database of a client server (servers with the same `db` share it).
    pub db: u8,
}

/// A parsed script, ready to run.
#[derive(Clone, Debug, Default)]
pub struct Script {
    /// The file name, as given (for `file:line:column` messages).
    pub file: String,
    pub source: Vec<String>,
    /// The first line, when it is a comment: `S3 · Same key, different amount · AC-016`.
    pub title: Option<String>,
    pub config: WorldConfig,
    pub servers: Vec<Server>,
    /// Assumptions of the model the script depends on (`assume A-CKO-CONFLICT`).
    pub assumptions: Vec<payhub_model::Assumption>,
    /// `use delivery=manual`: nothing is delivered unless a statement says so.
    pub manual: bool,
    /// `use wire=judged`: the properties' wire level is judged over the run's exchanges at its
    /// end too (the sandbox's exported sessions; `payhub-verify run` judges them).
    pub judge_wire: bool,
    /// `expect violation NAME`: the property the script must break.
    pub expected_violation: Option<(String, Pos)>,
    pub statements: Vec<Statement>,
}

impl Script {
    /// The AC number in the title (`AC-016`), if any.
    pub fn ac(&self) -> Option<&str> {
        let title = self.title.as_deref()?;
        title
            .split(|c: char| c.is_whitespace() || c == '·' || c == ',' || c == '(' || c == ')')
            .find(|w| w.starts_with("AC-") && w.len() > 3)
    }
}

/// One statement, with where it was written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Statement {
    pub pos: Pos,
    pub action: Action,
}

payhub_model::named! {
    fn as_str;
    /// Which messages on the merchant network a `net:` statement acts on.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum MsgKind {
        Request = "request",
        Response = "response",
        Webhook = "webhook",
    }
}

payhub_model::named! {
    fn as_str;
    /// What a `net:` (or `platform: 500 …`) statement does to a message.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum NetOp {
        /// Lose it.
        Drop = "drop",
        /// Deliver it twice (a second copy stays in flight).
        Duplicate = "duplicate",
        /// Keep it in flight (delay) until `net: release`.
        Hold = "hold",
        /// Let a held message go.
        Release = "release",
        /// The platform's edge answers 500 without executing (requests only).
        Fail500Before = "500 before",
        /// The platform executes, but its answer is replaced by a 500 (requests only).
        Fail500After = "500 after",
    }
}

/// Which upstream call an `upstream` statement decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallKind {
    /// The oldest call in flight, whatever it is.
    Any,
    Charge,
    Query,
    Cancel,
    Refund,
    QueryRefund,
    /// The call with this id (`u3`).
    Id(u32),
}

payhub_model::named! {
    fn as_str;
    /// What happens to the acquirer's reply after an `upstream` decision.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum ReplyFate {
        /// Delivered to the platform at once (the default).
        Deliver = "deliver",
        /// Lost on the upstream link.
        Lost = "lost",
        /// Kept in flight until `upstream: reply`.
        Held = "held",
    }
}

payhub_model::named! {
    fn as_str;
    /// A comparison in a counter expectation.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Cmp {
        Eq = "=",
        Le = "<=",
        Ge = ">=",
    }
}

impl Cmp {
    pub fn holds(self, got: u64, want: u64) -> bool {
        match self {
            Cmp::Eq => got == want,
            Cmp::Le => got <= want,
            Cmp::Ge => got >= want,
        }
    }
}

/// `name=value` in an expectation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldCheck {
    pub name: String,
    pub value: String,
    pub pos: Pos,
}

/// What the response to a request line must be.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Want {
    /// No response reached the server: the request or its response was lost.
    Lost,
    /// The platform has not answered (or its answer is held in flight).
    Pending,
    Answer {
        status: u16,
        code: Option<ErrorCode>,
        fields: Vec<FieldCheck>,
    },
}

/// Counters an expectation can compare: `charges(card=B)`, `payments(order=ORDER-001)`, …
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Counter {
    /// `charges`, `refunds`, `charge-calls`, `refund-calls` (ledger); `payments`,
    /// `attempts`, `refunds`, `sessions`, `records` (platform).
    pub term: String,
    pub filters: Vec<FieldCheck>,
    pub cmp: Cmp,
    pub value: u64,
}

/// Whose counters: the acquirer's ledger and upstream link, or the platform's records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CounterScope {
    Ledger,
    Platform,
}

/// An expectation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expectation {
    /// The response to the last request line (of `server`, if given).
    Response { server: Option<usize>, want: Want },
    /// A count over the ledger or the platform.
    Count {
        scope: CounterScope,
        counter: Counter,
    },
    /// Fields of a Payment or Refund as the platform holds it now.
    Object {
        kind: ObjectKind,
        id: u32,
        fields: Vec<FieldCheck>,
    },
    /// Some webhook of this kind was delivered (the latest one has these fields), or none.
    Webhook {
        present: bool,
        kind: String,
        fields: Vec<FieldCheck>,
    },
    /// A client server's view of an order (its database).
    ClientOrder {
        server: usize,
        order: String,
        fields: Vec<FieldCheck>,
    },
}

/// A platform object kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ObjectKind {
    Payment,
    Refund,
}

/// What a statement does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// `A: POST /v1/payments …`: server `server` sends this request; `A: for order
    /// ORDER-1 POST …` files it under that business order (the origin's
    /// `Origin::business`, as the sandbox files a create it read off the wire).
    Request {
        server: usize,
        request: ApiRequest,
        business: Option<BusinessOrder>,
    },
    /// `C: pay ORDER-1 …`: client server `server` is given workload item `item`.
    Command {
        server: usize,
        item: u16,
        crash_after: bool,
    },
    /// `net: drop response [to A]`, `platform: 500 after`, …
    Net {
        op: NetOp,
        /// `None` only for `net: release` (everything held).
        kind: Option<MsgKind>,
        server: Option<usize>,
    },
    /// `upstream [KIND]: DECISION [reply=…]`.
    Upstream {
        call: CallKind,
        decision: AcquirerDecision,
        reply: ReplyFate,
    },
    /// `upstream [KIND]: lost`: the call never reaches the acquirer.
    UpstreamLost {
        call: CallKind,
    },
    /// `upstream: reply [lost]`: the oldest reply in flight is delivered (or lost).
    UpstreamReply {
        deliver: bool,
    },
    /// `payer: authenticate [att_001] ok|fail`.
    Payer {
        attempt: Option<AttemptId>,
        ok: bool,
    },
    /// `env: …`.
    Control(Control),
    /// `branch: S4:conflict`: the next request reaching that point takes this branch.
    Branch(Branch),
    /// `wait 15s`.
    Wait(Millis),
    /// `tick`: the clock jumps to the next deadline.
    Tick,
    /// `until quiet [upstream=DECISION]`.
    UntilQuiet {
        decision: AcquirerDecision,
    },
    Crash {
        server: usize,
    },
    Restart {
        server: usize,
    },
    /// A world choice named by its label (`deliver m3`, `acquire u1 approve`, …).
    Step(Choice),
    Expect(Expectation),
}

impl Action {
    /// A passive statement acts on what is in flight right now: the statement before it
    /// does not let the network settle (see `docs/scripts.md`).
    pub fn is_passive(&self) -> bool {
        matches!(self, Action::Net { .. } | Action::Step(_))
    }
}
