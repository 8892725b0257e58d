//! Registry times: RFC 3339 UTC text with milliseconds (`2026-12-07T20:15:00.123Z`), sortable
//! as text and the same on SQLite and PostgreSQL. `SOURCE_DATE_EPOCH` (seconds), where set,
//! fixes the clock, so that two stores written by the same commands export the same bytes.

use std::time::{SystemTime, UNIX_EPOCH};

/// Now, or `SOURCE_DATE_EPOCH` where it is set to a number of seconds.
pub fn now() -> String {
    if let Some(secs) = std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|s| s.trim().parse::<i64>().ok())
    {
        return format_millis(secs.saturating_mul(1000));
    }
    let ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
    format_millis(ms)
}

/// Milliseconds since 1970-01-01T00:00:00Z as RFC 3339 UTC text.
pub fn format_millis(ms: i64) -> String {
    let (secs, milli) = (ms.div_euclid(1000), ms.rem_euclid(1000));
    let (days, sod) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{milli:03}Z",
        sod / 3600,
        sod % 3600 / 60,
        sod % 60
    )
}

/// Days since 1970-01-01 to (year, month, day) in the proleptic Gregorian calendar
/// (H. Hinnant's `civil_from_days`).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
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
    fn formats_known_instants() {
        assert_eq!(format_millis(0), "1970-01-01T00:00:00.000Z");
        // 2000-02-29 (a leap day) 12:34:56.789
        assert_eq!(format_millis(951_827_696_789), "2000-02-29T12:34:56.789Z");
        assert_eq!(format_millis(1_796_601_600_000), "2026-12-07T00:00:00.000Z");
        assert_eq!(format_millis(-1), "1969-12-31T23:59:59.999Z");
    }
}
