//! The rule catalogue: every normative statement of the contract, once.
//!
//! Each [`Rule`] has a stable ID (`SCOPE-02`), the contract section it comes
//! from, the acceptance-criterion number where the contract gives one
//! (`AC-014`), who must keep it (platform, merchant client, or wording shown
//! to a payer), one line of text and the contract's own words in the Chinese original
//! ([`Rule::zh`]). The model cites rules as `Rule::X` at the
//! line that enforces them, tests carry the rule ID in their name
//! (`scope_02_test_and_live_are_independent`), and properties list the rules
//! they check: one search for an ID finds all of them.
//!
//! The contract is "Idempotency, retries and status queries" (幂等、重试与查单), contract
//! v1.0.0, last updated 2026-10-14: the Chinese original is authoritative. A rule's
//! [`Rule::text`] restates it in English (after the English translation), its
//! [`Rule::zh`] quotes the original verbatim: the sentence, table row, list item or
//! reference-code line the English restates.

use serde::{Deserialize, Serialize};

mod unjudged;
pub use unjudged::Unjudged;

macro_rules! sections {
    ($( $variant:ident = $title:literal, $zh:literal; )*) => {
        /// The section of the contract page a rule comes from.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[serde(rename_all = "kebab-case")]
        pub enum Section {
            $( #[doc = concat!($zh, " · ", $title)] $variant, )*
        }

        impl Section {
            /// The section's heading in the English translation.
            pub fn title(self) -> &'static str {
                match self { $(Section::$variant => $title,)* }
            }

            /// The section's heading in the Chinese original, verbatim.
            pub fn title_zh(self) -> &'static str {
                match self { $(Section::$variant => $zh,)* }
            }
        }
    };
}

sections! {
    WhyIdempotency = "Why idempotency is needed", "为什么需要幂等";
    KeysRequired = "Which requests need an idempotency key", "哪些请求需要幂等键";
    PlatformRules = "The platform's idempotency rules", "平台的幂等规则";
    KeyGeneration = "Generating and storing idempotency keys", "生成与保存幂等键";
    Retention = "Retention period", "保留期";
    Scenarios = "Scenario examples", "场景示例";
    CardRetry = "Retrying with a different card", "换卡重试";
    Query = "How to query when the result is unknown", "结果未知时如何查单";
    DoNotRecharge = "Do not change the key and charge again on a guess", "不要换键猜测重扣";
    QueryFrequency = "Recommended query frequency", "查单频率建议";
    RateLimit = "429 and Retry-After", "429 与 Retry-After";
    ReferenceRetry = "Reference retry implementation", "重试参考实现";
}

/// Who must keep a rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Enforcer {
    /// The PayHub platform (implemented by `platform`, judged against the acquirer's ledger).
    Platform,
    /// The merchant's integration (implemented by the reference client of `client`).
    Client,
    /// Wording shown to a payer or an operator: documented, not machine-checked.
    Wording,
}

macro_rules! rules {
    ($( $variant:ident = $id:literal, $section:ident, $ac:expr, $enforcer:ident, $text:literal, $zh:literal; )*) => {
        /// A normative statement of the contract. See the module doc.
        /// Serialized, and read back, as its ID ([`Rule::id`], `GEN-06`): the one public name
        /// of a rule in every format.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        pub enum Rule {
            $(
                #[doc = concat!("`", $id, "`: ", $text, "\n\n", $zh)]
                #[serde(rename = $id)]
                $variant,
            )*
        }

        impl Rule {
            /// Every rule, in catalogue order.
            pub const ALL: &'static [Rule] = &[$(Rule::$variant),*];

            /// The stable ID, e.g. `SCOPE-02`.
            pub const fn id(self) -> &'static str {
                match self { $(Rule::$variant => $id,)* }
            }

            /// One line of text restating the contract, in English.
            pub const fn text(self) -> &'static str {
                match self { $(Rule::$variant => $text,)* }
            }

            /// The contract's words that [`Rule::text`] restates, quoted verbatim from the
            /// Chinese original (authoritative): a sentence, the shortest passage holding
            /// it, or a table row with its cells separated by spaces. A rule the original
            /// states only in its reference code quotes that code line (`RETRY-02`).
            pub const fn zh(self) -> &'static str {
                match self { $(Rule::$variant => $zh,)* }
            }

            /// The contract section it comes from.
            pub const fn section(self) -> Section {
                match self { $(Rule::$variant => Section::$section,)* }
            }

            /// The acceptance-criterion number, where the contract gives one.
            pub const fn ac(self) -> Option<&'static str> {
                match self { $(Rule::$variant => $ac,)* }
            }

            /// Who must keep the rule.
            pub const fn enforcer(self) -> Enforcer {
                match self { $(Rule::$variant => Enforcer::$enforcer,)* }
            }
        }
    };
}

