//! Every place where the contract is silent or ambiguous and the model had to assume.
//!
//! Each [`Assumption`] names the contract sentence it fills in, what the model does, and
//! the parameter of [`crate::PlatformParams`] or [`crate::client::ClientParams`], or the
//! [`crate::Branch`], that carries it (if any), so that a reviewer can change the
//! assumption instead of the code. The platform's assumptions come first, then the
//! merchant client's (`A-CLIENT-…`). The model's code cites them by ID (`A-WAIT-TIMEOUT`)
//! at the decision point; a test fails if one is cited nowhere in `model/src` or if the
//! code cites an ID the catalogue does not have. The table of `model/ASSUMPTIONS.md` is
//! generated from this catalogue by `markdown_table` in its tests (which keep the two in step;
//! `PAYHUB_BLESS_ASSUMPTIONS=1 cargo test -p payhub-model assumptions` rewrites it).

use serde::Serialize;

crate::named! {
    fn as_str;
    /// Why the model had to decide.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
    #[serde(rename_all = "kebab-case")]
    pub enum Gap {
        /// The contract says nothing (a number, a code, an order of checks).
        Silent = "silent",
        /// The contract allows several behaviours ("A or B"): the checkers explore all.
        Alternatives = "alternatives",
        /// The contract's wording admits more than one reading.
        Ambiguous = "ambiguous",
        /// Two sentences of the contract say incompatible things: both readings are kept
        /// as a branch the checkers explore, and a client must handle both.
        Contradiction = "contradiction",
    }
}

macro_rules! assumptions {
    ($( $variant:ident = $id:literal, $gap:ident, $param:expr, $contract:literal, $taken:literal; )*) => {
        /// An assumption of the model. See the module doc.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
        pub enum Assumption {
            $(
                #[doc = concat!("`", $id, "`: ", $taken)]
                $variant,
            )*
        }

        impl Assumption {
            pub const ALL: &'static [Assumption] = &[$(Assumption::$variant),*];

            pub const fn id(self) -> &'static str {
                match self { $(Assumption::$variant => $id,)* }
            }
            pub const fn gap(self) -> Gap {
                match self { $(Assumption::$variant => Gap::$gap,)* }
            }
            /// The parameter or branch that carries it, if it can be changed without code.
            pub const fn parameter(self) -> Option<&'static str> {
                match self { $(Assumption::$variant => $param,)* }
            }
            /// What the contract says (or does not say), quoted or paraphrased.
            pub const fn contract(self) -> &'static str {
                match self { $(Assumption::$variant => $contract,)* }
            }
            /// What the model does.
            pub const fn taken(self) -> &'static str {
                match self { $(Assumption::$variant => $taken,)* }
            }
        }
    };
}

