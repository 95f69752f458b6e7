//! Kafka Streams' userData (`SubscriptionInfoData` v7-11) read as columns: the member's fields
//! and its task offset sums as three columns (topic group, partition, sum), no object per task
//! (issue 24). Only the reading: a malformed userData is `Read::Malformed` and the Python
//! reader (`kassign.kafka.subscription_info`) names the fault; v1-6 (task lists) and a v10+
//! sum naming a topology are `Read::NotColumns`, which that reader reads whole.

/// What one userData held, offset sums apart.
pub struct Info<'a> {
    pub version: i32,
    pub latest: i32,
    pub process_id: &'a [u8],
    pub end_point: &'a str,
    pub unique: i8,
    pub error: i32,
    pub tags: Vec<(&'a str, &'a str)>,
    /// How many offset sums, and where they start.
    pub rows: usize,
    sums_at: usize,
}

pub enum Read<'a> {
    Columns(Info<'a>),
    NotColumns,
    Malformed,
}

const LATEST_VERSION: i32 = 11;

struct Reader<'a> {
    data: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.at.checked_add(n)?;
        let out = self.data.get(self.at..end)?;
        self.at = end;
        Some(out)
    }

    fn fixed<const N: usize>(&mut self) -> Option<[u8; N]> {
        self.take(N).map(|b| b.try_into().expect("N bytes"))
    }

    fn i16(&mut self) -> Option<i16> {
        self.fixed().map(i16::from_be_bytes)
    }

    fn i32(&mut self) -> Option<i32> {
        self.fixed().map(i32::from_be_bytes)
    }

    fn i64(&mut self) -> Option<i64> {
        self.fixed().map(i64::from_be_bytes)
    }

    /// An array's count, refused where negative or where `min_size` bytes each cannot fit.
    fn count(&mut self, min_size: usize) -> Option<usize> {
        let n = usize::try_from(self.i32()?).ok()?;
        (n.checked_mul(min_size)? <= self.data.len() - self.at).then_some(n)
    }

    /// `int32` length then UTF-8, not nullable.
    fn text(&mut self) -> Option<&'a str> {
        let n = usize::try_from(self.i32()?).ok()?;
        std::str::from_utf8(self.take(n)?).ok()
    }
}

/// The userData's fields, its offset sums counted (`Info::rows`) and checked but not kept.
pub fn read(data: &[u8]) -> Read<'_> {
    read_fields(data).unwrap_or(Read::Malformed)
}

/// The offset sums of a userData `read` took as columns, handed to `row` in byte order.
pub fn each_sum(data: &[u8], info: &Info<'_>, mut row: impl FnMut(i32, i32, i64)) {
    let mut r = Reader {
        data,
        at: info.sums_at,
    };
    let mut go = || -> Option<()> {
        if info.version <= 9 {
            for _ in 0..r.count(8)? {
                let group = r.i32()?;
                for _ in 0..r.count(12)? {
                    let (p, s) = (r.i32()?, r.i64()?);
                    row(group, p, s);
                }
            }
        } else {
            for _ in 0..r.count(18)? {
                let (g, p, s, _) = (r.i32()?, r.i32()?, r.i64()?, r.i16()?);
                row(g, p, s);
            }
        }
        Some(())
    };
    go().expect("read once already");
}

/// The fields; `None` where malformed.
fn read_fields(data: &[u8]) -> Option<Read<'_>> {
    let mut r = Reader { data, at: 0 };
    let version = r.i32()?;
    if !(1..=LATEST_VERSION).contains(&version) {
        return None;
    }
    let latest = if version >= 3 { r.i32()? } else { -1 };
    let process_id = r.take(16)?;
    if version <= 6 {
        return Some(Read::NotColumns);
    }
    let end_point = r.text()?;
    let sums_at = r.at;
    let mut rows = 0usize;
    if version <= 9 {
        for _ in 0..r.count(8)? {
            r.i32()?;
            let n = r.count(12)?;
            r.take(n * 12)?;
            rows += n;
        }
    } else {
        rows = r.count(18)?;
        for _ in 0..rows {
            r.take(16)?;
            if r.i16()? != -1 {
                return Some(Read::NotColumns);
            }
        }
    }
    let unique = if version >= 8 {
        r.fixed::<1>()?[0] as i8
    } else {
        0
    };
    let error = if version >= 9 { r.i32()? } else { 0 };
    let mut tags = Vec::new();
    if version >= 11 {
        for _ in 0..r.count(8)? {
            tags.push((r.text()?, r.text()?));
        }
    }
    if r.at != data.len() {
        return None;
    }
    let info = Info {
        version,
        latest,
        process_id,
        end_point,
        unique,
        error,
        tags,
        rows,
        sums_at,
    };
    Some(Read::Columns(info))
}
