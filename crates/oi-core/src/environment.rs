//! Facts about the machine for the system prompt: the OS and today's date.

use std::time::{SystemTime, UNIX_EPOCH};

/// `Linux (Debian GNU/Linux 12 (bookworm)), x86_64`, or the bare OS name
/// where no release file exists.
pub(crate) fn os_description() -> String {
    let os = match std::env::consts::OS {
        "linux" => "Linux",
        "macos" => "macOS",
        "windows" => "Windows",
        other => other,
    };
    let release = fs_err::read_to_string("/etc/os-release")
        .ok()
        .and_then(|text| {
            text.lines()
                .find_map(|l| l.strip_prefix("PRETTY_NAME="))
                .map(|v| v.trim_matches('"').to_owned())
        });
    match release {
        Some(name) => format!("{os} ({name}), {}", std::env::consts::ARCH),
        None => format!("{os}, {}", std::env::consts::ARCH),
    }
}

/// Today's date (UTC) as `YYYY-MM-DD`.
pub(crate) fn today() -> String {
    let days = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() / 86_400)
        .unwrap_or(0);
    let (y, m, d) = civil_from_days(days as i64);
    format!("{y:04}-{m:02}-{d:02}")
}

/// A new session's id: its start time (UTC) and a random suffix, e.g.
/// `20261130-142501-3fa9`. Ids sort by time and name the session's folder.
pub fn new_session_id() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    session_id_at(secs, fastrand::u16(..))
}

/// The session id for a start at `unix_secs` with `suffix`.
fn session_id_at(unix_secs: u64, suffix: u16) -> String {
    let (y, m, d) = civil_from_days((unix_secs / 86_400) as i64);
    let t = unix_secs % 86_400;
    format!(
        "{y:04}{m:02}{d:02}-{:02}{:02}{:02}-{suffix:04x}",
        t / 3600,
        t / 60 % 60,
        t % 60,
    )
}

/// A moment as `2026-11-30 14:05 UTC`, from seconds since 1970.
pub fn format_utc(unix_secs: u64) -> String {
    let (y, m, d) = civil_from_days((unix_secs / 86_400) as i64);
    let t = unix_secs % 86_400;
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02} UTC",
        t / 3600,
        t / 60 % 60
    )
}

/// A moment as `2026-11-30T14:05:09Z` (RFC 3339, UTC), from seconds since
/// 1970: sortable as text.
pub fn format_rfc3339(unix_secs: u64) -> String {
    let (y, m, d) = civil_from_days((unix_secs / 86_400) as i64);
    let t = unix_secs % 86_400;
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        t / 3600,
        t / 60 % 60,
        t % 60
    )
}

/// The time now, as [`format_rfc3339`] writes it.
pub fn now_rfc3339() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    format_rfc3339(secs)
}

/// Seconds since 1970 of a moment written as [`format_rfc3339`] writes it
/// (`2026-11-30T14:05:09Z`); `None` for anything else.
pub fn parse_rfc3339(text: &str) -> Option<u64> {
    let text = text.strip_suffix('Z')?;
    let (date, time) = text.split_once('T')?;
    let mut date = date.splitn(3, '-').map(str::parse::<i64>);
    let (y, m, d) = (date.next()?.ok()?, date.next()?.ok()?, date.next()?.ok()?);
    let mut time = time
        .splitn(3, ':')
        .map(|p| p.split('.').next().unwrap_or(p).parse::<u64>());
    let (hh, mm, ss) = (time.next()?.ok()?, time.next()?.ok()?, time.next()?.ok()?);
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) || hh > 23 || mm > 59 || ss > 60 {
        return None;
    }
    // Days since 1970-01-01 of y-m-d (the inverse of `civil_from_days`).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    u64::try_from(days)
        .ok()
        .map(|days| days * 86_400 + hh * 3600 + mm * 60 + ss)
}

/// The proleptic Gregorian date of a day count since 1970-01-01.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converts_day_counts_to_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(19_723), (2024, 1, 1));
        assert_eq!(civil_from_days(19_782), (2024, 2, 29));
        assert_eq!(civil_from_days(20_787), (2026, 11, 30));
    }

    #[test]
    fn moments_read_back_as_they_were_written() {
        for secs in [0, 951_782_400, 1_796_047_509, 1_796_083_199] {
            assert_eq!(parse_rfc3339(&format_rfc3339(secs)), Some(secs));
        }
        assert_eq!(parse_rfc3339("2026-11-30T14:05:09"), None);
        assert_eq!(parse_rfc3339("2026-13-30T14:05:09Z"), None);
        assert_eq!(parse_rfc3339("yesterday"), None);
    }

    #[test]
    fn moments_are_formatted_in_utc() {
        assert_eq!(format_utc(1_796_047_500), "2026-11-30 14:05 UTC");
    }

    #[test]
    fn session_ids_start_with_the_time() {
        // Regression: this compared a fresh id with today's date read a
        // moment later, which failed when the two fell on either side of
        // midnight (UTC).
        assert_eq!(session_id_at(1_796_047_509, 0x3fa9), "20261130-140509-3fa9");
        assert_eq!(session_id_at(1_796_083_199, 7), "20261130-235959-0007");
        assert_eq!(new_session_id().len(), 20);
    }

    #[test]
    fn describes_the_os() {
        let os = os_description();
        assert!(os.contains(std::env::consts::ARCH), "{os}");
    }
}
