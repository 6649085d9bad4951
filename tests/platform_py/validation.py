"""What a request may carry: the error every refusal is, and the checks of body fields.

An `ApiError` is an answer: its status, the contract's error code and message, the
field or related resource it names, and whether a retry may succeed.
"""

CURRENCIES = {"USD", "EUR", "GBP", "CNY", "HKD", "JPY", "SGD"}
MAX_AMOUNT = 99_999_999
MAX_NO_LEN = 64


class ApiError(Exception):
    def __init__(self, status, code, message, field=None, related=None,
                 retryable=False, **extra):
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.field = field
        self.related = related
        self.retryable = retryable
        self.extra = extra

    def body(self):
        err = {"code": self.code, "message": self.message, "retryable": self.retryable,
               "field": self.field, "related_resource_id": self.related}
        err.update(self.extra)
        return {"error": err}


def invalid(field, message):
    return ApiError(400, "invalid_parameter", message, field=field)


# ----------------------------------------------------------------- validation

def _object(body):
    if body is None:
        return {}
    if not isinstance(body, dict):
        raise ApiError(400, "invalid_parameter", "The request body must be a JSON object.")
    return body


def _text(body, name, required=True, max_len=MAX_NO_LEN):
    value = body.get(name)
    if value is None:
        if required:
            raise invalid(name, f"`{name}` is required.")
        return None
    if not isinstance(value, str) or not (1 <= len(value) <= max_len) \
            or any(ord(c) < 32 or ord(c) == 127 for c in value):
        raise invalid(name, f"`{name}` must be a string of 1-{max_len} printable characters.")
    return value


def _amount(body):
    value = body.get("amount")
    if value is None:
        raise invalid("amount", "`amount` is required.")
    if isinstance(value, bool) or not isinstance(value, int) or not (1 <= value <= MAX_AMOUNT):
        raise invalid("amount", f"`amount` must be an integer from 1 to {MAX_AMOUNT} (minor units).")
    return value


def _currency(body, required=True):
    value = body.get("currency")
    if value is None:
        if required:
            raise invalid("currency", "`currency` is required.")
        return None
    if not isinstance(value, str) or len(value) != 3 or not value.isascii() or not value.isalpha():
        raise invalid("currency", "`currency` must be a three-letter ISO 4217 code.")
    return value.upper()
