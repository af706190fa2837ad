//! Calendar dates and the temporal expressions an answer writes: full dates in three
//! styles (`2024-03-12`, `March 12, 2024`, `12 March 2024`), partial ones (`March 12`,
//! `March 2024`), weekdays (`on Tuesday`) and bare years (`in 2026`), plus the tense
//! of the words around them. Everything is computed with the proleptic Gregorian
//! calendar; no time zone is involved.

use std::fmt;

use serde::Serialize;

/// A calendar date.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Date {
    /// Year (e.g. 2024).
    pub year: i32,
    /// Month, 1–12.
    pub month: u8,
    /// Day of the month, 1–31.
    pub day: u8,
}

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

const WEEKDAYS: [&str; 7] = [
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
];

impl Date {
    /// The date, if it exists.
    pub fn new(year: i32, month: u8, day: u8) -> Option<Date> {
        (1..=12).contains(&month).then_some(())?;
        (day >= 1 && day <= days_in_month(year, month)).then_some(Date { year, month, day })
    }

    /// A date written as the number `yyyymmdd` (how packs store dates).
    pub fn from_yyyymmdd(n: i64) -> Option<Date> {
        if !(10_000_101..=99_991_231).contains(&n) {
            return None;
        }
        Date::new((n / 10000) as i32, ((n / 100) % 100) as u8, (n % 100) as u8)
    }

    /// The date as the number `yyyymmdd`.
    pub fn yyyymmdd(&self) -> i64 {
        i64::from(self.year) * 10000 + i64::from(self.month) * 100 + i64::from(self.day)
    }

    /// `YYYY-MM-DD`.
    pub fn parse_iso(s: &str) -> Option<Date> {
        let mut it = s.trim().splitn(3, '-');
        let (y, m, d) = (it.next()?, it.next()?, it.next()?);
        if y.len() != 4 || m.len() != 2 || d.len() != 2 {
            return None;
        }
        Date::new(y.parse().ok()?, m.parse().ok()?, d.parse().ok()?)
    }

    /// Days since 1970-01-01 (negative before).
    pub fn days(&self) -> i64 {
        days_from_civil(self.year, self.month, self.day)
    }

    /// The day of the week, 0 = Monday … 6 = Sunday.
    pub fn weekday(&self) -> u8 {
        // 1970-01-01 was a Thursday (3).
        (self.days() + 3).rem_euclid(7) as u8
    }

    /// Today's date in UTC, from the system clock.
    pub fn today() -> Date {
        let secs = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64);
        civil_from_days(secs.div_euclid(86_400))
    }

    /// The date written in `style`.
    pub fn format(&self, style: DateStyle) -> String {
        let month = MONTHS[self.month as usize - 1];
        match style {
            DateStyle::Iso | DateStyle::Weekday => self.to_string(),
            DateStyle::MonthDayYear => format!("{month} {}, {}", self.day, self.year),
            DateStyle::DayMonthYear => format!("{} {month} {}", self.day, self.year),
        }
    }
}

impl fmt::Display for Date {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }
}

