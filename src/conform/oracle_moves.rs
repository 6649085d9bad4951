//! The oracle's moves: the upstream's (which link choices a world offers and in what
//! place of the exploration, stray drops, deduplication of states), and the other
//! readings' (`readings.rs`): the moves a target's answer may show where the contract is
//! silent and the model took one reading, each a branch of the state that takes it (a
//! state keeps one reading per point).
//!
//! - A-RATE-SCOPE, A-PAUSE-SCOPE, A-REFUSAL-ORDER: a request the model's switch (rate
//!   limit, pause) refuses is delivered with the switch off, at once switched back on:
//!   a query served under a rate limit (POSTs only), a confirm or session served while
//!   paused (creates only), or a refusal of the request itself (4xx) before the switch.
//! - A-REFUSAL-ORDER: a request the model refuses (4xx) while a switch is on, answered
//!   429 or 503 by the target, is not executed (dropped).
//! - A-CANCEL: a cancel of a processing Payment refused with 409 `payment_in_progress`
//!   is not executed (the request is dropped, as one never sent).
//! - A-UNNAMED-FIELDS and A-KEY-LENGTH are decided where the request is sent
//!   ([`Oracle::send`]): the field left out, or the key refused with nothing executed.

use super::*;
use crate::conform::readings::{self, Reading, Taken};
use payhub_model::{ApiRequest, Endpoint, Method, PaymentStatus, UpstreamCall};
use payhub_sim::network::UpstreamMsg;

/// What kind of upstream move: its place in the exploration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum LinkMove {
    /// A charge on the slow card (a cancel of a card G charge): decided only after the
    /// synchronous wait, so the exploration places it (before or after the 202).
    SlowCharge,
    /// A charge: in a round of requests at once, when it is decided against the other
    /// requests' arrival is the race window, so the exploration places it.
    Charge,
    /// A refund sent upstream: its completion is asynchronous (A-REFUND-ASYNC), so the
    /// exploration places it at any point of the round, or leaves it for a later one:
    /// a target whose refund settles after 0 s, 5 ms or 3 s is explained alike.
    Refund,
    /// A cancel sent upstream: the acquirer's word on it may come within the synchronous
    /// wait (200 canceled) or after it (S12: 202, the status kept), so the exploration
    /// places it, for a target that is not strict.
    Cancel,
    /// Queries, replies: taken at once (they commute with what the
    /// round's requests can witness; the sandbox, too, drives them at once).
    Other,
}

impl LinkMove {
    /// `async_refunds`: a target the model does not describe exactly (not `strict`); the
    /// sandbox, like the model, settles a refund at once.
    pub(super) fn eager(self, concurrent: bool, async_refunds: bool) -> bool {
        match self {
            LinkMove::SlowCharge => false,
            LinkMove::Charge => !concurrent,
            LinkMove::Refund | LinkMove::Cancel => !async_refunds,
            LinkMove::Other => true,
        }
    }
}

/// The upstream's next moves: each call decided by its test card, each reply delivered,
/// but those on messages of `backlog` (the upstream's work from before the round, whose
/// progress the round's start already chose).
pub(super) fn link_moves(w: &World, backlog: &[MsgId]) -> Vec<(Choice, LinkMove)> {
    w.link
        .iter()
        .filter(|(msg, _)| !backlog.contains(msg))
        .map(|(msg, m)| {
            let kind = match m {
                _ if is_slow(w, m) => LinkMove::SlowCharge,
                UpstreamMsg::Call(UpstreamCall::Charge { .. }) => LinkMove::Charge,
                UpstreamMsg::Call(UpstreamCall::Refund { .. }) => LinkMove::Refund,
                UpstreamMsg::Call(UpstreamCall::CancelCharge { .. }) => LinkMove::Cancel,
                _ => LinkMove::Other,
            };
            (drive(w, msg, m), kind)
        })
        .collect()
}