rules! {
    // Why idempotency is needed
    OneBusinessEffect = "EFFECT-01", WhyIdempotency, None, Platform,
        "However many times one business submission is sent, it produces only one business effect: a retry never charges twice.",
        "幂等保证同一次业务提交无论发送多少次，只产生一次业务效果——重试不会扣两次款。";

    OneBilling = "EFFECT-02", Scenarios, Some("AC-014"), Platform,
        "The same key sent ten times: only one Payment, one charge, one billing (S6).",
        "平台行为：只有一个 Payment、一次扣款、一次计费";

    // Which requests need an idempotency key
    KeyRequiredCreatePayment = "KEY-01", KeysRequired, None, Platform,
        "POST /v1/payments requires an Idempotency-Key.",
        "创建支付 POST /v1/payments 必填";
    KeyRequiredConfirm = "KEY-02", KeysRequired, None, Platform,
        "POST /v1/payments/{payment_id}/confirm requires an Idempotency-Key.",
        "确认支付 POST /v1/payments/{payment_id}/confirm 必填";
    KeyRequiredCancel = "KEY-03", KeysRequired, None, Platform,
        "POST /v1/payments/{payment_id}/cancel requires an Idempotency-Key and has no request body.",
        "取消支付 POST /v1/payments/{payment_id}/cancel 必填（无请求体）";
    KeyRequiredCheckoutSession = "KEY-04", KeysRequired, None, Platform,
        "POST /v1/checkout/sessions requires an Idempotency-Key.",
        "创建收银会话 POST /v1/checkout/sessions 必填";
    KeyRequiredRefund = "KEY-05", KeysRequired, None, Platform,
        "POST /v1/refunds requires an Idempotency-Key.",
        "创建退款 POST /v1/refunds 必填";
    KeyNotRequiredQueries = "KEY-06", KeysRequired, None, Platform,
        "Query endpoints (GET …) do not require an Idempotency-Key.",
        "全部查询接口 GET … 不需要";
    KeyLength = "KEY-07", KeysRequired, None, Platform,
        "The Idempotency-Key header is 1–255 characters; a missing key gives 400 with error.field = Idempotency-Key.",
        "请求头 Idempotency-Key，1–255 个字符；缺失返回 400，error.field 为 Idempotency-Key。";
    UniqueOrderNo = "UNIQ-01", KeysRequired, None, Platform,
        "Create payment is unique per (merchant, environment, merchant_order_no), and this holds after the key expires.",
        "创建支付 POST /v1/payments 必填 (商户, 环境, merchant_order_no)";
    OneUnfinishedAttempt = "UNIQ-02", KeysRequired, None, Platform,
        "Confirm: a Payment has at most one unfinished attempt at any one time.",
        "确认支付 POST /v1/payments/{payment_id}/confirm 必填 每个 Payment 同时最多一个未结束尝试";
    CheckoutSameProcess = "UNIQ-03", KeysRequired, None, Platform,
        "Checkout sessions are associated with the same Payment and never produce a second Payment.",
        "创建收银会话 POST /v1/checkout/sessions 必填 关联同一 Payment，不产生第二个 Payment";
    UniqueRefundNo = "UNIQ-04", KeysRequired, None, Platform,
        "Create refund is unique per (merchant, environment, merchant_refund_no), and this holds after the key expires.",
        "创建退款 POST /v1/refunds 必填 (商户, 环境, merchant_refund_no)";

    // The platform's idempotency rules
    ScopeComponents = "SCOPE-01", PlatformRules, None, Platform,
        "The idempotency scope is merchant + environment + method + path + idempotency key.",
        "作用域是 商户 + 环境 + 方法 + 路径 + 幂等键";
    ScopeEnvironments = "SCOPE-02", PlatformRules, None, Platform,
        "The same key in test and in live does not interfere.",
        "同一个键在测试与生产互不影响";
    ScopeApiKeyRotation = "SCOPE-03", PlatformRules, None, Platform,
        "Rotating the API Key (same merchant and environment) does not change the idempotency scope.",
        "更换 API Key，但仍属同一商户和环境 不改变幂等作用域";
    ReplayReusesObject = "REPLAY-01", PlatformRules, Some("AC-014"), Platform,
        "Same scope and matching safety-relevant parameters: the original business object is reused and nothing executes a second time.",
        "相同商户、环境、操作路径及幂等键，安全业务参数一致 复用原业务对象，不产生第二次业务执行";
    ReplayLatestStatus200 = "REPLAY-02", PlatformRules, Some("AC-014"), Platform,
        "A replay returns the object's latest status with HTTP 200.",
        "返回对象最新状态（HTTP 200）";
    FirstExecution201 = "REPLAY-03", Scenarios, Some("AC-014"), Platform,
        "The first execution of a create answers 201 (S3, S6, S10, S13).",
        "POST /v1/payments Idempotency-Key: K → 201 pay_demo_001 POST /v1/payments Idempotency-Key: K → 200 pay_demo_001（第 2～10 次相同）";
    IdempotencyConflict = "CONFLICT-01", PlatformRules, Some("AC-016"), Platform,
        "Same key with conflicting safety-relevant parameters (amount, currency, order number …) gives 409 idempotency_conflict and leaves the original unchanged.",
        "同键但金额、币种、订单号等安全业务参数冲突 HTTP 409 idempotency_conflict";
    ConcurrentOneExecutes = "CONC-01", PlatformRules, Some("AC-015"), Platform,
        "Of concurrent submissions with the same key only one obtains the right to execute.",
        "只有一个请求取得执行权";
    ConcurrentWaitSameObject = "CONC-02", PlatformRules, Some("AC-015"), Platform,
        "The other concurrent requests wait for the execution to finish and return the same object.",
        "其余请求等待它完成后返回同一对象";
    InFlightRetryLater = "CONC-04", PlatformRules, Some("AC-015"), Client,
        "On an in-flight conflict (409 operation_in_progress) retry later with the same key.",
        "按返回对象处理；在途冲突稍后用同一个键重试";
    ConcurrentWaitTimeout = "CONC-03", PlatformRules, Some("AC-015"), Platform,
        "A concurrent request whose wait times out gets 409 operation_in_progress (S5: the platform may answer either).",
        "等待超时返回 409 operation_in_progress";
    RotationKeepsKey = "SCOPE-04", PlatformRules, None, Client,
        "During API key rotation keep retrying with the original idempotency key as usual.",
        "密钥轮换期间照常用原键重试";
    OrderNoNewKey = "ORDER-01", PlatformRules, Some("AC-017"), Platform,
        "A new key with an existing merchant_order_no creates no second Payment: the platform returns the existing object identifier or a conflict (order_no_conflict with related_resource_id).",
        "更换幂等键但商户订单号相同（创建支付） 业务唯一约束阻止创建第二个 Payment，返回已有对象标识或冲突";
    SafeParameters = "SAFE-01", PlatformRules, None, Platform,
        "Safety-relevant parameters are compared per endpoint: amount, currency, merchant order number, merchant refund number, associated payment id.",
        "“安全业务参数”包括金额、币种、商户订单号、商户退款号、关联支付号等，每个接口参与比较的字段列在接口页（如创建支付）。";
    CardNotCompared = "CARD-01", PlatformRules, Some("AC-018"), Platform,
        "Card information does not take part in the parameter comparison.",
        "卡信息不参与比较";
    CardNotStored = "CARD-02", PlatformRules, None, Platform,
        "Card information is not stored.",
        "卡信息不参与比较、也不会被保存";
    CardReplayNotCharged = "CARD-03", PlatformRules, Some("AC-018"), Platform,
        "A replay with the same key never charges newly supplied card information.",
        "同键重放不会用新传入的卡信息扣款。";
    RejectionsDoNotOccupyKey = "REJECT-01", PlatformRules, None, Platform,
        "Requests rejected with 400, 401, 403 or 422 do not use up the idempotency key; after correcting them, submit with a new key.",
        "被 400、401、403、422 拒绝的请求不占用幂等键，修正后用新键提交。";
    CheckoutNewSession = "CKO-01", PlatformRules, None, Platform,
        "A checkout session with a new key and the same order number, amount and currency is a new session for the same Payment, not a conflict.",
        "创建收银会话时换了新键但订单号、金额、币种一致，平台为同一个 Payment 生成新的收银会话（例如旧会话已过期），这不是冲突，也不会产生第二个 Payment。";

    // Generating and storing keys
    DeterministicKeys = "GEN-01", KeyGeneration, None, Client,
        "Keys are derived deterministically from the business (payment.create:ORDER:1, payment.confirm:ORDER:2, refund.create:REFUND:1).",
        "由业务确定性生成（推荐） payment.create:ORDER-DEMO-001:1；换卡第 2 次确认 payment.confirm:ORDER-DEMO-001:2；退款 refund.create:REFUND-DEMO-001:1";
    SequenceOnlyForNewSubmission = "GEN-02", KeyGeneration, None, Client,
        "The key's sequence number is incremented only for a new business submission (e.g. changing card).",
        "序号只在“新的业务提交”（如换卡）时加 1";
    NoSensitiveDataInKeys = "GEN-03", KeyGeneration, None, Client,
        "Keys must not contain sensitive information (email, name, card number).",
        "不能包含邮箱、姓名、卡号等敏感信息";
    RandomKeyPersistedFirst = "GEN-04", KeyGeneration, None, Client,
        "A random key is written to the database before sending and read back on retry, never regenerated.",
        "必须先写入数据库再发送；重试时从数据库读取，不能重新生成";
    OneKeyPerSubmission = "GEN-05", KeyGeneration, None, Client,
        "One business submission has one key; a key is used only for the same endpoint.",
        "一次业务提交对应一个键；同一个键只用于同一个接口";
    PersistBeforeSend = "GEN-06", KeyGeneration, None, Client,
        "The key is persisted with the order before the request is sent; after a crash the original key is read back and retried.",
        "先把键和订单一起持久化再发送，进程崩溃后从数据库取回原键重试。";

    // Retention
    RetentionSevenDays = "RET-01", Retention, None, Platform,
        "Idempotency records are retained online for 7 days.",
        "幂等记录在线保留 7 天。";
    RetentionOrderNoOutlives = "RET-02", Retention, None, Platform,
        "After a record expires, merchant order-number uniqueness stays in effect: the order is not treated as new business nor charged again.",
        "过期后，商户订单号与退款号的唯一保护继续有效：同一订单不会被当作新业务重复扣款。";
    RetentionRefundNoOutlives = "RET-03", Retention, None, Platform,
        "After a record expires, merchant refund-number uniqueness stays in effect.",
        "幂等记录超过保留期（7 天） 订单号与退款号的唯一保护继续有效，不会重新解释为新业务";

    // Scenarios without a rule of their own elsewhere
    FiveXxMayHaveExecuted = "UNKNOWN-01", Scenarios, Some("AC-069"), Platform,
        "After a 5xx the request may have been accepted: a retry with the same key returns the original object or executes once (S2).",
        "平台行为：可能已受理；重试得到原对象或执行一次";
    ConfirmWhileProcessing = "ATTEMPT-01", Scenarios, Some("AC-027"), Platform,
        "Confirm with a new key while the payment is still being processed never charges: S8 gives 409 payment_in_progress or the original status while processing; the card-retry section rejects it with 409 payment_in_progress while processing or requires_action (the two disagree for processing: A-S8-CARD-RETRY). What to do: wait for the result, or query.",
        "平台行为：409 payment_in_progress 或返回原状态，不新扣款";
    CardRetryAfterFailure = "ATTEMPT-02", CardRetry, Some("AC-026"), Platform,
        "A card retry is accepted only after status=failed (the previous attempt definitively failed).",
        "只在支付 status=failed（上一次尝试明确失败）之后发起。";
    CardRetryNewKey = "ATTEMPT-03", CardRetry, Some("AC-026"), Platform,
        "A card retry is a confirm with a new idempotency key and card information supplied again.",
        "用新的幂等键调用 POST/v1/payments/{payment_id}/confirm，由付款人重新提供卡信息。";
    CardRetryBeforeExpiry = "ATTEMPT-04", CardRetry, Some("AC-026"), Platform,
        "A card retry must come before expires_at.",
        "必须在 expires_at 之前";
    AttemptsMax = "ATTEMPT-05", CardRetry, Some("AC-026"), Platform,
        "A Payment has at most the maximum number of attempts (default 3).",
        "未超过最多尝试次数（默认 3 次）";
    RetryKeepsPaymentAndFee = "ATTEMPT-06", CardRetry, Some("AC-026"), Platform,
        "A new attempt keeps the original Payment and the fee-rate snapshot.",
        "新尝试沿用原 Payment 与当时的费率。";
    CardRetryOnlyAfterFailed = "ATTEMPT-07", CardRetry, Some("AC-026"), Client,
        "Initiate a card retry only after the payment has status=failed: never while it is processing or requires_action.",
        "想换卡必须等原尝试明确失败后用新键 confirm";
    RefundTimeoutNoSecondRefund = "REFUND-01", Scenarios, Some("AC-033"), Platform,
        "After a refund request times out the platform keeps verifying and never creates the upstream refund a second time.",
        "平台持续查证，不会自动重复创建上游退款";
    RefundReplaySameRefund = "REFUND-02", Scenarios, Some("AC-033"), Platform,
        "A refund retried with the same key returns the same refund (200).",
        "POST /v1/refunds Idempotency-Key: K {\"merchant_refund_no\":\"R-001\",…} → 200 ref_demo_001（同一笔退款）";
    RefundNoKept = "REFUND-04", Scenarios, Some("AC-033"), Client,
        "After a refund request times out, retry with K or query by merchant_refund_no; never change the refund number and apply again (S11).",
        "用 K 重试或按 merchant_refund_no 查询；不要换退款号重新申请";
    RefundNotBeyondCaptured = "REFUND-03", Scenarios, None, Platform,
        "Refunds of a Payment never add up to more than was captured (assumption A-REFUND-LIMIT: the contract names no limit).",
        "创建退款 POST /v1/refunds 必填 (商户, 环境, merchant_refund_no)";
    Cancel202KeepsStatus = "CANCEL-01", Scenarios, Some("AC-029"), Platform,
        "Cancel without evidence of a safe cancellation answers 202, keeps the original status and keeps verifying.",
        "平台行为：未取得安全取消的证据，保持原状态并继续查证";
    Cancel202NotCanceled = "CANCEL-02", Scenarios, Some("AC-029"), Client,
        "A 202 on cancel is not 'canceled': wait for payment.canceled or query.",
        "不要当作已取消；等 payment.canceled 或查询";

    // Query
    QueryById = "QUERY-01", Query, None, Platform,
        "GET /v1/payments/{payment_id} returns the Payment.",
        "有 Payment ID：GET/v1/payments/{payment_id}。";
    QueryByOrderNo = "QUERY-02", Query, None, Platform,
        "GET /v1/payments?merchant_order_no=… matches exactly and case-sensitively and returns at most one Payment.",
        "GET /v1/payments?merchant_order_no=...（精确匹配、区分大小写）。";
    QueryRefunds = "QUERY-03", Query, None, Platform,
        "Refunds are queried by GET /v1/refunds/{refund_id} or GET /v1/refunds?merchant_refund_no=… (and ?status=processing).",
        "退款：GET /v1/refunds/{refund_id}，或 GET /v1/refunds?merchant_refund_no=...。";
    QueryReadsKnownState = "QUERY-04", QueryFrequency, None, Platform,
        "A query reads only the status known to the platform and never triggers a query to the upstream.",
        "查询只读取平台当前已知的状态，不会触发向上游的查询";
    NotFoundMeansNeverCreated = "QUERY-05", Query, None, Platform,
        "No record by order number means the platform never created a Payment for it.",
        "查无记录（按订单号） — 平台没有为该订单号创建过 Payment";
    NotFoundRetryOriginalKey = "QUERY-06", Query, None, Client,
        "On 'no record found', retry the creation with the original idempotency key.",
        "用原幂等键重试创建（避免与仍在途的原请求冲突）";
    NeedsQuery = "RES-01", Query, None, Platform,
        "processing + needs_query: result unknown, the platform is verifying with the upstream using the original identifier.",
        "processing needs_query 结果未知，平台正用原标识向上游查证";
    ProcessingKnown = "RES-02", Query, None, Platform,
        "processing + known: submitted, being processed.",
        "processing known 已提交，正在处理";
    ManualReview = "RES-03", Query, None, Platform,
        "manual_review: the automatic query window was exceeded; the platform still queries the upstream every 24 hours and never judges the payment failed automatically.",
        "processing / requires_action manual_review 超过自动查询窗口，已转人工跟进；平台仍每 24 小时向上游查询一次，不会自动判失败";
    ManualReviewClient = "RES-04", Query, None, Client,
        "On manual_review keep the order pending confirmation and never charge again.",
        "订单保持“待确认”；不要重扣";
    RequiresAction = "RES-05", Query, None, Platform,
        "requires_action + known: the payer must complete authentication (next_action).",
        "requires_action known 需要付款人完成认证 引导付款人完成认证（next_action），或等待";
    TerminalStatuses = "RES-06", Query, None, Platform,
        "succeeded, failed (with failure.attempt_id of the latest attempt), canceled and expired are known statuses; failed lets the payer change card.",
        "succeeded known 支付成功 按 Payment ID 幂等履约 failed known 最近一次尝试明确失败（failure.attempt_id） 可让付款人换卡 canceled / expired known 已关闭";
    FulfilByPaymentId = "RES-07", Query, None, Client,
        "Fulfil idempotently by Payment ID.",
        "按 Payment ID 幂等履约";
    ExpiryLimitsNewOpsOnly = "EXPIRY-01", Query, None, Platform,
        "expires_at limits only new payment operations: a processing payment keeps being verified after it and may succeed.",
        "订单的有效期只限制新的付款操作，不否定已提交的支付：processing 的支付过了 expires_at 仍会继续查证，并可能成功。";

    // Do not re-charge on a guess
    UnknownResult = "UNKNOWN-02", DoNotRecharge, None, Platform,
        "A timeout, a 5xx other than 503, or a 202 means the result is unknown: the charge may already have been made.",
        "超时、5xx、202 都可能已经扣款";
    NeverSwitchKeyOnUnknown = "UNKNOWN-03", DoNotRecharge, None, Client,
        "When the result is unknown never change the idempotency key or the order number to charge again: retry with the same key or query.",
        "警告：结果未知时不要换幂等键或订单号重新扣款";
    ConflictIsDefect = "UNKNOWN-04", PlatformRules, Some("AC-016"), Client,
        "idempotency_conflict is an integration defect: never change the parameters and replay the original key.",
        "属于集成缺陷：修复键的生成逻辑；不要改参数后重放原键";
    OrderConflictQueryExisting = "UNKNOWN-05", PlatformRules, Some("AC-017"), Client,
        "On an order-number conflict query the existing object; never change the order number because of it.",
        "查询已有对象，不要为此换订单号";

    // Query frequency
    QuerySchedule = "SCHED-01", QueryFrequency, None, Client,
        "After a 202, a timeout or a 5xx query the payment at 10 s, 30 s, 2 min, 5 min, 15 min, 1 h, then every 4 h until 24 h, stopping at a terminal status or on its webhook.",
        "支付（processing、requires_action） 收到 202、超时或 5xx 后 10 秒、30 秒、2 分钟、5 分钟、15 分钟、1 小时；之后每 4 小时一次直到 24 小时 进入 succeeded / failed / canceled / expired，或收到对应 Webhook";
    QuerySpacing = "SCHED-02", QueryFrequency, None, Client,
        "Leave at least 10 seconds between two queries of the same object; do not poll concurrently in batches.",
        "同一对象两次查询间隔不少于 10 秒；不要并发批量轮询。";
    RefundNoPolling = "SCHED-03", QueryFrequency, None, Client,
        "Refunds (pending_review, processing) are not polled: rely on refund.* events and a daily GET /v1/refunds?status=processing.",
        "退款（pending_review、processing） 创建后 不建议轮询；依赖 refund.* 事件；每日对账时用 GET /v1/refunds?status=processing 补查";
    SettlementEvents = "SETTLE-01", QueryFrequency, None, Client,
        "Settlements and payouts: rely on settlement.* events; when needed, use the settlement and payout query endpoints.",
        "结算与打款 — 依赖 settlement.* 事件；需要时用结算、打款查询接口 —";
    WebhookPrimary = "WEBHOOK-01", QueryFrequency, None, Platform,
        "Webhooks are the primary channel and queries the fallback; each event carries a version.",
        "Webhook 是主通道，查询是兜底";
    LatestVersionWins = "WEBHOOK-02", QueryFrequency, None, Client,
        "When a webhook and a query disagree the latest version prevails.",
        "两者结果冲突时以最新 version 为准。";

    // 429, 503 and timeouts
    RateLimited = "RATE-01", RateLimit, None, Platform,
        "429 rate_limited: the request was not executed; Retry-After says how many seconds to wait.",
        "429 rate_limited：本次请求没有执行。";
    RateLimitPerMerchant = "RATE-02", RateLimit, None, Platform,
        "Switching key does not get around the merchant's overall limit.",
        "换 Key 不能绕过商户的总限额。";
    RetryAfterHonoured = "RATE-03", RateLimit, None, Client,
        "After 429 wait Retry-After seconds, then retry with the original idempotency key.",
        "等待 Retry-After 秒后用原幂等键重试。";
    ChannelPaused = "RATE-04", RateLimit, None, Platform,
        "503 temporarily_unavailable: the channel suspended new transactions; the request was not accepted and no Payment was produced; the reason is not stated.",
        "503 temporarily_unavailable：平台暂停了该通道的新交易，本次请求同样没有受理、没有产生 Payment";
    Only503NotAccepted = "RATE-05", RateLimit, None, Platform,
        "503 is the only 5xx that means 'not accepted'; other 5xx are 'result unknown'.",
        "它是唯一明确“未受理”的 5xx，其他 5xx 按结果未知处理。";
    SyncWait = "UPSTREAM-01", RateLimit, None, Platform,
        "The platform waits synchronously for the upstream for about 15 seconds and answers 202 beyond that.",
        "平台同步等待上游约 15 秒，超出返回 202";
    ClientTimeouts = "TIMEOUT-01", RateLimit, None, Client,
        "Client timeouts are at least 20 seconds for create and confirm and at least 10 seconds for queries.",
        "客户端超时：创建、确认支付不少于 20 秒（平台同步等待上游约 15 秒，超出返回 202）；查询不少于 10 秒。";
    PausedMessage = "WORDING-01", Scenarios, None, Wording,
        "On 503 show the payer 'Temporarily unable to pay, please try again later' (暂时无法支付，请稍后再试).",
        "向付款人显示“暂时无法支付，请稍后再试”";
    ConfirmingMessage = "WORDING-02", Query, None, Wording,
        "While the result is unknown show the payer 'Confirming the payment result' (正在确认支付结果).",
        "向付款人显示“正在确认支付结果”";
    ManualReviewSupport = "WORDING-03", Query, None, Wording,
        "If manual_review is unresolved after 24 hours the merchant may contact technical support with the payment number.",
        "超过 24 小时仍未确认可联系技术支持并提供支付号";

    // Reference retry implementation
    RetrySameKey = "RETRY-01", ReferenceRetry, None, Client,
        "Network errors, 429 and 5xx (503 included) are retried with the same idempotency key; every other response goes to the caller.",
        "网络错误、429、5xx（含 503 temporarily_unavailable）用同一个幂等键重试；其余响应直接返回给调用方处理";
    RetryBackoff = "RETRY-02", ReferenceRetry, None, Client,
        "Backoff before try n+1 is min(30 s, 1 s × 2^(n-1)) plus jitter below 250 ms; Retry-After on 429 replaces it.",
        "let waitMs = Math.min(30_000, 1000 * 2 ** (attempt - 1)) + Math.floor(Math.random() * 250);";
    RetryMaxAttempts = "RETRY-03", ReferenceRetry, None, Client,
        "At most 5 tries; then the result is unknown: mark the order confirming, query or wait for the webhook, and retry later only with the same key.",
        "仍无结果：标记订单\"正在确认\"，转入查询或等待 Webhook；以后再重试也只能用同一个键";
    QueryByOrderNoAfterCrash = "RETRY-04", ReferenceRetry, None, Client,
        "When no Payment ID was saved before a crash, query by merchant_order_no (exact match, case-sensitive).",
        "崩溃后没存下 Payment ID 时，按商户订单号查询（精确匹配、区分大小写）";
}

