//! The API keys every platform of a world, a script, the sandbox and check-log starts
//! with: two merchants, test and live, one read-only key and one issued on rotation
//! (SCOPE-01..SCOPE-04).

use super::ApiKeySpec;
use crate::ids::{ApiKeyId, Environment, MerchantId};

/// `ak_1`: merchant 1, test.
pub const M1_TEST: ApiKeyId = ApiKeyId(1);
/// `ak_2`: merchant 1, live.
pub const M1_LIVE: ApiKeyId = ApiKeyId(2);
/// `ak_3`: merchant 2, test.
pub const M2_TEST: ApiKeyId = ApiKeyId(3);
/// `ak_4`: merchant 1, test, read-only (403 on POST).
pub const M1_TEST_READ_ONLY: ApiKeyId = ApiKeyId(4);
/// `ak_5`: merchant 1, test: not issued until a test rotates to it.
pub const M1_TEST_ROTATED: ApiKeyId = ApiKeyId(5);

/// The API keys every bench starts with.
pub fn default_api_keys() -> Vec<ApiKeySpec> {
    let key = |id, merchant, environment, read_only| ApiKeySpec {
        id,
        merchant: MerchantId(merchant),
        environment,
        read_only,
    };
    vec![
        key(M1_TEST, 1, Environment::Test, false),
        key(M1_LIVE, 1, Environment::Live, false),
        key(M2_TEST, 2, Environment::Test, false),
        key(M1_TEST_READ_ONLY, 1, Environment::Test, true),
    ]
}

/// The rotated key of [`M1_TEST_ROTATED`], for `Control::IssueApiKey`.
pub fn rotated_key_spec() -> ApiKeySpec {
    ApiKeySpec {
        id: M1_TEST_ROTATED,
        merchant: MerchantId(1),
        environment: Environment::Test,
        read_only: false,
    }
}