/// Drops webhooks and answers to requests of earlier rounds (nobody reads them).
pub(super) fn drop_stray(o: &Oracle, st: &mut State, ours: &[RequestId]) -> Result<bool, String> {
    let stray = st.world.net.iter().filter(|(_, p)| match p {
        Payload::Webhook { .. } => true,
        Payload::Response { id, .. } => !ours.contains(id),
        Payload::Request { .. } => false,
    });
    let stray: Vec<MsgId> = stray.map(|(m, _)| m).collect();
    for msg in &stray {
        o.apply(st, Choice::Drop { msg: *msg })?;
    }
    Ok(!stray.is_empty())
}

pub(super) fn dedup(states: Vec<State>) -> Vec<State> {
    let mut seen = HashSet::new();
    let new = |s: &State| seen.insert((key_of(&s.world, &s.ids), super::branch_of(s)));
    states.into_iter().filter(new).collect()
}

/// A move of the exploration: choices applied at once, the request it delivers or
/// drops (and whether that ends it), the reading it takes.
pub(super) struct Move {
    pub choices: Vec<Choice>,
    pub marks: Option<(usize, bool)>,
    pub reading: Option<Reading>,
}

impl Move {
    pub(super) fn one(choice: Choice, marks: Option<(usize, bool)>) -> Move {
        Move {
            choices: vec![choice],
            marks,
            reading: None,
        }
    }

    /// Request `i` (message `msg`) dropped, executed nowhere, under `reading`.
    fn dropped(msg: MsgId, i: usize, reading: Reading) -> Move {
        let reading = Some(reading);
        Move {
            reading,
            ..Move::one(Choice::Drop { msg }, Some((i, true)))
        }
    }
}

/// Whether `payment` is processing in `w`.
fn processing(w: &World, endpoint: &Endpoint) -> bool {
    let Endpoint::CancelPayment { payment_id } = endpoint else {
        return false;
    };
    let payment = w.platform.payments().get(payment_id);
    payment.is_some_and(|p| p.status == PaymentStatus::Processing)
}

/// The reading a delivery in the model's own way takes, for a target that answered
/// 200 or 202 (a cancel of a processing Payment executed: A-CANCEL).
pub(super) fn delivered_reading(w: &World, request: &ApiRequest) -> Option<Reading> {
    processing(w, &request.endpoint).then_some(Reading::CancelAccepted)
}

/// The switches on in `w`: the choices turning them off, and back on.
fn switches(w: &World) -> (Vec<Choice>, Vec<Choice>) {
    let limited = (0..=8)
        .map(MerchantId)
        .filter(|m| w.platform.is_rate_limited(*m));
    let switch = |on: bool| {
        let limits = (limited.clone()).map(|merchant| Control::SetRateLimited { merchant, on });
        let pause = (w.platform.channel_paused()).then_some(Control::SetChannelPaused { on });
        limits.chain(pause).map(Choice::Control).collect()
    };
    (switch(false), switch(true))
}