impl Rule {
    /// The rule ID as it appears in test names: `SCOPE-02` → `scope_02`.
    pub fn test_tag(self) -> String {
        self.id().to_ascii_lowercase().replace('-', "_")
    }

    /// Looks a rule up by its ID (`SCOPE-02`), case-insensitively.
    pub fn from_id(id: &str) -> Option<Rule> {
        Rule::ALL
            .iter()
            .copied()
            .find(|r| r.id().eq_ignore_ascii_case(id))
    }
}

impl std::fmt::Display for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.id())
    }
}

/// One catalogue entry as data, for `payhub-verify rules --format json`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RuleEntry {
    pub id: &'static str,
    pub section: &'static str,
    /// The section's heading in the Chinese original.
    pub section_zh: &'static str,
    pub ac: Option<&'static str>,
    pub enforcer: Enforcer,
    pub text: &'static str,
    /// The contract's words in the Chinese original ([`Rule::zh`]).
    pub zh: &'static str,
}

impl From<Rule> for RuleEntry {
    fn from(rule: Rule) -> Self {
        RuleEntry {
            id: rule.id(),
            section: rule.section().title(),
            section_zh: rule.section().title_zh(),
            ac: rule.ac(),
            enforcer: rule.enforcer(),
            text: rule.text(),
            zh: rule.zh(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn ids_are_unique_and_well_formed() {
        let mut seen = BTreeSet::new();
        for rule in Rule::ALL {
            assert!(seen.insert(rule.id()), "duplicate rule id {}", rule.id());
            let (prefix, number) = rule.id().split_once('-').expect("PREFIX-NN");
            assert!(prefix.chars().all(|c| c.is_ascii_uppercase()), "{rule}");
            assert!(
                number.len() == 2 && number.chars().all(|c| c.is_ascii_digit()),
                "{rule}"
            );
            assert!(!rule.text().is_empty());
            assert_eq!(Rule::from_id(rule.id()), Some(*rule));
        }
        assert!(
            Rule::ALL.len() >= 55,
            "catalogue has {} rules",
            Rule::ALL.len()
        );
        assert_eq!(Rule::from_id("NOPE-99"), None);
    }

    /// A CJK unified ideograph (the Chinese original's script).
    fn is_ideograph(c: char) -> bool {
        ('\u{4e00}'..='\u{9fff}').contains(&c)
    }

    /// Every rule quotes the Chinese original: a passage in Chinese, never the English
    /// again. The one rule the original states only in its reference code (the backoff
    /// formula) quotes that code line.
    #[test]
    fn every_rule_quotes_the_chinese_original() {
        for rule in Rule::ALL {
            let zh = rule.zh();
            assert_ne!(zh.trim(), "", "{rule}: no Chinese sentence");
            assert_ne!(
                zh,
                rule.text(),
                "{rule}: the Chinese sentence is the English one"
            );
            assert_eq!(zh, zh.trim(), "{rule}: surrounding whitespace");
            if *rule == Rule::RetryBackoff {
                assert!(zh.starts_with("let waitMs = "), "{rule}: {zh}");
            } else {
                assert!(zh.chars().any(is_ideograph), "{rule}: no Chinese in {zh:?}");
            }
        }
        for section in Rule::ALL.iter().map(|r| r.section()) {
            assert!(section.title_zh().chars().any(is_ideograph), "{section:?}");
        }
    }
}
