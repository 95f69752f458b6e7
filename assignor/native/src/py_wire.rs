//! The consumer room's bulk byte work as Python functions, each over the whole group at once:
//! eager sticky's userData (`user_data.rs`), a request's members (`members.rs`) and a compact
//! request's owned partitions (`owned.rs`), a compact answer's members (`members_wire.rs`), and
//! the replica rack sets numbered by value.

use std::collections::HashMap;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::pybacked::{PyBackedBytes, PyBackedStr};
use pyo3::types::{PyBytes, PyTuple};

use crate::{members, members_wire, ne_bytes, owned, user_data};

/// Every value of `layouts` (tuples, end to end) numbered by value in order of first
/// appearance, as a Python dict would number them (a hash, then identity or equality), and the
/// distinct values in that order: the replica rack sets of a group's partitions
/// (`kassign.assignor.consumer.columns.replica_rack_sets`), a `frozenset` per partition,
/// without a Python step each (issue 24). Holds the GIL: it calls each value's hash.
#[pyfunction]
pub(crate) fn first_seen<'py>(
    py: Python<'py>,
    layouts: Vec<Bound<'py, PyTuple>>,
) -> PyResult<(Vec<Bound<'py, PyAny>>, Py<PyBytes>)> {
    let mut distinct: Vec<Bound<'py, PyAny>> = Vec::new();
    let mut by_hash: HashMap<isize, Vec<usize>> = HashMap::new();
    let mut numbers: Vec<i64> = Vec::with_capacity(layouts.iter().map(|l| l.len()).sum());
    for layout in &layouts {
        for value in layout.iter() {
            let hash = value.hash()?;
            let mut found = None;
            if let Some(seen) = by_hash.get(&hash) {
                for &at in seen {
                    if distinct[at].is(&value) || distinct[at].eq(&value)? {
                        found = Some(at);
                        break;
                    }
                }
            }
            let at = match found {
                Some(at) => at,
                None => {
                    distinct.push(value);
                    by_hash.entry(hash).or_default().push(distinct.len() - 1);
                    distinct.len() - 1
                }
            };
            numbers.push(at as i64);
        }
    }
    Ok((distinct, ne_bytes(py, &numbers, i64::to_ne_bytes)))
}

/// Eager `StickyAssignor` userData of every member at once (`None`: nothing), read
/// without the GIL; see `user_data.rs`. Returns (topic names; per member its generation (v1)
/// or `None`, and `(reason, offset)` where its bytes fit neither layout, else `None`; per
/// member the end of its entries and of its numbers; per entry its name's index and its count;
/// the numbers) — every column native-endian int64 bytes but the numbers, int32.
#[pyfunction]
#[allow(clippy::type_complexity)]
pub(crate) fn sticky_user_data(
    py: Python<'_>,
    members: Vec<Option<PyBackedBytes>>,
) -> (
    Vec<String>,
    Vec<Option<i32>>,
    Vec<Option<(String, usize)>>,
    Py<PyBytes>,
    Py<PyBytes>,
    Py<PyBytes>,
    Py<PyBytes>,
    Py<PyBytes>,
) {
    let slices: Vec<Option<&[u8]>> = members.iter().map(|m| m.as_deref()).collect();
    let c = py.detach(|| user_data::read(&slices));
    (
        c.names,
        c.generations,
        c.failures,
        ne_bytes(py, &c.entry_ends, i64::to_ne_bytes),
        ne_bytes(py, &c.number_ends, i64::to_ne_bytes),
        ne_bytes(py, &c.entry_topic, i64::to_ne_bytes),
        ne_bytes(py, &c.entry_count, i64::to_ne_bytes),
        ne_bytes(py, &c.numbers, i32::to_ne_bytes),
    )
}