impl Oracle {
    /// The moves of request `i` (message `msg`, request `id`) the model's own reading
    /// does not have, for the target's answer `obs` (`None`: its answer was lost, so a
    /// reading under which it executed is a branch too).
    pub(super) fn reading_moves(
        &self,
        w: &World,
        (i, msg, id): (usize, MsgId, RequestId),
        request: &ApiRequest,
        obs: Option<&Observed>,
    ) -> Vec<Move> {
        let mut out = Vec::new();
        let status = obs.map(|o| o.status);
        let code = obs.and_then(|o| o.body.pointer("/error/code").and_then(|c| c.as_str()));
        let theirs = code.map(|c| self.dialect.model_code(c));
        if processing(w, &request.endpoint)
            && status == Some(409)
            && theirs == Some("payment_in_progress")
        {
            out.push(Move::dropped(msg, i, Reading::CancelInProgress));
        }
        let (off, on) = switches(w);
        if off.is_empty() || w.platform.branch_point(w.now, request).is_some() {
            return out;
        }
        // What the model answers with its switches as they are.
        let mut trial = w.clone();
        let deliver = Choice::Deliver { msg, branch: None };
        if trial.apply(&self.config, &deliver, None).is_err() {
            return out;
        }
        let Some((_, answer)) = answer_in_flight(&trial, id) else {
            return out;
        };
        if status == Some(answer.status) {
            return out;
        }
        let switch_code = |code: &str| theirs == Some(code);
        let switched = (status == Some(429) && switch_code("rate_limited"))
            || (status == Some(503) && switch_code("temporarily_unavailable"));
        if switched && (400..500).contains(&answer.status) {
            // The switch answered before the request's own refusal: nothing executed
            // (the model's refusal executed nothing either).
            out.push(Move::dropped(msg, i, Reading::SwitchFirst));
            return out;
        }
        if !matches!(answer.status, 429 | 503) {
            return out;
        }
        let refusal = status.is_some_and(|s| (400..500).contains(&s) && s != 429);
        let new_transaction = matches!(
            request.endpoint,
            Endpoint::ConfirmPayment { .. } | Endpoint::CreateCheckoutSession { .. }
        );
        let mut taken = Vec::new();
        if answer.status == 429 && request.endpoint.method() == Method::Get {
            taken.push(Reading::LimitPostsOnly);
        }
        if answer.status == 503 && new_transaction {
            taken.push(Reading::PauseCreatesOnly);
        }
        if refusal {
            // The request's own refusal first (for a query or a confirm, its scope's
            // other reading explains it too: both are branches).
            taken.push(Reading::RefusalFirst);
        }
        // Off, delivered (each alternative of a branch point it reaches), on again.
        let mut unswitched = w.clone();
        if (off.iter()).any(|c| unswitched.apply(&self.config, c, None).is_err()) {
            return out;
        }
        let branches = self.branches(&unswitched, request);
        for reading in taken {
            for &branch in &branches {
                let deliver = Choice::Deliver { msg, branch };
                let choices = [&off[..], &[deliver][..], &on[..]].concat();
                out.push(Move {
                    choices,
                    marks: Some((i, false)),
                    reading: Some(reading),
                });
            }
        }
        out
    }

    /// The branches a delivery of `request` in `w` may take: each alternative of the
    /// branch point it reaches that the profile allows, or none.
    pub(super) fn branches(&self, w: &World, request: &ApiRequest) -> Vec<Option<Branch>> {
        match w.platform.branch_point(w.now, request) {
            None => vec![None],
            Some(point) => (point.alternatives().into_iter())
                .filter(|b| self.profile.branches.contains(b))
                .map(Some)
                .collect(),
        }
    }

    /// The request `s` (the `i`-th of its round) as state `st` reads the target's answer
    /// to it: a confirm carrying `amount` served as one without it (A-UNNAMED-FIELDS), or
    /// `None`, a non-ASCII key refused and nothing executed (A-KEY-LENGTH). Neither for
    /// a strict target (the sandbox), which answers as the model does.
    pub(super) fn as_read(
        &self,
        st: &mut State,
        i: usize,
        s: &Sent,
    ) -> Result<Option<Req>, String> {
        let mut req = s.req;
        if self.dialect.strict {
            return Ok(Some(req));
        }
        let answered = match &s.seen {
            Seen::Answer(o) => Some(o.status),
            _ => None,
        };
        if let case::Op::ConfirmWithAmount { order, card, .. } = req.op {
            let ignored =
                answered.map_or_else(|| self.took(st, Reading::FieldsIgnored), |s| s != 400);
            if ignored {
                self.take(st, Reading::FieldsIgnored, i)?;
                req.op = case::Op::Confirm { order, card };
            }
        }
        let refused =
            answered.map_or_else(|| self.took(st, Reading::KeyPrintableAscii), |s| s == 400);
        if matches!(req.key, case::KeyUse::Wide(_) | case::KeyUse::Accented(_)) && refused {
            self.take(st, Reading::KeyPrintableAscii, i)?;
            return Ok(None);
        }
        Ok(Some(req))
    }

