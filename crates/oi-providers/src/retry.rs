//! When and how long to wait before retrying a failed request.

use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::HeaderMap;

/// How often, and how patiently, a client retries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt (so `max_retries + 1` attempts in all).
    pub max_retries: u32,
    /// The first backoff delay; it doubles with each retry.
    pub base_delay: Duration,
    /// No single wait is longer than this, whatever the server asks for.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_retries: 4,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// The wait before retry number `retry` (1-based): the server's own
    /// `retry-after-ms` / `Retry-After` when it sent one, else exponential
    /// backoff with ±25 % jitter so that many clients do not retry in step.
    pub fn delay(&self, retry: u32, headers: Option<&HeaderMap>) -> Duration {
        if let Some(asked) = headers.and_then(server_requested_delay) {
            return asked.min(self.max_delay);
        }
        let exp = self
            .base_delay
            .saturating_mul(1u32 << retry.saturating_sub(1).min(16));
        let jitter = 0.75 + fastrand::f64() * 0.5;
        exp.mul_f64(jitter).min(self.max_delay)
    }
}

/// Whether a response status is worth retrying: rate limits, timeouts and
/// server-side failures (including Anthropic's 529 "overloaded").
pub(crate) fn is_retryable_status(status: StatusCode) -> bool {
    status == StatusCode::TOO_MANY_REQUESTS
        || status == StatusCode::REQUEST_TIMEOUT
        || status == StatusCode::CONFLICT
        || status.is_server_error()
}

/// The delay a server asked for: `retry-after-ms` (milliseconds, sent by
/// OpenAI), else `Retry-After` as seconds or as an HTTP date.
fn server_requested_delay(headers: &HeaderMap) -> Option<Duration> {
    let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if let Some(ms) = text("retry-after-ms").and_then(|v| v.trim().parse::<f64>().ok())
        && ms.is_finite()
        && ms >= 0.0
    {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    let value = text("retry-after")?.trim();
    if let Ok(secs) = value.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs));
    }
    let when = httpdate_to_system_time(value)?;
    Some(
        when.duration_since(std::time::SystemTime::now())
            .unwrap_or_default(),
    )
}

/// Parses the IMF-fixdate form of an HTTP date (`Sun, 06 Nov 1994 08:49:37 GMT`),
/// the only form servers send in `Retry-After` today.
fn httpdate_to_system_time(value: &str) -> Option<std::time::SystemTime> {
    let parts: Vec<&str> = value.split_whitespace().collect();
    let [_, day, month, year, time, "GMT"] = parts.as_slice() else {
        return None;
    };
    let day: u64 = day.parse().ok()?;
    let month = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ]
    .iter()
    .position(|m| m == month)? as u64
        + 1;
    let year: u64 = year.parse().ok()?;
    let mut hms = time.split(':').map(|p| p.parse::<u64>().ok());
    let (h, m, s) = (hms.next()??, hms.next()??, hms.next()??);
    if !(1970..=9999).contains(&year) || !(1..=31).contains(&day) || h > 23 || m > 59 || s > 60 {
        return None;
    }
    // Days since the epoch, by the civil-from-days algorithm run backwards.
    let (y, mo) = if month <= 2 {
        (year - 1, month + 9)
    } else {
        (year, month - 3)
    };
    let era = y / 400;
    let yoe = y - era * 400;
    let doy = (153 * mo + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + h * 3600 + m * 60 + s;
    Some(std::time::UNIX_EPOCH + Duration::from_secs(secs))
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            map.insert(*k, HeaderValue::from_str(v).unwrap());
        }
        map
    }

    #[test]
    fn honours_retry_after_seconds_and_milliseconds() {
        let policy = RetryPolicy::default();
        let h = headers(&[("retry-after", "3")]);
        assert_eq!(policy.delay(1, Some(&h)), Duration::from_secs(3));
        let h = headers(&[("retry-after-ms", "250"), ("retry-after", "3")]);
        assert_eq!(policy.delay(1, Some(&h)), Duration::from_millis(250));
        let h = headers(&[("retry-after", "0.5")]);
        assert_eq!(policy.delay(1, Some(&h)), Duration::from_millis(500));
    }

    #[test]
    fn caps_what_the_server_asks_for() {
        let policy = RetryPolicy::default();
        let h = headers(&[("retry-after", "86400")]);
        assert_eq!(policy.delay(1, Some(&h)), policy.max_delay);
    }

    #[test]
    fn http_date_in_the_past_means_now() {
        let policy = RetryPolicy::default();
        let h = headers(&[("retry-after", "Sun, 06 Nov 1994 08:49:37 GMT")]);
        assert_eq!(policy.delay(1, Some(&h)), Duration::ZERO);
    }

    #[test]
    fn parses_http_dates() {
        let t = httpdate_to_system_time("Sun, 06 Nov 1994 08:49:37 GMT").unwrap();
        assert_eq!(
            t.duration_since(std::time::UNIX_EPOCH).unwrap().as_secs(),
            784_111_777
        );
        let t = httpdate_to_system_time("Thu, 01 Jan 1970 00:00:00 GMT").unwrap();
        assert_eq!(t, std::time::UNIX_EPOCH);
        assert!(httpdate_to_system_time("tomorrow").is_none());
        assert!(httpdate_to_system_time("Sun, 32 Nov 1994 08:49:37 GMT").is_none());
    }

    #[test]
    fn backoff_doubles_within_jitter_and_is_capped() {
        let policy = RetryPolicy {
            max_retries: 10,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_secs(1),
        };
        for _ in 0..50 {
            let d1 = policy.delay(1, None);
            let d3 = policy.delay(3, None);
            assert!((75..=125).contains(&d1.as_millis()), "{d1:?}");
            assert!((300..=500).contains(&d3.as_millis()), "{d3:?}");
            assert_eq!(policy.delay(9, None), Duration::from_secs(1));
        }
    }

    #[test]
    fn retryable_statuses() {
        for code in [429, 408, 500, 502, 503, 504, 529] {
            assert!(
                is_retryable_status(StatusCode::from_u16(code).unwrap()),
                "{code}"
            );
        }
        for code in [400, 401, 403, 404, 422] {
            assert!(
                !is_retryable_status(StatusCode::from_u16(code).unwrap()),
                "{code}"
            );
        }
    }
}