impl Serialize for Date {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

fn is_leap(y: i32) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

fn days_in_month(y: i32, m: u8) -> u8 {
    match m {
        2 if is_leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Howard Hinnant's days-from-civil.
fn days_from_civil(y: i32, m: u8, d: u8) -> i64 {
    let y = i64::from(y) - i64::from(m <= 2);
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> Date {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u8;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u8;
    let y = yoe + era * 400 + i64::from(m <= 2);
    Date {
        year: y as i32,
        month: m,
        day: d,
    }
}

/// How a date was written, so that a correction can be written the same way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DateStyle {
    /// `2024-03-12`
    Iso,
    /// `March 12, 2024`
    MonthDayYear,
    /// `12 March 2024`
    DayMonthYear,
    /// `Tuesday`
    Weekday,
}

/// A date as an answer writes it: every part optional (`March 12`, `March 2024`,
/// `Tuesday`, `2024`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct DateExpr {
    /// The year, if written.
    pub year: Option<i32>,
    /// The month, if written.
    pub month: Option<u8>,
    /// The day, if written.
    pub day: Option<u8>,
    /// The weekday (0 = Monday), if written.
    pub weekday: Option<u8>,
    /// How it was written.
    pub style: DateStyle,
}

impl DateExpr {
    /// The full date, when year, month and day are all written.
    pub fn full(&self) -> Option<Date> {
        Date::new(self.year?, self.month?, self.day?)
    }

    /// Whether `date` fits every written part.
    pub fn matches(&self, date: Date) -> bool {
        self.year.is_none_or(|y| y == date.year)
            && self.month.is_none_or(|m| m == date.month)
            && self.day.is_none_or(|d| d == date.day)
            && self.weekday.is_none_or(|w| w == date.weekday())
    }

    /// Whether it names a day (a full date, a month and day, or a weekday).
    pub fn is_day(&self) -> bool {
        self.day.is_some() || self.weekday.is_some()
    }

    /// `date` written in this expression's style (a weekday as the weekday's name).
    pub fn write_like(&self, date: Date) -> String {
        match self.style {
            DateStyle::Weekday => WEEKDAYS[date.weekday() as usize].to_string(),
            DateStyle::MonthDayYear if self.year.is_none() => {
                format!("{} {}", MONTHS[date.month as usize - 1], date.day)
            }
            DateStyle::DayMonthYear if self.year.is_none() => {
                format!("{} {}", date.day, MONTHS[date.month as usize - 1])
            }
            s => date.format(s),
        }
    }
}

/// The name of a weekday, 0 = Monday.
pub fn weekday_name(w: u8) -> &'static str {
    WEEKDAYS[w as usize % 7]
}

/// The month a word names (`March`, `Mar`, `Sept`), 1–12.
pub fn month_of(word: &str) -> Option<u8> {
    let w = word.trim_end_matches('.').to_ascii_lowercase();
    if w.len() < 3 {
        return None;
    }
    let i = MONTHS.iter().position(|m| {
        let m = m.to_ascii_lowercase();
        m == w || (w.len() >= 3 && m.starts_with(&w) && (w.len() == 3 || w == "sept"))
    })?;
    Some(i as u8 + 1)
}

/// The weekday a word names (`Tuesday`, `Tue`), 0 = Monday.
pub fn weekday_of(word: &str) -> Option<u8> {
    let w = word.trim_end_matches('.').to_ascii_lowercase();
    let i = WEEKDAYS.iter().position(|d| {
        let d = d.to_ascii_lowercase();
        d == w
            || (w.len() == 3 && d.starts_with(&w))
            || (w == "tues" || w == "thurs") && d.starts_with(&w)
    })?;
    Some(i as u8)
}

/// A day of the month written as `12`, `12th`, `1st`, `2nd`, `3rd`.
pub fn day_of(word: &str) -> Option<u8> {
    let digits = word
        .strip_suffix("st")
        .or_else(|| word.strip_suffix("nd"))
        .or_else(|| word.strip_suffix("rd"))
        .or_else(|| word.strip_suffix("th"))
        .unwrap_or(word);
    if digits.is_empty() || digits.len() > 2 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let d: u8 = digits.parse().ok()?;
    (1..=31).contains(&d).then_some(d)
}

/// A year written as four digits, 1000–2999.
pub fn year_of(word: &str) -> Option<i32> {
    (word.len() == 4 && word.bytes().all(|b| b.is_ascii_digit()))
        .then(|| word.parse().ok())
        .flatten()
        .filter(|y| (1000..=2999).contains(y))
}

/// The tense of a stretch of text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Tense {
    /// Told as having happened.
    Past,
    /// Present or not marked.
    Present,
    /// Told as going to happen.
    Future,
}

/// Past forms of irregular verbs (and of `be`/`have`/`do`) that mark past tense.
const IRREGULAR_PAST: &[&str] = &[
    "was",
    "were",
    "did",
    "had",
    "took",
    "met",
    "left",
    "held",
    "went",
    "came",
    "began",
    "gave",
    "made",
    "said",
    "told",
    "saw",
    "ran",
    "spoke",
    "led",
    "wrote",
    "got",
    "became",
    "brought",
    "bought",
    "chose",
    "drove",
    "fell",
    "felt",
    "found",
    "flew",
    "forgot",
    "heard",
    "kept",
    "knew",
    "lost",
    "paid",
    "put",
    "quit",
    "sat",
    "sent",
    "set",
    "showed",
    "stood",
    "taught",
    "thought",
    "understood",
    "won",
    "ago",
    "yesterday",
    "previously",
    "formerly",
];