    /// Takes `reading` in `st` as shown by request `request` of this round.
    pub(super) fn take(
        &self,
        st: &mut State,
        reading: Reading,
        request: usize,
    ) -> Result<(), String> {
        readings::take(
            &mut st.readings,
            Taken {
                reading,
                round: self.round_no,
                request,
            },
            &self.profile.pins,
        )
    }

    /// Whether `st` took `reading`, or the profile pins it.
    pub(super) fn took(&self, st: &State, reading: Reading) -> bool {
        st.readings.iter().any(|t| t.reading == reading)
            || self.profile.pins.get(&reading.point()) == Some(&reading)
    }
}

/// The readings that make a state's branch (every point but those judged per answer),
/// part of its identity.
pub(super) fn branch_of(st: &State) -> Vec<Reading> {
    use readings::Point::{RefusalOrder, UnnamedCodes};
    let branch = (st.readings.iter()).map(|t| t.reading);
    let mut v: Vec<Reading> = branch
        .filter(|r| !matches!(r.point(), UnnamedCodes | RefusalOrder))
        .collect();
    v.sort();
    v
}

/// The readings an answer the model gave in its own way shows (A-RATE-SCOPE,
/// A-PAUSE-SCOPE, A-UNNAMED-FIELDS, A-KEY-LENGTH).
pub(super) fn shown_by(req: &Req, response: &ApiResponse, obs: &Observed) -> Vec<Reading> {
    let mut v = Vec::new();
    let query = matches!(
        req.op,
        case::Op::GetPayment { .. }
            | case::Op::FindPayment { .. }
            | case::Op::FindPaymentOtherCase { .. }
            | case::Op::GetRefund { .. }
            | case::Op::FindRefund { .. }
    );
    if response.status == 429 && query {
        v.push(Reading::LimitEveryRequest);
    }
    let paused_op = matches!(
        req.op,
        case::Op::Confirm { .. } | case::Op::ConfirmWithAmount { .. } | case::Op::Session { .. }
    );
    if response.status == 503 && paused_op {
        v.push(Reading::PauseNewTransactions);
    }
    // A-UNNAMED-FIELDS: the model refuses a confirm's `amount` (400).
    if matches!(req.op, case::Op::ConfirmWithAmount { .. }) && response.status == 400 {
        v.push(Reading::FieldsRefused);
    }
    if matches!(req.key, case::KeyUse::Wide(_) | case::KeyUse::Accented(_)) && obs.status != 400 {
        v.push(Reading::KeyAnyCharacter);
    }
    v
}

/// The model's own reading at a point whose other reading [`compare::matches`] finds
/// by the answer's shape alone, shown when the target answered as the model: a 202
/// for an upstream that failed before charging (A-STATUS-CODES; a silent upstream's
/// 202 is UPSTREAM-01's, no reading), a session opened for a Payment no longer open
/// (A-CKO-ANY-STATUS).
pub(super) fn model_reading(world: &World, req: &Req, response: &ApiResponse) -> Option<Reading> {
    use crate::conform::case::Op;
    use crate::conform::profile::CardOutcome::Fail;
    let upstream_failed = matches!(
        req.op,
        Op::Create {
            card: Some(Fail),
            ..
        } | Op::Confirm { card: Fail, .. }
            | Op::ConfirmWithAmount { card: Fail, .. }
    );
    match &response.body {
        _ if response.status == 202 && upstream_failed => Some(Reading::UnknownAs202),
        ResponseBody::Session(s) => {
            let payment = world.platform.payments().get(&s.payment_id)?;
            let closed = payment.status.is_terminal() && payment.status != PaymentStatus::Failed;
            closed.then_some(Reading::SessionForClosed)
        }
        _ => None,
    }
}