/// Every member's compact `ConsumerSubscription` bytes (`None`: none sent) read for their
/// `owned_by_topic` entries, without the GIL; see `owned.rs`. Returns (topic names;
/// per member whether its entries are sorted; per member the end of its entries and of its
/// numbers; per entry its name's index and its count, int64 bytes; the numbers, int32 bytes;
/// native byte order), or `ValueError` naming the member and offset where bytes are not
/// protobuf.
#[pyfunction]
#[allow(clippy::type_complexity)]
pub(crate) fn owned_by_topic(
    py: Python<'_>,
    members: Vec<Option<PyBackedBytes>>,
) -> PyResult<(
    Vec<String>,
    Vec<bool>,
    Py<PyBytes>,
    Py<PyBytes>,
    Py<PyBytes>,
    Py<PyBytes>,
    Py<PyBytes>,
)> {
    let slices: Vec<Option<&[u8]>> = members.iter().map(|m| m.as_deref()).collect();
    let (c, sorted) = py
        .detach(|| owned::read(&slices))
        .map_err(|(i, (what, at))| {
            PyValueError::new_err(format!("member {i}: {what} at byte {at}"))
        })?;
    Ok((
        c.names,
        sorted,
        ne_bytes(py, &c.entry_ends, i64::to_ne_bytes),
        ne_bytes(py, &c.number_ends, i64::to_ne_bytes),
        ne_bytes(py, &c.entry_topic, i64::to_ne_bytes),
        ne_bytes(py, &c.entry_count, i64::to_ne_bytes),
        ne_bytes(py, &c.numbers, i32::to_ne_bytes),
    ))
}

pub(crate) fn text<'a>(bytes: &'a [u8], member: usize, what: &str) -> PyResult<&'a str> {
    std::str::from_utf8(bytes)
        .map_err(|_| PyValueError::new_err(format!("member {member}: {what} is not UTF-8")))
}

/// A `ConsumerAssignRequest`'s members read from its bytes, every member's fields as columns
/// (the read without the GIL; see `members.rs`). Returns a tuple, per member each: id,
/// instance id, kind (`"subscription"`, `"raw_subscription"`, `None`), raw subscription bytes
/// (`b""` unless raw), `user_data` (`"info"`, `"info_bytes"`, `"user_data_bytes"`, `None`),
/// its bytes (`None` unless bytes), `topic_list` or `None`, topics (a list), owned partitions'
/// count, `owned_by_topic`'s count, its fields' bytes (`None` when none), rack, generation or
/// `None`, capacity or `None`; or `ValueError` naming the member and offset where bytes are
/// not protobuf.
#[pyfunction]
pub(crate) fn request_members<'py>(py: Python<'py>, data: &[u8]) -> PyResult<Bound<'py, PyTuple>> {
    let read = py
        .detach(|| members::read(data))
        .map_err(|(i, (what, at))| {
            PyValueError::new_err(format!("member {i}: {what} at byte {at}"))
        })?;
    let n = read.len();
    let (mut ids, mut instances, mut racks) = (
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
    );
    let mut topics: Vec<Vec<&str>> = Vec::with_capacity(n);
    for (i, m) in read.iter().enumerate() {
        ids.push(text(m.id, i, "member_id")?);
        instances.push(text(m.instance_id, i, "group_instance_id")?);
        racks.push(text(m.rack, i, "rack_id")?);
        topics.push(
            m.topics
                .iter()
                .map(|t| text(t, i, "a topic"))
                .collect::<PyResult<_>>()?,
        );
    }
    let kinds: Vec<Option<&str>> = read
        .iter()
        .map(|m| match m.kind {
            members::KIND_SUBSCRIPTION => Some("subscription"),
            members::KIND_RAW => Some("raw_subscription"),
            members::KIND_NONE => None,
            other => unreachable!("member kind {other}"),
        })
        .collect();
    let raw: Vec<Bound<'py, PyBytes>> = read.iter().map(|m| PyBytes::new(py, m.raw)).collect();
    let which: Vec<Option<&str>> = read
        .iter()
        .map(|m| match m.user_data {
            5 => Some("info"),
            6 => Some("info_bytes"),
            7 => Some("user_data_bytes"),
            _ => None,
        })
        .collect();
    let data_bytes: Vec<Option<Bound<'py, PyBytes>>> = read
        .iter()
        .map(|m| {
            (m.user_data == 6 || m.user_data == 7).then(|| PyBytes::new(py, m.user_data_bytes))
        })
        .collect();
    let by_topic_bytes: Vec<Option<Bound<'py, PyBytes>>> = read
        .iter()
        .map(|m| (m.by_topic > 0).then(|| PyBytes::new(py, &m.by_topic_bytes)))
        .collect();
    let lists: Vec<Option<i32>> = read.iter().map(|m| m.topic_list).collect();
    let owned: Vec<i64> = read.iter().map(|m| m.owned_partitions).collect();
    let by_topic: Vec<i64> = read.iter().map(|m| m.by_topic).collect();
    let generations: Vec<Option<i32>> = read.iter().map(|m| m.generation).collect();
    let capacities: Vec<Option<f64>> = read.iter().map(|m| m.capacity).collect();
    let columns: Vec<Bound<'py, PyAny>> = vec![
        ids.into_pyobject(py)?.into_any(),
        instances.into_pyobject(py)?.into_any(),
        kinds.into_pyobject(py)?.into_any(),
        raw.into_pyobject(py)?.into_any(),
        which.into_pyobject(py)?.into_any(),
        data_bytes.into_pyobject(py)?.into_any(),
        lists.into_pyobject(py)?.into_any(),
        topics.into_pyobject(py)?.into_any(),
        owned.into_pyobject(py)?.into_any(),
        by_topic.into_pyobject(py)?.into_any(),
        by_topic_bytes.into_pyobject(py)?.into_any(),
        racks.into_pyobject(py)?.into_any(),
        generations.into_pyobject(py)?.into_any(),
        capacities.into_pyobject(py)?.into_any(),
    ];
    PyTuple::new(py, columns)
}