/// Words ending in "ed" that are not past forms.
const NOT_PAST_ED: &[&str] = &[
    "need",
    "feed",
    "seed",
    "speed",
    "bed",
    "red",
    "shed",
    "indeed",
    "proceed",
    "exceed",
    "succeed",
    "breed",
    "greed",
    "weed",
    "embed",
    "hundred",
    "sacred",
    "naked",
    "wicked",
    "scheduled",
    "planned",
    "expected",
    "supposed",
    "expected",
    "slated",
    "booked",
];

/// The tense of the words `lower` (lower-cased tokens): future when a future marker
/// appears (`will`, `shall`, `'ll`, `going to`, `upcoming`, `tomorrow`, `next`, or a
/// present form before `scheduled`/`planned`/`set`/`slated`/`due`), else past when a
/// past form appears (`was`, an irregular past, a regular `-ed` form), else present.
pub fn tense_of<S: AsRef<str>>(lower: &[S]) -> Tense {
    let w = |i: usize| lower.get(i).map_or("", |s| s.as_ref());
    let mut past = false;
    for i in 0..lower.len() {
        let t = w(i);
        match t {
            "will" | "shall" | "ll" | "upcoming" | "tomorrow" | "next" => return Tense::Future,
            "going" if w(i + 1) == "to" && i + 2 < lower.len() => return Tense::Future,
            "is" | "are" | "am" | "be"
                if matches!(w(i + 1), "scheduled" | "planned" | "set" | "slated" | "due")
                    || (w(i + 1) == "still"
                        && matches!(w(i + 2), "scheduled" | "planned" | "set" | "due")) =>
            {
                return Tense::Future;
            }
            _ => {}
        }
        if IRREGULAR_PAST.contains(&t)
            || (t.len() > 4
                && t.ends_with("ed")
                && t.bytes().all(|b| b.is_ascii_alphabetic())
                && !NOT_PAST_ED.contains(&t))
        {
            past = true;
        }
    }
    if past { Tense::Past } else { Tense::Present }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calendar_arithmetic() {
        let d = Date::new(2024, 3, 12).unwrap();
        assert_eq!(d.weekday(), 1, "2024-03-12 was a Tuesday");
        assert_eq!(Date::from_yyyymmdd(20240312), Some(d));
        assert_eq!(d.yyyymmdd(), 20240312);
        assert_eq!(Date::new(2023, 2, 29), None);
        assert!(Date::new(2024, 2, 29).is_some());
        assert_eq!(civil_from_days(d.days()), d);
        assert_eq!(Date::parse_iso("2024-03-12"), Some(d));
        assert_eq!(Date::parse_iso("2024-3-12"), None);
        assert_eq!(d.format(DateStyle::MonthDayYear), "March 12, 2024");
        assert_eq!(d.format(DateStyle::DayMonthYear), "12 March 2024");
    }

    #[test]
    fn words() {
        assert_eq!(month_of("Sept"), Some(9));
        assert_eq!(month_of("mar"), Some(3));
        assert_eq!(month_of("ma"), None);
        assert_eq!(weekday_of("Tuesday"), Some(1));
        assert_eq!(day_of("12th"), Some(12));
        assert_eq!(day_of("32"), None);
        assert_eq!(year_of("2026"), Some(2026));
    }

    #[test]
    fn tenses() {
        let t = |s: &str| tense_of(&s.split(' ').collect::<Vec<_>>());
        assert_eq!(t("the meeting took place on"), Tense::Past);
        assert_eq!(t("the meeting will take place on"), Tense::Future);
        assert_eq!(t("the meeting is scheduled for"), Tense::Future);
        assert_eq!(t("alice works in"), Tense::Present);
        assert_eq!(t("alice attended the"), Tense::Past);
    }
}
