//! One server and its database driven entirely by hand: the test is the network, the
//! platform and the clock. For tests that feed responses the platform would rarely
//! give (a 500 after execution, a stale query) and pin exact times.

use payhub_model::api::{
    ApiError, ApiRequest, ApiResponse, ErrorCode, PaymentStatus, PaymentView, ResolutionStatus,
    ResponseBody,
};
use payhub_model::api_keys::M1_TEST;
use payhub_model::client::{
    ClientInput, ClientOutput, Command, Draw, Handle, MerchantDb, MerchantServer, Policy,
    ServerConfig,
};
use payhub_model::platform::{WebhookEvent, WebhookObject};
use payhub_model::{
    Card, Environment, EventId, MerchantId, Millis, PaymentId, ResourceId, Rule, Text,
};

/// A server, its database and a clock, stepped by hand.
#[derive(Clone, Debug)]
pub struct Solo {
    pub server: MerchantServer,
    pub db: MerchantDb,
    pub now: Millis,
    /// Every output so far.
    pub out: Vec<ClientOutput>,
    /// The draw of the next input.
    pub draw: Draw,
}

impl Solo {
    /// A server of merchant 1 (test) with `policy`, at time 0.
    pub fn new(policy: Policy) -> Solo {
        Solo {
            server: MerchantServer::new(ServerConfig::new(M1_TEST, policy)),
            db: MerchantDb::new(),
            now: Millis::ZERO,
            out: Vec::new(),
            draw: Draw::new(Millis::ZERO, 1),
        }
    }

    /// Moves the clock to `t` (never backwards).
    pub fn at(&mut self, t: Millis) -> &mut Solo {
        assert!(t >= self.now, "time goes forward: {t} < {}", self.now);
        self.now = t;
        self
    }

    /// Sets the jitter of the next inputs.
    pub fn jitter(&mut self, jitter: Millis) -> &mut Solo {
        self.draw.jitter = jitter;
        self
    }

    /// Steps the server with `input` at the current time; returns this step's outputs.
    /// Panics on a driver error.
    pub fn input(&mut self, input: ClientInput) -> Vec<ClientOutput> {
        let mut out = Vec::new();
        self.server
            .step(self.now, &mut self.db, input, &mut out)
            .unwrap_or_else(|e| panic!("step: {e}"));
        self.draw.entropy += 1;
        self.out.extend(out.iter().cloned());
        out
    }

    /// Steps `other`, another server of the merchant, against this database at the
    /// current time (several servers share one database).
    pub fn input_on(
        &mut self,
        other: &mut MerchantServer,
        input: ClientInput,
    ) -> Vec<ClientOutput> {
        let mut out = Vec::new();
        other
            .step(self.now, &mut self.db, input, &mut out)
            .unwrap_or_else(|e| panic!("step: {e}"));
        self.draw.entropy += 1;
        out
    }

    pub fn command(&mut self, command: Command) -> Vec<ClientOutput> {
        let draw = self.draw;
        self.input(ClientInput::Command { command, draw })
    }

    /// `PayOrder` of `order` for 10000 USD with card `card`.
    pub fn pay(&mut self, order: &str, card: char) -> Vec<ClientOutput> {
        self.command(Command::PayOrder {
            order: order.into(),
            amount: 10_000,
            currency: "USD".into(),
            card: Card(card),
        })
    }

    pub fn respond(&mut self, handle: Handle, response: ApiResponse) -> Vec<ClientOutput> {
        let draw = self.draw;
        self.input(ClientInput::Response {
            handle,
            response,
            draw,
        })
    }

    pub fn network_error(&mut self, handle: Handle) -> Vec<ClientOutput> {
        let draw = self.draw;
        self.input(ClientInput::NetworkError { handle, draw })
    }

    pub fn time_out(&mut self, handle: Handle) -> Vec<ClientOutput> {
        let draw = self.draw;
        self.input(ClientInput::Timeout { handle, draw })
    }

    pub fn webhook(&mut self, event: WebhookEvent) -> Vec<ClientOutput> {
        let draw = self.draw;
        self.input(ClientInput::Webhook { event, draw })
    }

    pub fn crash(&mut self) -> Vec<ClientOutput> {
        self.input(ClientInput::Crash)
    }

    pub fn restart(&mut self) -> Vec<ClientOutput> {
        let draw = self.draw;
        self.input(ClientInput::Restart { draw })
    }

    /// Moves the clock to the server's next timer and wakes it; returns the outputs.
    /// Panics if no timer is set.
    pub fn wake_next(&mut self) -> Vec<ClientOutput> {
        let at = self.server.poll_timeout().expect("a timer is set");
        self.at(at.max(self.now));
        self.input(ClientInput::Wake)
    }
}

/// The requests among `outputs`: (handle, request, timeout, rule).
pub fn sends(outputs: &[ClientOutput]) -> Vec<(Handle, ApiRequest, Millis, Rule)> {
    outputs
        .iter()
        .filter_map(|o| match o {
            ClientOutput::Send {
                handle,
                request,
                timeout,
                rule,
            } => Some((*handle, request.clone(), *timeout, *rule)),
            _ => None,
        })
        .collect()
}

/// The one request among `outputs`; panics unless there is exactly one.
pub fn only_send(outputs: &[ClientOutput]) -> (Handle, ApiRequest, Rule) {
    let all = sends(outputs);
    assert_eq!(all.len(), 1, "expected one send in {outputs:#?}");
    let (h, r, _, rule) = all.into_iter().next().expect("one");
    (h, r, rule)
}

/// A Payment of merchant 1 for 10000 USD.
pub fn payment(
    id: u32,
    order: &str,
    status: PaymentStatus,
    resolution: ResolutionStatus,
    version: u32,
) -> PaymentView {
    PaymentView {
        id: PaymentId(id),
        merchant_order_no: order.into(),
        amount: 10_000,
        currency: "USD".into(),
        status,
        resolution_status: resolution,
        attempt_count: 1,
        failure: None,
        next_action: status == PaymentStatus::RequiresAction,
        expires_at: Millis::hours(24),
        fee_rate_bps: 290,
        amount_refunded: 0,
        version,
    }
}

/// `status` with a Payment body.
pub fn with_payment(status: u16, view: PaymentView) -> ApiResponse {
    ApiResponse::ok(status, ResponseBody::Payment(view))
}

/// An error response with `code` (and `related_resource_id`).
pub fn error(code: ErrorCode, related: Option<ResourceId>) -> ApiResponse {
    let mut e = ApiError::new(code);
    e.related_resource_id = related;
    ApiResponse::error(e)
}

/// `429 Retry-After: seconds`.
pub fn rate_limited(seconds: u32) -> ApiResponse {
    let mut r = error(ErrorCode::RateLimited, None);
    r.retry_after_s = Some(seconds);
    r
}

/// `200 {"data":[…]}` of a query by order number.
pub fn listed(views: Vec<PaymentView>) -> ApiResponse {
    ApiResponse::ok(200, ResponseBody::Payments { data: views })
}

/// A `payment.<status>` webhook event for merchant 1 (test).
pub fn payment_event(id: u32, view: PaymentView) -> WebhookEvent {
    WebhookEvent {
        id: EventId(id),
        merchant: MerchantId(1),
        environment: Environment::Test,
        kind: Text::format(format_args!("payment.{}", view.status.as_str())),
        object: WebhookObject::Payment(view),
        delivery: 0,
    }
}