/// A list as `compact_members` takes it: per entry its topic's index in the answer's table
/// and its partition, and per member two (`[start, end)` of its entries), int64 bytes each,
/// native order.
type RunsIn = (PyBackedBytes, PyBackedBytes, PyBackedBytes);

/// A `RunsIn` read: per entry its topic index and partition, per member its `[start, end)`.
type Runs = (Vec<i64>, Vec<i64>, Vec<[usize; 2]>);

pub(crate) fn int64s(raw: &[u8], what: &str) -> PyResult<Vec<i64>> {
    if !raw.len().is_multiple_of(8) {
        return Err(PyValueError::new_err(format!("{what}: not int64")));
    }
    Ok(raw
        .chunks_exact(8)
        .map(|c| i64::from_ne_bytes(c.try_into().expect("8 bytes")))
        .collect())
}

pub(crate) fn runs_in(runs: &RunsIn, what: &str) -> PyResult<Runs> {
    let (topics, numbers, spans) = runs;
    let topics = int64s(topics, what)?;
    let numbers = int64s(numbers, what)?;
    if topics.len() != numbers.len() {
        return Err(PyValueError::new_err(format!(
            "{what}: not one topic per partition"
        )));
    }
    let spans = int64s(spans, what)?;
    if !spans.len().is_multiple_of(2) {
        return Err(PyValueError::new_err(format!(
            "{what}: spans not two int64 per member"
        )));
    }
    let spans = spans
        .chunks_exact(2)
        .map(|s| match (usize::try_from(s[0]), usize::try_from(s[1])) {
            (Ok(a), Ok(b)) if a <= b && b <= topics.len() => Ok([a, b]),
            _ => Err(PyValueError::new_err(format!(
                "{what}: span {:?} outside the entries",
                (s[0], s[1])
            ))),
        })
        .collect::<PyResult<Vec<_>>>()?;
    Ok((topics, numbers, spans))
}

/// The compact answer's `members` as wire bytes, every member framed at once without the GIL;
/// see `members_wire.rs`. `assigned` and `revoked` (`RunsIn`, cut into runs and packed
/// there): `None` when every list is empty;
/// `assignments`: Kafka's bytes per member, when asked for. `ValueError` when the columns do
/// not fit the members.
#[pyfunction]
#[pyo3(signature = (ids, assigned, revoked, assignments))]
pub(crate) fn compact_members(
    py: Python<'_>,
    ids: Vec<PyBackedStr>,
    assigned: Option<RunsIn>,
    revoked: Option<RunsIn>,
    assignments: Option<Vec<PyBackedBytes>>,
) -> PyResult<Py<PyBytes>> {
    let assigned = assigned
        .as_ref()
        .map(|r| runs_in(r, "assigned"))
        .transpose()?;
    let revoked = revoked
        .as_ref()
        .map(|r| runs_in(r, "revoked"))
        .transpose()?;
    let pack = |l: Option<Runs>| l.map(|(t, n, s)| members_wire::pack(&t, &n, &s));
    let id_bytes: Vec<&[u8]> = ids.iter().map(|i| i.as_bytes()).collect();
    let kafka: Option<Vec<&[u8]>> = assignments
        .as_ref()
        .map(|a| a.iter().map(|b| &b[..]).collect());
    let out = py
        .detach(|| {
            let (assigned, revoked) = (pack(assigned), pack(revoked));
            members_wire::write(
                &id_bytes,
                assigned.as_ref(),
                revoked.as_ref(),
                kafka.as_deref(),
            )
        })
        .map_err(PyValueError::new_err)?;
    Ok(PyBytes::new(py, &out).unbind())
}