assumptions! {
    S4Branch = "A-S4-BRANCH", Alternatives, Some("branch: S4:conflict | S4:existing"),
        "S4 / ORDER-01: a new key with the same order number \"returns the existing object identifier or a conflict\".",
        "Both are modelled and explored: 409 order_no_conflict with related_resource_id, or 200 with the existing Payment.";
    S4Bind = "A-S4-BIND", Silent, None,
        "S4 does not say whether the new key is bound when the existing object is returned.",
        "On the S4 'existing object' branch the new key is bound to the existing Payment, so its replays return the same object.";
    S4Params = "A-S4-PARAMS", Silent, None,
        "S4 shows only the same order with the same parameters; a new key, the same order number and another amount is not discussed.",
        "A new key with a used order number and a different amount or currency always gets 409 order_no_conflict (no branch).";
    S5Branch = "A-S5-BRANCH", Contradiction, Some("branch: S5:wait | S5:in-progress"),
        "The rules table (CONC-02, CONC-03): \"只有一个请求取得执行权，其余请求等待它完成后返回同一对象；等待超时返回 409 operation_in_progress\" (only one request obtains the right to execute; the others wait for it to complete and return the same object; if the wait times out, 409 operation_in_progress): a 409 only after a wait that timed out. S5 (AC-015): \"平台行为：只有一个请求执行；另一个返回同一对象或在途冲突\" (only one request executes; the other returns the same object or an in-flight conflict) with the example \"200 pay_demo_001（或 409 operation_in_progress，稍后用 K 重试）\" (or 409 operation_in_progress, retry later with K), which names no wait.",
        "Both readings are the S5 branch the checkers explore: S5:wait (the table: wait for the executor, 200 with the same object, or 409 operation_in_progress when the wait of A-WAIT-TIMEOUT runs out) and S5:in-progress (S5's example read without the table's wait: 409 operation_in_progress at once). The second is not what the table says; it is kept because S5 allows it, and a client must handle a 409 that comes at once either way (A-CLIENT-INFLIGHT-409).";
    WaitTimeout = "A-WAIT-TIMEOUT", Silent, Some("platform concurrent_wait_timeout"),
        "CONC-03: \"if the wait times out, 409 operation_in_progress\" gives no length.",
        "A concurrent same-key request waits at most 10 s.";
    S8Branch = "A-S8-BRANCH", Alternatives, Some("branch: S8:payment-in-progress | S8:original-status"),
        "S8 / ATTEMPT-01: confirm with a new key while processing gives \"409 payment_in_progress or returns the original status\".",
        "Both are modelled: 409 payment_in_progress with related_resource_id, or 200 with the current Payment; neither creates an attempt.";
    S8CardRetry = "A-S8-CARD-RETRY", Contradiction, Some("branch: S8:payment-in-progress | S8:original-status"),
        "The contract contradicts itself. S8 (AC-027): \"平台行为：409 payment_in_progress 或返回原状态，不新扣款\" (409 payment_in_progress or returns the original status; no new charge), for a confirm with a new key while the payment is processing. The card-retry section (换卡重试): \"支付仍在处理（processing、requires_action）时用新键确认会被拒绝（409 payment_in_progress），不会产生新的扣款\" (confirming with a new key while the payment is still being processed (processing, requires_action) will be rejected (409 payment_in_progress), and no new charge will be made): rejected, no alternative.",
        "While processing both readings are kept as the S8 branch the checkers explore: 409 payment_in_progress (both sentences) or 200 with the original status (S8 only). While requires_action only the card-retry sentence speaks (S8 is about processing): 409 payment_in_progress, no branch. A client must handle both answers to a new-key confirm while processing; the reference client does (A-CLIENT-S8-WAIT).";
    S8NoBind = "A-S8-NOBIND", Silent, None,
        "S8 does not say whether the new key is used up; its advice is \"等待结果或查询\" (wait for the result, or query), not a retry.",
        "Neither S8 branch, nor the 409 while requires_action, binds the new key: nothing executed under it, so a later confirm with the same key, after the attempt ends, is judged afresh (a card retry after failed, 422 after succeeded).";
    ConflictsDoNotBind = "A-409-NOBIND", Silent, None,
        "Only 400, 401, 403 and 422 are said not to use up a key; 404, 405 and the 409s are not mentioned.",
        "No 404, 405 or 409 response binds a key. A key is bound only by an execution (its 201, 200 or 202) or by the 'existing object' answers of S4 (A-S4-BIND) and of a used refund number (A-REFUND-NO-BRANCH); the S8 'original status' answer and a cancel of a canceled Payment answer 200 and bind nothing. 429 and 503 execute nothing (RATE-01, RATE-04).";
    ErrorCodes = "A-ERROR-CODES", Silent, None,
        "The contract names idempotency_conflict, operation_in_progress, order_no_conflict, payment_in_progress, rate_limited, internal_error and temporarily_unavailable only.",
        "Other rejections use, by the model (conform judges a code the contract does not name by its status class; readings model_codes, own_codes): invalid_request (400, with field), authentication_failed (401), permission_denied (403), resource_missing (404), method_not_allowed (405), refund_no_conflict (409, with related_resource_id), unsupported_currency, payment_not_confirmable, payment_expired, attempts_exhausted, payment_not_cancelable, payment_not_refundable, refund_amount_exceeded (422).";
    KeyLength = "A-KEY-LENGTH", Ambiguous, Some("platform key_len_max"),
        "KEY-07: \"1–255 characters; if it is missing, 400 … error.field Idempotency-Key\" says nothing of an empty or too long key, nor what a character is.",
        "Length counts Unicode scalar values; an empty or 256-character key gets the same 400 as a missing one. The contract quotes no character set (\"请求头 Idempotency-Key，1–255 个字符\", Request header Idempotency-Key, 1–255 characters): Other readings (conform accepts each and names the one a platform took, `payhub-verify conform`'s silent points; a profile may pin one): any_character (the model's), or printable_ascii: a key outside printable ASCII refused with 400, nothing executed (a platform that also accepts such a key elsewhere counts in bytes, a KEY-07 breach).";
    StatusRequiresPaymentMethod = "A-STATUS-RPM", Silent, None,
        "The status table has no status for a Payment created by a checkout session before the payer pays.",
        "Such a Payment (and one created without a card) is requires_payment_method; the first confirm creates attempt 1.";
    CheckoutConflict = "A-CKO-CONFLICT", Silent, None,
        "CKO-01: \"创建收银会话时换了新键但订单号、金额、币种一致，平台为同一个 Payment 生成新的收银会话（例如旧会话已过期），这不是冲突，也不会产生第二个 Payment\" (a new key with the same order number, amount and currency: a new checkout session for the same Payment; not a conflict, no second Payment). It is not silent on that case; a new key with the same order number and another amount or currency is not discussed.",
        "A new session for a used order number with another amount or currency gets 409 order_no_conflict naming the existing Payment (as A-S4-PARAMS for create payment). The same order number, amount and currency is never a conflict (A-CKO-ANY-STATUS).";
    CheckoutAnyStatus = "A-CKO-ANY-STATUS", Ambiguous, Some("branch: cko-expired:new-session | cko-expired:payment-expired"),
        "CKO-01 says a new key with the same order number, amount and currency gets a new session for the same Payment and \"这不是冲突\" (this is not a conflict), with an expired old session as its example; what a new session means for a Payment that is processing, requires_action, succeeded, canceled or expired is not said.",
        "Whatever the Payment's status but expired, such a request gets 201 with a new session for the same Payment: never 409 order_no_conflict, never a second Payment, nothing charged. The session is only recorded (A-SESSION-TTL: the payer's page is not modelled); paying through it is a confirm, which the attempt rules answer (S8 while processing, 422 once succeeded or closed). A failed Payment gets a new session even with its attempts used up, or past expires_at while it is not yet expired (A-FAILED-AFTER-EXPIRY). For an expired Payment both readings are explored: 201 with a new session for it (CKO-01's own example is an expired old session), or 422 payment_expired, binding nothing, by EXPIRY-01's \"订单的有效期只限制新的付款操作\" (an order's validity period only limits new payment operations); a 422 is not the conflict (409) CKO-01 rules out.";
    PauseScope = "A-PAUSE-SCOPE", Ambiguous, None,
        "RATE-04: the channel \"suspended new transactions\".",
        "503 answers every create payment, confirm and checkout session whose key has no record yet, before the business checks, so a new key for a used order number (S4) or a confirm while processing (S8) gets 503 too; cancel, refunds, queries and every request whose key already has a record (replay, conflict, concurrent wait) are still served. \"503 temporarily_unavailable：平台暂停了该通道的新交易\" (the platform has suspended new transactions on that channel) does not say whether a confirm or a checkout session is a new transaction: Other readings (conform accepts each and names the one a platform took, `payhub-verify conform`'s silent points; a profile may pin one): new_transactions (the model's), or creates_only: confirms and sessions served while paused.";
    RateScope = "A-RATE-SCOPE", Ambiguous, None,
        "RATE-02: \"switching Key cannot get around the merchant's overall limit\" does not say which key (API key or idempotency key).",
        "The limit is per merchant, over every API key, environment, idempotency key and endpoint; it is checked right after authentication, so both readings hold. \"429 rate_limited：本次请求没有执行……换 Key 不能绕过商户的总限额\" (this request was not executed … switching Key cannot get around the merchant's overall limit) does not say which requests count: Other readings (conform accepts each and names the one a platform took, `payhub-verify conform`'s silent points; a profile may pin one): every_request (the model's), or posts_only: queries served while the merchant is limited.";
    QueryRetryAfter = "A-QUERY-RETRY-AFTER", Contradiction, None,
        "SCHED-02: \"同一对象两次查询间隔不少于 10 秒\" (leave at least 10 seconds between two queries of the same object); RATE-03: \"429 rate_limited：本次请求没有执行。等待 Retry-After 秒后用原幂等键重试\" (429 rate_limited: this request was not executed; wait Retry-After seconds, then retry). A query answered 429 with Retry-After: 2 is told to come back sooner than SCHED-02 allows.",
        "Both instructions are accepted when a client is judged: a query sent once the Retry-After of the previous query's 429 has passed follows RATE-03 and is not judged too soon after that refused query; every other two consecutive queries of one object, a refused one included, keep 10 s (SCHED-02). The reference client keeps 10 s between queries, a 429 included, which both allow.";
    RetryAfter = "A-RETRY-AFTER", Silent, Some("platform retry_after_s"),
        "S10 shows Retry-After: 2 as an example (\"429（Retry-After: 2）\"); of a 503 the contract says \"稍后用原幂等键重试\" (retry later with the original idempotency key) and names no header.",
        "Retry-After is 2 seconds (on a 429, what a platform may send instead is A-RETRY-AFTER-429). A 503 carries none; a platform's 503 with or without it is a reading (absent, the model's, or present).";
    RetryAfter429 = "A-RETRY-AFTER-429", Ambiguous, Some("platform retry_after_s"),
        "RATE-03: \"等待 Retry-After 秒后用原幂等键重试\" (wait Retry-After seconds, then retry with the original idempotency key) and S10's \"429（Retry-After: 2）\" name the header, in seconds, and no bound. The reference code reads it: \"const seconds = raw === null ? NaN : Number(raw); if (Number.isFinite(seconds) && seconds >= 0) waitMs = seconds * 1000;\" (no header, or a value that is not a number, keeps the backoff \"let waitMs = Math.min(30_000, 1000 * 2 ** (attempt - 1)) + Math.floor(Math.random() * 250);\"; any number of seconds from 0 replaces it).",
        "Four readings, each allowed, named as conform and check-log name them: seconds (the model's: a whole number of seconds from 1, S10's 2), zero (Retry-After: 0, retry at once: the code's seconds >= 0), absent (no header: the code's null, its backoff decides), http_date (an HTTP date, the header's other form in HTTP: Number() of a date is NaN, so the code keeps its backoff). The platform parameter retry_after_s takes seconds, 0 or absent (`use platform retry_after=absent`); the model has no calendar, so an HTTP date reaches its client as absent does. A value that is neither seconds nor an HTTP date is refused by conform (it is not \"Retry-After 秒\"). The reference client waits the seconds, 0 included, and otherwise its backoff (RETRY-02).";
    SyncWaitAbout = "A-SYNC-WAIT-ABOUT", Ambiguous, Some("contract SYNC_WAIT_TOLERANCE (the judge's; the platform's wait is platform sync_wait)"),
        "UPSTREAM-01 / TIMEOUT-01: \"平台同步等待上游约 15 秒，超出返回 202\" (the platform waits synchronously for the upstream for about 15 seconds, and returns 202 beyond that), next to \"客户端超时：创建、确认支付不少于 20 秒\" (client timeouts: at least 20 seconds for creating and confirming payments) and the reference code's \"AbortSignal.timeout(20_000) // 平台同步等待约 15 秒，超时设长一些\" (the platform waits synchronously for about 15 seconds; set the timeout somewhat longer). \"约\" (about) gives no bound.",
        "The platform waits 15 s (platform sync_wait). A 202 told because the upstream had not answered within the wait is judged to come within 3 s of 15 s (12 s to 18 s after the request reached the platform: a tolerance of 3 s), so never at once and never at or past the client's 20 s, when the client has given up and the 202 reaches nobody. A 202 for an upstream that answered with an error (A-STATUS-CODES) is not a wait that ran out, and comes when the error does.";
    ManualReviewEnd = "A-MANUAL-REVIEW-END", Silent, Some("platform manual_review_until"),
        "RES-03: \"超过自动查询窗口，已转人工跟进；平台仍每 24 小时向上游查询一次，不会自动判失败\" (the automatic query window has been exceeded and it has been passed to manual follow-up; the platform still queries the upstream once every 24 hours and will not automatically judge it failed) names no end of the daily query; WORDING-03: \"超过 24 小时仍未确认可联系技术支持\" (if still not confirmed after more than 24 hours, you may contact technical support) is the merchant's way out, not the platform's.",
        "Two readings. never (the model's default): the daily re-query goes on as long as the Payment is unresolved (a Payment in manual_review 60 days later is queried on day 60). until a bound: the parameter manual_review_until (a duration after the charge was sent; `use manual_review_until=30d`) ends the re-queries of a Payment's attempt there; the Payment stays in manual_review (never judged failed, RES-03), and only manual follow-up resolves it.";
    NotFoundInFlight = "A-NOT-FOUND-IN-FLIGHT", Contradiction, None,
        "QUERY-05 / QUERY-06, the status table: \"查无记录（按订单号） — 平台没有为该订单号创建过 Payment 用原幂等键重试创建（避免与仍在途的原请求冲突）\" (no record found by order number: the platform has never created a Payment for this order number; retry the creation with the original idempotency key, to avoid conflicting with an original request that is still in flight). The reference code's comment: \"null 表示平台未创建过该订单的支付\" (null means the platform has never created a payment for this order). The first admits a request still in flight that may yet create one; the second reads \"not found\" as final.",
        "The model takes the status table's reading: \"not found\" is what the platform has created so far, never a promise: a create still in the network may execute after the lookup (the platform answers it as a first execution), which is why the reference client re-creates under the original key (QUERY-06) and never under a new one; a client that reads null as final and closes the order, or re-creates under a new key, is judged by client-creates-an-order-under-one-key and client-never-charges-an-order-twice.";
    ConfirmRetention = "A-CONFIRM-RETENTION", Ambiguous, Some("branch: confirm-past-retention:new-attempt | confirm-past-retention:not-new-business"),
        "The rules table: \"幂等记录超过保留期（7 天） 订单号与退款号的唯一保护继续有效，不会重新解释为新业务\" (idempotency record past its retention period (7 days): uniqueness protection for order numbers and refund numbers remains in effect; will not be reinterpreted as new business); the translation notes the original omits the subject of \"will not be reinterpreted as new business\". The retention section: \"同一订单不会被当作新业务重复扣款\" (the same order will not be treated as new business and charged a second time). A confirm's key has no uniqueness constraint beyond \"每个 Payment 同时最多一个未结束尝试\" (at most one unfinished attempt per Payment).",
        "Two readings, both explored as a branch (the point RET-01: a confirm key past its retention that would start a new attempt; the checker's preset confirm-past-retention, scripts' `branch: confirm-past-retention:new-attempt` or `:not-new-business`). new-attempt (numbers only, the first): the subject is the order and refund numbers; the replay is judged afresh, so after a failed attempt and before expires_at it is a new attempt that charges the card again (script F01b: no property is violated; with the 24-hour expires_at the replay is refused before the branch point, F01). not-new-business (any business): nothing the merchant submitted is reinterpreted as new business after retention: the replay is answered 200 with the Payment as it stands, no attempt, no charge, the key left unbound (script F01c). The property confirm-past-retention-kept-to-its-reading judges the reading a platform takes: a replay answered at once as not new business that charges is flagged.";
    AutoWindow = "A-AUTO-WINDOW", Silent, Some("platform auto_query_window"),
        "RES-03: \"the automatic query window has been exceeded\" gives no length.",
        "The window is 1 hour from when the charge (or the refund) was sent upstream; the first verification after it sets manual_review, and the upstream is then queried every 24 hours.";
    VerifyInterval = "A-VERIFY-INTERVAL", Silent, Some("platform verify_interval"),
        "RES-01: the platform \"is verifying with the upstream\" — how often is not said.",
        "The platform queries the upstream every minute while a result is unknown (and while requires_action; while a cancel is pending it re-sends the cancel instead). A refund is first queried 15 s after it was sent.";
    ExpiresAt = "A-EXPIRES-AT", Silent, Some("platform payment_ttl"),
        "ATTEMPT-04 and EXPIRY-01 use expires_at without giving its length.",
        "expires_at is 24 hours after the Payment is created.";
    SessionTtl = "A-SESSION-TTL", Silent, Some("platform session_ttl"),
        "CKO-01 mentions an old session that \"has already expired\" without a length.",
        "A checkout session's expires_at is 30 minutes after it is created. The model only records it: the payer's page is not modelled and nothing happens when a session expires.";
    FeeSnapshot = "A-FEE-SNAPSHOT", Ambiguous, Some("platform fee_rate_bps"),
        "ATTEMPT-06: \"keeps … the fee rate of that time\" does not say which time.",
        "The fee rate is snapshotted when the Payment is created and kept by every attempt.";
    RefundLimit = "A-REFUND-LIMIT", Silent, None,
        "The contract names no refund limit.",
        "Pending-review, processing and succeeded refunds of a Payment together never exceed its amount (422 refund_amount_exceeded).";
    RefundReview = "A-REFUND-REVIEW", Silent, Some("platform refund_review_from, platform refund_review_time, platform refund_review_rejects_from"),
        "SCHED-03 lists refund statuses \"退款（pending_review、processing）… 进入终态\" (refunds (pending_review, processing) … until a final state); nothing says what puts a refund in pending_review or what moves it out.",
        "A refund of at least refund_review_from (default: none; the simulation sweep reviews its refunds of 4000, the checker's preset refund-review those of 3000 and more) answers 201 pending_review and is not sent upstream; refund_review_time (default 1 hour) later the review ends. Approved: the refund becomes processing (a new version, refund.processing), is sent upstream once and verified like any other, its automatic query window counting from then. Rejected (an amount of at least refund_review_rejects_from; default: none, the preset refund-review rejects 5000 and more): the refund ends failed, the final status the contract's refund statuses leave for it (a new version, refund.failed), is never sent upstream and frees its amount; refund-rejected-in-review-is-never-sent judges it. Its amount counts toward the limit from creation until then (A-REFUND-LIMIT).";
    RefundReconcile = "A-REFUND-RECONCILE", Silent, None,
        "SCHED-03 recommends \"每日对账时用 GET /v1/refunds?status=processing 补查\" (during daily reconciliation, use GET /v1/refunds?status=processing as a supplementary check) for refunds that are pending_review or processing; the query it names never lists a pending_review refund.",
        "GET /v1/refunds?status=processing lists processing refunds only. The reference client's daily reconciliation also queries, by id, every refund it knows that is not final and was not listed (A-CLIENT-REFUND-LOOKUP), so a pending_review refund whose events were missed is still caught up; a client that relies on the list alone never sees it.";
    RefundNoBranch = "A-REFUND-NO-BRANCH", Alternatives, Some("branch: refund-no:conflict | refund-no:existing"),
        "UNIQ-04 and the retention row: \"订单号与退款号的唯一保护继续有效，不会重新解释为新业务 | 无需特殊处理\" (uniqueness protection for order numbers and refund numbers remains in effect; will not be reinterpreted as new business | no special handling needed). No answer is given for a used refund number, whether under a new key or under the original key once its record has expired; for order numbers S4 gives \"返回已有对象标识或冲突\" (returns the existing object identifier or a conflict).",
        "By S4's reading, a used refund number with the same Payment and amount is a branch point the checkers explore: 409 refund_no_conflict with related_resource_id (the code is A-ERROR-CODES), or 200 with the existing Refund, the key then bound to it as on the S4 'existing object' branch (A-S4-BIND). Either way no second refund is created. The reference client adopts the named Refund on the 409 and applies it on the 200, so 'no special handling' holds for it on both.";
    RefundNoParams = "A-REFUND-NO-PARAMS", Silent, None,
        "A used refund number with another Payment or amount under a new key is not discussed.",
        "It always gets 409 refund_no_conflict naming the existing Refund (no branch), as A-S4-PARAMS for order numbers.";
    UnnamedFields = "A-UNNAMED-FIELDS", Silent, None,
        "Each endpoint page lists the fields its body takes (\"每个接口参与比较的字段列在接口页\", the fields each endpoint compares are listed on its page); what a field no page names does (a confirm carrying amount) is not said. ATTEMPT-06 says only that \"新的尝试保留原 Payment\" (the new attempt keeps the original Payment).",
        "A body field the endpoint does not name is refused: 400 invalid_request naming the body. Other readings (conform accepts each and names the one a platform took, `payhub-verify conform`'s silent points; a profile may pin one): refused (the model's), or ignored: the request served as if the field were absent (the Payment's amount unchanged either way).";
    RefusalOrder = "A-REFUSAL-ORDER", Silent, None,
        "No order of checks is given when a rate limit (\"429 rate_limited：本次请求没有执行\") or a paused channel (\"503 temporarily_unavailable……本次请求同样没有受理\") and a refusal of the request itself (a missing Idempotency-Key: \"缺失返回 400\") apply at once.",
        "The rate limit is checked right after authentication and a read-only key's 403, before every other refusal; the pause after the key and body are read, before the business checks (A-PAUSE-SCOPE). Other readings (conform accepts each and names the one a platform took, `payhub-verify conform`'s silent points; a profile may pin one): per answer, switch_first (the 429 or 503, nothing executed), refusal_first (the request's own 4xx), or pause_before_lookup (503 where the Payment does not exist).";
    RetentionStart = "A-RETENTION-START", Ambiguous, Some("platform retention"),
        "RET-01: \"幂等记录在线保留 7 天\" (idempotency records are retained online for 7 days) does not say from when, nor whether a replay extends it.",
        "7 days from the record's creation (the first request that executed under the key), whenever its execution finished (a 202 that resolves later included); a replay reads the record and does not extend it.";
    SafeFields = "A-SAFE-FIELDS", Silent, None,
        "SAFE-01: \"每个接口参与比较的字段列在接口页（如创建支付）\" (the fields that take part in the comparison for each endpoint are listed on that endpoint's page, e.g. Create payment); those pages are not part of this contract, which names only \"金额、币种、商户订单号、商户退款号、关联支付号等\" (amount, currency, merchant order number, merchant refund number, associated payment number, etc.).",
        "Compared per endpoint: create payment and checkout session: merchant_order_no, amount, currency; refund: payment_id, merchant_refund_no, amount; confirm and cancel: nothing but the path (the payment id), so a confirm replayed with another card is the same request (CARD-01). Card data is never compared.";
    CardNotStored = "A-CARD-NOT-STORED", Ambiguous, None,
        "CARD-02: \"卡信息不参与比较、也不会被保存\" (card information does not take part in the comparison and is not stored either) does not say whether \"not stored\" is about the idempotency record only or the platform as a whole.",
        "The whole platform: a card lives only in the request until the upstream call that uses it is sent; no record, Payment or attempt keeps it, so every confirm (a card retry included) must carry the card again (400 card otherwise, ATTEMPT-03).";
    Retryable = "A-RETRYABLE", Silent, None,
        "error.retryable appears only in S2 (internal_error, \"retryable\":true) and S13 (temporarily_unavailable, \"retryable\":true); the S8 example shows payment_in_progress with code and related_resource_id only, and no other code's flag is given.",
        "retryable is true for operation_in_progress (S5: \"在途冲突稍后用同一个键重试\", retry later with the same key), rate_limited, internal_error and temporarily_unavailable, false for every other code, payment_in_progress included: S8 says \"等待结果或查询\" (wait for the result, or query) and the card-retry section \"用新键确认会被拒绝（409 payment_in_progress）\" (confirming with a new key will be rejected), not a retry (A-CLIENT-S8-WAIT). It was true for payment_in_progress before. The reference client decides by status and code, never by the flag.";
    ExpiryStatuses = "A-EXPIRY-STATUSES", Ambiguous, None,
        "EXPIRY-01: \"订单的有效期只限制新的付款操作，不否定已提交的支付：processing 的支付过了 expires_at 仍会继续查证，并可能成功\" (an order's validity period only limits new payment operations; it does not negate payments already submitted: a processing payment … after expires_at … may succeed) names processing only; the status table lists expired as closed, without saying which Payments become expired.",
        "At expires_at a requires_payment_method or failed Payment becomes expired (payment.expired); a processing or requires_action one is left as it is, and a requires_action payer who authenticates after expires_at can still succeed (the charge was submitted before it). A confirm of an expired Payment gets 422 payment_expired; a new checkout session of it gets 201 with a new session for the same Payment, or 422 payment_expired: both are explored (A-CKO-ANY-STATUS).";
    RefundAsync = "A-REFUND-ASYNC", Silent, None,
        "The 15-second synchronous wait is stated for create and confirm; S11 only says the platform keeps verifying.",
        "A refund answers 201 processing at once; an unknown or not-found refund stays processing (needs_query, later manual_review) and is never sent again.";
    UpstreamVoid = "A-UPSTREAM-VOID", Silent, None,
        "The upstream protocol is not part of the contract.",
        "A query for a charge the acquirer never saw voids that reference: the attempt fails as not received, and a late charge under it is declined.";
    CancelOutcomes = "A-CANCEL", Silent, None,
        "S12 covers a cancel the upstream could not confirm (202); other cancels are not described.",
        "Cancel of failed or requires_payment_method cancels at once (200); of succeeded or expired gets 422 payment_not_cancelable; of canceled returns it (200, binding no key); of processing or requires_action sends a cancel upstream: 200 canceled once it is confirmed, 200 succeeded if the upstream says the charge was captured, else 202 (S12). An attempt that fails while a cancel is pending ends canceled. A cancel of a processing Payment is not described (S12: \"对 requires_action 的支付请求取消，上游未能确认 → 202\", a cancel of a requires_action payment the upstream could not confirm → 202): Other readings (conform accepts each and names the one a platform took, `payhub-verify conform`'s silent points; a profile may pin one): accepted (the model's: 200 or 202), or payment_in_progress: 409, nothing executed, binding nothing (as the card-retry section's \"支付仍在处理（processing、requires_action）时……会被拒绝（409 payment_in_progress）\" does for a confirm).";
    WebhookRedelivery = "A-WEBHOOK-REDELIVERY", Silent, Some("platform webhook_redeliveries_max"),
        "WEBHOOK-01 makes webhooks the primary channel but says nothing of delivery guarantees.",
        "An event not acknowledged is re-delivered up to 3 times, 1, 2 and 4 minutes apart (1, 3 and 7 minutes after its first delivery).";
    Versions = "A-VERSION", Silent, None,
        "WEBHOOK-02: \"the latest version prevails\" does not define version.",
        "An object is created at version 1 without an event. Every later change of its status, resolution_status or failure increments version by one and emits one webhook event carrying the new snapshot; a Payment's amount_refunded changing (a refund created or failed) does too, with a payment.<status> event, so a client that applies Payment events by version never stays behind, unless it misses every delivery of one (A-WEBHOOK-BLACKOUT).";
    FirstStatusCodes = "A-STATUS-CODES", Silent, None,
        "The scenarios show 201 for a first create and 200 for a confirm (S9) but no code for a first cancel, session or refund.",
        "First executions answer 201 (create payment, checkout session, refund) or 200 (confirm, cancel) with the object, or 202 when the upstream gives no definite answer: none within the synchronous wait, an upstream error, or, for a cancel, a charge still awaiting authentication.";
    FailedAfterExpiry = "A-FAILED-AFTER-EXPIRY", Silent, None,
        "EXPIRY-01 says a processing payment may still succeed after expires_at, not what happens if it fails.",
        "It becomes failed (with failure.attempt_id) and is never marked expired; a confirm then gets 422 payment_expired.";
    ReplayAfter202 = "A-REPLAY-AFTER-202", Ambiguous, None,
        "REPLAY-02, the rules table: \"复用原业务对象，不产生第二次业务执行；返回对象最新状态（HTTP 200）\" (reuses the original business object; no second execution; returns the object's latest status (HTTP 200)), for every replay. UNKNOWN-02: \"超时、5xx、202 都可能已经扣款\" (with a timeout, a 5xx or a 202, the charge may already have been made): 202 is the \"result unknown\" signal. Nothing says what the replay of a request whose first answer was 202 gets while the result is still unknown.",
        "200 with the latest state, as the table says for every replay: the replay of a create, confirm or cancel first answered 202 answers 200 processing (or requires_action) while the result is unknown, never 202 again. No branch: the table names the code, and a second 202 is no reading of it. So a 200 is not \"final\": a client judges a replay's answer by the object's status. The reference client does: a create or confirm answered 200 processing is queried on SCHED-01, and a cancel answered 200 with the Payment still processing or requires_action is not canceled (CANCEL-02) and is queried as after a 202 (before, it took that 200 as final and never queried: its cancel's 202 lost, the order stayed behind its canceled Payment).";
    ReplaySameOrLatest = "A-REPLAY-SAME-OR-LATEST", Ambiguous, None,
        "S6 (AC-014): \"POST /v1/payments Idempotency-Key: K → 200 pay_demo_001（第 2～10 次相同）\" (the same for the 2nd～10th times); S7 (AC-018): \"200 原操作的结果（卡 B 不会被扣款）\" (200 result of the original operation; card B will not be charged); the rules table (REPLAY-02): \"返回对象最新状态（HTTP 200）\" (returns the object's latest status). \"The same\" and \"the result of the original operation\" can be read as a frozen copy of the first answer, or as the same object in its latest status.",
        "The same object in its latest status, every time: a replay answers 200 with the Payment as the platform holds it when the replay arrives, so the 2nd to 10th answers of S6 are the same while nothing happens between them and show the new status once something does (the upstream answered, a refund, a cancel). No branch: the table states the latest status in so many words and S6 and S7 agree with it when nothing changed (S6's ten requests come back to back; S7's \"result of the original operation\" is what its object now shows); a frozen first answer would contradict the table. A client must not expect a replay to repeat the first answer's status.";
    ConflictInFlight = "A-CONFLICT-IN-FLIGHT", Ambiguous, None,
        "The rules table has two rows that both fit a same-key request with other safety-relevant parameters sent while the first request still executes: CONFLICT-01, \"同键但金额、币种、订单号等安全业务参数冲突 | HTTP 409 idempotency_conflict\" (same key, but safety-relevant business parameters such as amount, currency or order number conflict: 409 idempotency_conflict), and CONC-02, CONC-03, \"同键并发提交 | 只有一个请求取得执行权，其余请求等待它完成后返回同一对象；等待超时返回 409 operation_in_progress\" (concurrent submissions with the same key: only one request obtains the right to execute; the others wait for it to complete and then return the same object; if the wait times out, 409 operation_in_progress). Neither row says which comes first; S3 and S5 each show only their own case (S3's second request comes after the first one's 201).",
        "The parameters are compared first, in flight or not: such a request gets 409 idempotency_conflict at once, never waits and never gets operation_in_progress; the executing request is unaffected (CONFLICT-01). No branch: waiting would end in \"the same object\" of other parameters, which CONFLICT-01 forbids, and operation_in_progress says \"在途冲突稍后用同一个键重试\" (retry later with the same key), the replay of changed parameters under the original key that the conflict row calls an integration defect. The opposite order is the planted bug in_flight_hides_conflict.";
    CancelPendingStatus = "A-CANCEL-PENDING-STATUS", Silent, None,
        "S12 (AC-029): \"未取得安全取消的证据，保持原状态并继续查证\" (no evidence of a safe cancellation was obtained; keeps the original status and continues verifying), example \"202 {\"status\":\"requires_action\",…}\". The status table (RES-05) has no row for a Payment whose cancel is being verified: its requires_action row is \"requires_action | known | 需要付款人完成认证 | 引导付款人完成认证（next_action），或等待\" (the payer needs to complete authentication: guide the payer to complete authentication, or wait), and no field of the Payment is said to show a cancel in progress.",
        "While its cancel is verified a Payment is shown exactly as before the cancel: requires_action with resolution_status known and its next_action (or processing with its own resolution_status), version unchanged by the 202; nothing in the object says a cancel is pending. If the payer still completes authentication the charge may go through: the upstream then answers the cancel with the capture and the Payment ends succeeded, not canceled (A-CANCEL). A client must not read requires_action/known during its own pending cancel as a payer still to be guided: the reference client keeps the order as the Payment shows it (awaiting the payer), its cancel unanswered, and waits for payment.canceled or queries (CANCEL-02); whether a payer page still offers authentication then is the integrator's choice, not modelled.";

    // The merchant client (`client/`).
    ClientSchedAnchor = "A-CLIENT-SCHED-ANCHOR", Ambiguous, None,
        "SCHED-01 counts query times \"from first acceptance\", which a client cannot observe, and starts them \"after receiving a 202, a timeout or a 5xx\".",
        "Query times count from when the client first learned the payment is not final: a 202; a response or query showing it processing or requires_action; an order_no_conflict naming the existing Payment; a 409 payment_in_progress (A-CLIENT-S8-WAIT); or the last try of a retried POST failing (a timeout, a 5xx or a 429 is first retried with the same key, RETRY-01). A 202 on cancel starts its own window; a card retry starts afresh.";
    ClientSched4h = "A-CLIENT-SCHED-4H", Ambiguous, Some("client query_offsets, client query_every"),
        "SCHED-01: \"after that, once every 4 hours until 24 hours\" does not say where the 4-hour steps start.",
        "They follow the 1-hour query: 5 h, 9 h, 13 h, 17 h and 21 h (25 h is past the 24 hours).";
    ClientInflight409 = "A-CLIENT-INFLIGHT-409", Silent, None,
        "S5 and CONC-03 say \"在途冲突稍后用同一个键重试\" (for an in-flight conflict, retry later with the same key) without saying when; the reference retry code hands every 4xx, 409 included, to its caller. (S8's advice is different: \"等待结果或查询\", wait for the result or query, A-CLIENT-S8-WAIT.)",
        "409 operation_in_progress goes through the same retry loop as 429 and 5xx: the same key after the RETRY-02 backoff, at most 5 tries, then the result is unknown.";
    ClientS8Wait = "A-CLIENT-S8-WAIT", Silent, None,
        "S8: \"你该做什么：等待结果或查询\" (what you should do: wait for the result, or query) after 409 payment_in_progress; it does not say whether the confirm may be sent again later.",
        "On 409 payment_in_progress the reference client never re-sends the confirm: the result is unknown, it queries the Payment on the SCHED-01 schedule and waits for its webhook; once the Payment is failed the payer may change card again (a new submission, a new key). Re-sending the same confirm with the same key later is a documented variant, not an anti-pattern: the key is not bound (A-S8-NOBIND), one attempt at a time is the platform's (UNIQ-02), so a re-send while processing gets the same 409, after failed it is the card retry the payer asked for, after succeeded a 422; it charges nothing twice.";
    S13ReferenceCode = "A-S13-REFERENCE-CODE", Contradiction, Some("client after_503"),
        "The contract contradicts itself. S13: \"平台行为：本次请求未受理，没有创建 Payment，也没有扣款 … 你该做什么：向付款人显示“暂时无法支付，请稍后再试”；稍后用 K 重试\" (this request was not accepted; no Payment was created and no charge was made … show the payer \"Temporarily unable to pay, please try again later\"; retry later with K); the 429 and Retry-After section (RATE-05): \"它是唯一明确“未受理”的 5xx，其他 5xx 按结果未知处理\" (it is the only 5xx that explicitly means not accepted; treat other 5xx as result unknown). The reference code (RETRY-01, RETRY-03): \"网络错误、429、5xx（含 503 temporarily_unavailable）用同一个幂等键重试\" (network errors, 429 and 5xx, including 503 temporarily_unavailable: retry with the same key), and after maxAttempts \"仍无结果：标记订单\"正在确认\"，转入查询或等待 Webhook\" (still no result: mark the order \"confirming\", switch to querying or wait for the Webhook) and throws RESULT_UNKNOWN: five 503s end as \"result unknown\".",
        "Both readings are a client branch, the client parameter after_503. not_accepted (the reference client's default, S13): a create or confirm whose every try of the round was answered 503 (or 429) and none of whose tries may have executed (no timeout, network error, other 5xx or in-flight 409 since the round's first try) is refused for now (rejected: temporarily_unavailable): the payer was shown \"temporarily unable to pay\", nothing is queried, and paying the order again later re-sends it under the same key. result_unknown (the reference code): confirming and queried on SCHED-01, the query window anchored once for the submission, so a \"not found\" (QUERY-06) re-creates at most once per scheduled query and the traffic ends within 24 hours. A client that re-anchors its window after every round loops (a paused channel: thousands of POSTs per order); client-traffic-within-the-schedules judges it. The platform answers the same on both (RATE-04: nothing created, nothing charged); a request of an earlier round still in the network that executes later reaches the client by webhook or a later query.";
    RateLimitReferenceCode = "A-429-REFERENCE-CODE", Contradiction, Some("client after_429"),
        "The contract contradicts itself on a round of 429s. The 429 section (RATE-01, RATE-03): \"429 rate_limited：本次请求没有执行。等待 Retry-After 秒后用原幂等键重试\" (429 rate_limited: this request was not executed; wait Retry-After seconds, then retry with the original idempotency key), and S10: \"平台行为：本次请求未执行\" (this request was not executed). The reference code (RETRY-01, RETRY-03) retries \"网络错误、429、5xx\" at most maxAttempts = 5 times and then \"仍无结果：标记订单\"正在确认\"，转入查询或等待 Webhook\" (still no result: mark the order \"confirming\", switch to querying or wait for the Webhook), throwing RESULT_UNKNOWN: five 429s, none executed, end as \"result unknown\". Unlike S13 for a 503, no sentence gives the payer words for a 429.",
        "A client parameter, after_429, with S13's two readings (A-S13-REFERENCE-CODE). result_unknown (the reference client's default: the reference code, and RATE-03's \"retry with the original key\" goes on): a create or confirm whose last try was answered 429 and none of whose tries may have executed is confirming, the payer shown \"正在确认支付结果\", and queried on SCHED-01; a lookup that finds nothing re-creates under the same key (QUERY-06), not before the last Retry-After has passed. not_accepted (RATE-01's words): the order is refused for now (rejected: rate_limited), nothing queried, and paying it again re-sends it under the same key. Either way nothing is charged twice: nothing executed.";
    ClientCorrectedKey = "A-CLIENT-CORRECTED-KEY", Ambiguous, None,
        "REJECT-01: \"被 400、401、403、422 拒绝的请求不占用幂等键，修正后用新键提交\" (requests rejected with 400, 401, 403 or 422 do not use up the idempotency key; after correcting them, submit with a new key). GEN-02: with derived keys (payment.create:ORDER-DEMO-001:1) \"序号只在'新的业务提交'（如换卡）时加 1\" (the sequence number is incremented only for a new business submission, e.g. changing card): a corrected request recomputes the same key unless the sequence moves. The two sentences pull apart.",
        "The reference client never corrects a request by itself: a rejected create leaves the order rejected, a rejected refund the refund. When the merchant pays a rejected order again, or asks for a rejected refund again (corrected or not; a refund's amount may change, e.g. after 422 refund_amount_exceeded), the client treats it as a new business submission: sequence + 1, so the derived key is new (payment.create:ORDER:2, refund.create:REFUND:2; a random key is drawn and persisted afresh), as REJECT-01 asks; the refund number is not \"taken\" (UNIQ-04): the platform never bound it. Re-using the rejected key would also be safe at this platform (the key was not used up), but it is not what the contract says.";
    ClientSupportStart = "A-CLIENT-SUPPORT-START", Ambiguous, None,
        "RES-04 / WORDING-03, the manual_review row: \"订单保持“待确认”；不要重扣；超过 24 小时仍未确认可联系技术支持并提供支付号\" (keep the order as pending confirmation; do not charge again; if still not confirmed after more than 24 hours, you may contact technical support and provide the payment number). The translation notes that the original does not say from when the 24 hours are counted; \"你\" (you) is the merchant throughout the page.",
        "The 24 hours count from when the client first applied the order's Payment in manual_review; one second past them, if the order is still pending confirmation, the merchant (not the payer) is told to contact technical support with the payment id, once; the deadline is in the database, so a restarted process keeps it.";
    ClientPostTimeout = "A-CLIENT-POST-TIMEOUT", Silent, Some("client post_timeout"),
        "TIMEOUT-01 gives at least 20 s for create and confirm and 10 s for queries; cancel and refund have no figure.",
        "Every POST, cancel and refund included, times out after 20 s, as the contract's reference code (AbortSignal.timeout(20_000)) does for every POST; queries after 10 s.";
    ClientCancelKey = "A-CLIENT-CANCEL-KEY", Silent, None,
        "GEN-01 gives derived-key examples for create, confirm and refund only.",
        "A cancel's derived key is payment.cancel:ORDER:1. An order has one cancel: asking again re-sends it under the same key while it has no answer (sending or unknown) and is refused once it has one.";
    ClientDbTxn = "A-CLIENT-DB-TXN", Silent, None,
        "GEN-06 (\"first persist the key together with the order, then send\") and \"multiple servers … can compute the same key\" say nothing of database transactions.",
        "One step of one server is one database transaction, committed before any of its requests leaves; the order number is the primary key, so a second server asked to pay the same order finds it and, while it has no answer, re-sends the persisted submission (the same key and card) instead of creating it again.";
    ClientRestartSweep = "A-CLIENT-RESTART-SWEEP", Silent, None,
        "GEN-06: \"after a process crash, retrieve the original key from the database and retry\" does not say which process resumes which submission.",
        "A restarted process resumes every unfinished submission, cancel and refund of the shared database, whichever server started it, and the query schedule of every order whose result is unknown.";
    ClientRefundLookup = "A-CLIENT-REFUND-LOOKUP", Silent, None,
        "S11 says \"retry with K, or query by merchant_refund_no\"; SCHED-03 says refunds are not polled. When to look up a refund whose create never got an answer is not said.",
        "At the daily reconciliation, a refund whose create never got an answer is looked up by refund number; \"not found\" re-sends it with its original key.";
    ClientAfterWindow = "A-CLIENT-AFTER-24H", Silent, Some("client query_until"),
        "SCHED-01: queries \"every 4 hours until 24 hours\"; WEBHOOK-01: webhooks are the primary channel. Nothing is said of a result still unknown after 24 hours for a merchant that missed every webhook delivery (e.g. its servers were down through the re-deliveries).",
        "The reference client stops querying at 24 hours, as recommended; such an order stays confirming for good (found by the liveness check: a server down from 36 s to 24 h while payment.succeeded and its re-deliveries arrived). The liveness property heals a run for 25 hours and judges it then.";
    WebhookBlackout = "A-WEBHOOK-BLACKOUT", Silent, None,
        "WEBHOOK-01: \"Webhooks are the primary channel and queries are the fallback\" (Webhook 是主通道，查询是兜底). The query table (SCHED-01) starts querying a Payment (processing, requires_action) only \"after receiving a 202, a timeout or a 5xx\" and stops \"on entering succeeded / failed / canceled / expired, or on receiving the corresponding Webhook\". Nothing is said of an event a merchant never received while no query of the order is due: a failed Payment that expires, a paid one refunded, a requires_action one that succeeds after the query window.",
        "The reference client queries only as SCHED-01 says, and the platform gives up on an event after its re-deliveries (A-WEBHOOK-REDELIVERY: about 7 minutes). If the merchant misses every delivery of an event (each finds the server it is sent to down, as when every server of its database is down, or is lost in the network) and no query of the order is due, the order stays behind the platform for good: a failed order misses payment.expired, a paid order misses the payment event of its refund (amount_refunded), a requires_action order whose query window is over misses payment.succeeded and is never fulfilled (a confirming one is A-CLIENT-AFTER-24H). The liveness check and the convergence test report it as this assumption reached, neither a pass nor a violation; scripts F03–F05 show it.";
    SamePurchaseByAmount = "A-SAME-PURCHASE-BY-AMOUNT", Ambiguous, None,
        "UNKNOWN-03: \"结果未知时不要换幂等键或订单号重新扣款\" (when the result is unknown, do not change the idempotency key or the order number and charge again); S11: \"do not change the refund number and apply again\". Which orders are one purchase is the merchant's to know: the wire shows order numbers and amounts, not purchases.",
        "Where only the wire is seen and no merchant journal names the purchases, a create of the same merchant, environment, amount and currency under another order number, sent while an earlier order's result was unknown, is that order renumbered; a refund of the same Payment and amount under another refund number alike. The sandbox, the tapes it writes (`judge`) and its scripts read it so and say so in the verdict; `check-log` reads it so only with `--same-purchase-by-amount`, and otherwise judges such a pair `cannot judge`, naming the merchant's database, since two customers may buy at one price.";
    NotFoundPost = "A-NOT-FOUND-POST", Silent, None,
        "The contract names the objects a merchant may ask for, \"有 Payment ID：GET/v1/payments/{payment_id}\" … \"退款：GET /v1/refunds/{refund_id}\" (with a Payment ID: GET /v1/payments/{payment_id} … refunds: GET /v1/refunds/{refund_id}), and what \"查无记录\" (no record found) means for a list by order number (QUERY-05), but gives no status code for an object that does not exist: not for a GET by id, nor for a confirm, a cancel or a refund naming a Payment the merchant does not have, nor for a path the API does not have.",
        "What the merchant does not have (never created, or another merchant's or environment's) is 404 resource_missing (A-ERROR-CODES): a GET of a Payment or a refund by id; a confirm or cancel of such a Payment, after authentication, the rate limit and the Idempotency-Key check (401, 403, 429 and the key's 400 come first) and before its body is read; a refund naming such a Payment, with error.field = payment_id, after its own fields are checked (a 400 for a missing or invalid field comes first). Never 422 or 409 or a 2xx for it, and never 404 for what the merchant has. A path the API does not have is 404, a known path with another method 405.";
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;
    use std::path::{Path, PathBuf};

    /// The table of `model/ASSUMPTIONS.md`: a header and one row per assumption, in
    /// catalogue order (ID, gap, the contract, the model, parameter). A `|` inside a cell is
    /// escaped, as GitHub tables require even inside code spans.
    fn markdown_table() -> String {
        let cell = |text: &str| text.replace('|', "\\|");
        let mut table = String::from(
            "| ID | gap | the contract | the model | parameter |\n|---|---|---|---|---|\n",
        );
        for a in Assumption::ALL {
            let parameter = a
                .parameter()
                .map_or_else(|| "—".to_owned(), |p| format!("`{}`", cell(p)));
            table.push_str(&format!(
                "| `{}` | {} | {} | {} | {} |\n",
                a.id(),
                a.gap().as_str(),
                cell(a.contract()),
                cell(a.taken()),
                parameter
            ));
        }
        table
    }

    fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .expect("readable directory")
            .map(|e| e.expect("readable entry").path())
            .collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                rust_files(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }

    /// The `A-…` IDs cited in `text`: an `A-` not preceded by a letter, digit, `_` or
    /// `-`, followed by upper-case words joined by `-` (`A-CLIENT-SCHED-4H`).
    fn cited_ids(text: &str) -> BTreeSet<String> {
        let bytes = text.as_bytes();
        let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'-';
        let id_char = |b: u8| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'-';
        let mut ids = BTreeSet::new();
        for (at, _) in text.match_indices("A-") {
            if at > 0 && word(bytes[at - 1]) {
                continue;
            }
            let len = bytes[at..].iter().take_while(|b| id_char(**b)).count();
            let id = text[at..at + len].trim_end_matches('-');
            if id.len() > 2 {
                ids.insert(id.to_owned());
            }
        }
        ids
    }

    /// `model/src` outside this file, concatenated.
    fn model_source() -> String {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        files
            .iter()
            .filter(|f| !f.ends_with("assumptions.rs"))
            .map(|f| std::fs::read_to_string(f).expect("readable source"))
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn assumption_ids_are_unique_and_listed_in_assumptions_md() {
        let md = include_str!("../ASSUMPTIONS.md");
        let mut seen = BTreeSet::new();
        for a in Assumption::ALL {
            assert!(seen.insert(a.id()), "duplicate {}", a.id());
            assert!(a.id().starts_with("A-"));
            assert_eq!(cited_ids(a.id()), BTreeSet::from([a.id().to_owned()]));
            assert!(!a.contract().is_empty() && !a.taken().is_empty());
            assert!(
                md.contains(&format!("`{}`", a.id())),
                "model/ASSUMPTIONS.md does not list {}",
                a.id()
            );
        }
    }

    #[test]
    fn assumptions_md_table_is_generated_from_the_catalogue() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("ASSUMPTIONS.md");
        let md = std::fs::read_to_string(&path).expect("model/ASSUMPTIONS.md");
        let start = md.find("\n| ID |").map(|i| i + 1).expect("a table");
        let end = md[start..].find("\n\n").map_or(md.len(), |i| start + i + 1);
        let table = markdown_table();
        if std::env::var_os("PAYHUB_BLESS_ASSUMPTIONS").is_some() {
            let updated = format!("{}{table}{}", &md[..start], &md[end..]);
            std::fs::write(&path, updated).expect("writable model/ASSUMPTIONS.md");
            return;
        }
        assert!(
            md[start..end] == table,
            "model/ASSUMPTIONS.md is out of date: run \
             PAYHUB_BLESS_ASSUMPTIONS=1 cargo test -p payhub-model assumptions"
        );
    }

    #[test]
    fn every_assumption_is_cited_in_model_src_and_every_citation_is_catalogued() {
        let cited = cited_ids(&model_source());
        let missing: Vec<&str> = Assumption::ALL
            .iter()
            .map(|a| a.id())
            .filter(|id| !cited.contains(*id))
            .collect();
        assert!(
            missing.is_empty(),
            "assumptions cited nowhere in model/src outside assumptions.rs: {missing:?}"
        );
        let known: BTreeSet<&str> = Assumption::ALL.iter().map(|a| a.id()).collect();
        let unknown: Vec<&String> = cited
            .iter()
            .filter(|id| !known.contains(id.as_str()))
            .collect();
        assert!(
            unknown.is_empty(),
            "model/src cites assumptions the catalogue does not have: {unknown:?}"
        );
    }

    #[test]
    fn cited_ids_reads_whole_ids_only() {
        let text = "A-WAIT-TIMEOUT, (A-S4-BIND) AC-014 DATA-01 `A-CLIENT-SCHED-4H` A-… A-";
        let ids: Vec<String> = cited_ids(text).into_iter().collect();
        assert_eq!(ids, ["A-CLIENT-SCHED-4H", "A-S4-BIND", "A-WAIT-TIMEOUT"]);
    }
}
