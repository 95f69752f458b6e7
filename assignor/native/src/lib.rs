//! kassign's compiled core: the sticky assignors' general builder (Kafka's
//! `AbstractStickyAssignor.GeneralAssignmentBuilder`), the constrained builder's rack-aware
//! round robin and the range assignor's rack-matched passes, over partition and member
//! numbers; Kafka Streams' standby placement (least loaded, KIP-708 tags) over task positions
//! and client ranks, and the sorted lists of task ids its assignors hand out per client. Around
//! them, the consumer room's bulk byte work: eager sticky's userData (`user_data.rs`), a compact
//! request's owned partitions (`owned.rs`) and a compact answer's members (`members_wire.rs`),
//! each read or written for the whole group at once.
//!
//! Python (`kassign.assignor.consumer.sticky_general`, `sticky_constrained`,
//! `range_assignor`, `kassign.assignor.streams.standby`)
//! turns the group into numbers and back; this computes, without the GIL. The module
//! docstrings there state the algorithms; the comments here say where Java's orders decide the
//! answer.

mod constrained;
mod general;
mod hash_table;
mod lists;
mod members;
mod members_wire;
mod movements;
mod owned;
mod range;
mod standby;
mod user_data;

use std::collections::HashMap;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::pybacked::{PyBackedBytes, PyBackedStr};
use pyo3::types::{PyBytes, PyTuple};

/// Native-endian `int64` values of `bytes` (numpy's `tobytes()`), as unsigned 32-bit numbers.
fn ids(raw: &[u8], what: &str) -> PyResult<Vec<u32>> {
    if !raw.len().is_multiple_of(8) {
        return Err(PyValueError::new_err(format!(
            "{what}: not a multiple of 8 bytes"
        )));
    }
    raw.chunks_exact(8)
        .map(|c| {
            let v = i64::from_ne_bytes(c.try_into().expect("8 bytes"));
            u32::try_from(v).map_err(|_| PyValueError::new_err(format!("{what}: {v} out of range")))
        })
        .collect()
}

fn spans(ends: &[u32], total: usize, what: &str) -> PyResult<()> {
    let mut last = 0;
    for &e in ends {
        if e < last || e as usize > total {
            return Err(PyValueError::new_err(format!("{what}: bad ends")));
        }
        last = e;
    }
    Ok(())
}

/// The general assignment; see `sticky_general.build` for the meaning of each argument.
/// Returns (ids, ends, member order, null-pointer) where member `i`'s partitions are
/// `ids[ends[i-1]:ends[i]]` and null-pointer is `(partition, member)` when Kafka would throw.
#[pyfunction]
#[pyo3(signature = (
    offsets, topic_hashes, rank, subscription_sets, subscription_of, owned_order,
    owned, owned_ends, previous_generation, previous, previous_ends,
    member_rack, set_of, set_has, racks, checkpoint, java_set_order = true
))]
#[allow(clippy::too_many_arguments)]
fn general_assignment<'py>(
    py: Python<'py>,
    offsets: Vec<u32>,
    topic_hashes: Vec<u32>,
    rank: Vec<u32>,
    subscription_sets: Vec<Vec<u32>>,
    subscription_of: Vec<u32>,
    owned_order: Vec<u32>,
    owned: &[u8],
    owned_ends: Vec<u32>,
    previous_generation: Vec<Option<i64>>,
    previous: &[u8],
    previous_ends: Vec<u32>,
    member_rack: Vec<i64>,
    set_of: &[u8],
    set_has: Vec<bool>,
    racks: usize,
    checkpoint: Py<PyAny>,
    java_set_order: bool,
) -> PyResult<GeneralOut<'py>> {
    let n = rank.len();
    let topics = topic_hashes.len();
    if offsets.len() != topics + 1
        || subscription_of.len() != n
        || owned_order.len() != n
        || owned_ends.len() != n
        || previous_generation.len() != n
        || previous_ends.len() != n
        || member_rack.len() != n
    {
        return Err(PyValueError::new_err(
            "general_assignment: lengths disagree",
        ));
    }
    let owned = ids(owned, "owned")?;
    let previous = ids(previous, "previous")?;
    let set_of = ids(set_of, "set_of")?;
    spans(&owned_ends, owned.len(), "owned")?;
    spans(&previous_ends, previous.len(), "previous")?;
    let total = *offsets.last().unwrap_or(&0);
    let input = general::Input {
        offsets,
        topic_hashes,
        rank,
        subscription_sets,
        subscription_of,
        owned_order,
        owned,
        owned_ends,
        previous_generation,
        previous,
        previous_ends,
        member_rack,
        set_of,
        set_has,
        racks,
        java_set_order,
    };
    input.check(total).map_err(PyValueError::new_err)?;
    let out = py.detach(|| general::build(&input, &mut general::Checkpoint::new(checkpoint)))?;
    let mut bytes = Vec::with_capacity(out.ids.len() * 8);
    for id in &out.ids {
        bytes.extend_from_slice(&i64::from(*id).to_ne_bytes());
    }
    Ok((
        PyBytes::new(py, &bytes),
        out.ends,
        out.order,
        out.null_pointer,
    ))
}

/// The constrained builder's rack-aware round robin; see `sticky_constrained` for the
/// arguments. Returns (per partition of `unassigned` its member or -1, as int64 bytes;
/// `under_min`, `at_min` and `over` after it).
#[pyfunction]
#[pyo3(signature = (
    unassigned, under_min, at_min, counts, min_quota, max_quota, over, expected_over,
    member_rack, set_of, set_has, racks
))]
#[allow(clippy::too_many_arguments)]
fn rack_round_robin<'py>(
    py: Python<'py>,
    unassigned: &[u8],
    mut under_min: Vec<u32>,
    mut at_min: Vec<u32>,
    mut counts: Vec<u32>,
    min_quota: u32,
    max_quota: u32,
    over: u32,
    expected_over: u32,
    member_rack: Vec<i64>,
    set_of: &[u8],
    set_has: Vec<bool>,
    racks: usize,
) -> PyResult<RoundRobinOut<'py>> {
    let unassigned = ids(unassigned, "unassigned")?;
    let set_of = ids(set_of, "set_of")?;
    let members = counts.len();
    let sets = set_has.len().checked_div(racks).unwrap_or(0);
    let bad = member_rack.len() != members
        || set_has.len() != sets * racks
        || member_rack.iter().any(|&r| r >= racks as i64)
        || under_min
            .iter()
            .chain(&at_min)
            .any(|&m| m as usize >= members)
        || unassigned.iter().any(|&p| p as usize >= set_of.len())
        || set_of.iter().any(|&s| s as usize >= sets);
    if bad {
        return Err(PyValueError::new_err(
            "rack_round_robin: inconsistent input",
        ));
    }
    let mut quotas = constrained::Quotas {
        min: min_quota,
        max: max_quota,
        over,
        expected_over,
    };
    let rack_of = constrained::Racks {
        member_rack: &member_rack,
        set_of: &set_of,
        set_has: &set_has,
        racks,
    };
    let placed = py.detach(|| {
        constrained::rack_round_robin(
            &unassigned,
            &mut under_min,
            &mut at_min,
            &mut counts,
            &mut quotas,
            &rack_of,
        )
    });
    let mut bytes = Vec::with_capacity(placed.len() * 8);
    for m in &placed {
        bytes.extend_from_slice(&m.to_ne_bytes());
    }
    Ok((PyBytes::new(py, &bytes), under_min, at_min, quotas.over))
}

/// The range assignor when some topic needs rack matching; see `range_assignor` for the
/// arguments. Returns each partition id's member (its place in member order), int64 bytes.
#[pyfunction]
#[pyo3(signature = (
    offsets, subscribers, subscriber_ends, passes, member_rack, set_of, set_has, racks,
    checkpoint
))]
#[allow(clippy::too_many_arguments)]
fn range_with_racks(
    py: Python<'_>,
    offsets: Vec<u32>,
    subscribers: &[u8],
    subscriber_ends: Vec<u32>,
    passes: Vec<Vec<u32>>,
    member_rack: Vec<i64>,
    set_of: &[u8],
    set_has: Vec<bool>,
    racks: usize,
    checkpoint: Py<PyAny>,
) -> PyResult<Py<PyBytes>> {
    let input = range::Input {
        offsets,
        subscribers: ids(subscribers, "subscribers")?,
        subscriber_ends,
        member_rack,
        set_of: ids(set_of, "set_of")?,
        set_has,
        racks,
    };
    input.check(&passes).map_err(PyValueError::new_err)?;
    let owner =
        py.detach(|| range::assign(&input, &passes, &mut general::Checkpoint::new(checkpoint)))?;
    Ok(ne_bytes(py, &owner, i64::to_ne_bytes))
}

/// Standby placement; see `streams.standby.place_standby_indexed` for the arguments. The
/// actives come as `(task position, rank)` pairs, two int64 columns (numpy's `tobytes()`): the
/// high-availability assignor holds them as a column, not as a set per client (issue 24).
/// Returns (per rank the task positions it received, in order; with tags the `(task, rank)`
/// replicas placed least loaded; the tasks left short).
#[pyfunction]
#[pyo3(signature = (
    replicas, tasks, active_tasks, active_ranks, capacities, counts, group, distinct, values,
    sizes, tag_aware, checkpoint
))]
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
fn standby_placement(
    py: Python<'_>,
    replicas: u32,
    tasks: usize,
    active_tasks: &[u8],
    active_ranks: &[u8],
    capacities: Vec<u32>,
    counts: Vec<u32>,
    group: Vec<u32>,
    distinct: Vec<u32>,
    values: Vec<Vec<i32>>,
    sizes: Vec<u32>,
    tag_aware: bool,
    checkpoint: Py<PyAny>,
) -> PyResult<(Vec<Vec<u32>>, Vec<(u32, u32)>, Vec<u32>)> {
    let clients = capacities.len();
    let active_tasks = ids(active_tasks, "standby_placement")?;
    let active_ranks = ids(active_ranks, "standby_placement")?;
    let bad = active_tasks.len() != active_ranks.len()
        || counts.len() != clients
        || group.len() != clients
        || group.iter().any(|&g| g as usize >= sizes.len())
        || values.len() != sizes.len()
        || values.iter().any(|v| v.len() != distinct.len())
        || active_tasks.iter().any(|&t| t as usize >= tasks)
        || active_ranks.iter().any(|&c| c as usize >= clients);
    if bad {
        return Err(PyValueError::new_err(
            "standby_placement: inconsistent input",
        ));
    }
    let mut holding: Vec<Vec<u32>> = vec![Vec::new(); tasks];
    for (&t, &rank) in active_tasks.iter().zip(&active_ranks) {
        holding[t as usize].push(rank);
    }
    for held in holding.iter_mut().filter(|h| h.len() > 1) {
        held.sort_unstable(); // holders by rank, whatever the pairs' order
    }
    let group = if tag_aware { group } else { vec![0; clients] }; // no tags: one group
    let input = standby::Input {
        replicas,
        holding,
        capacities,
        counts,
        group,
        tags: tag_aware.then_some(standby::Tags {
            distinct,
            values,
            sizes,
        }),
    };
    let out = py.detach(|| standby::place(input, &mut general::Checkpoint::new(checkpoint)))?;
    Ok((out.placed, out.untagged, out.short))
}

/// Per collection of `held` (any iterable of positions in `items`), the items at its positions
/// in ascending order, as a tuple: shared objects (task ids, the layout's ints) in sorted lists
/// for every client at once (a `sorted` and an `itemgetter` per client in Python; issue 24).
#[pyfunction]
fn picked_sorted<'py>(
    py: Python<'py>,
    items: &Bound<'py, PyTuple>,
    held: Vec<Bound<'py, PyAny>>,
) -> PyResult<Vec<Bound<'py, PyTuple>>> {
    let n = items.len();
    let mut positions: Vec<usize> = Vec::new();
    let mut out = Vec::with_capacity(held.len());
    for h in &held {
        positions.clear();
        for p in h.try_iter()? {
            let p: usize = p?.extract()?;
            if p >= n {
                return Err(PyValueError::new_err(format!(
                    "picked_sorted: position {p} past {n} items"
                )));
            }
            positions.push(p);
        }
        positions.sort_unstable();
        out.push(picked_tuple(py, items, &positions)?);
    }
    Ok(out)
}

/// `items` at `positions` (each checked by the caller), as a tuple of the same objects.
fn picked_tuple<'py>(
    py: Python<'py>,
    items: &Bound<'py, PyTuple>,
    positions: &[usize],
) -> PyResult<Bound<'py, PyTuple>> {
    let picked = positions
        .iter()
        .map(|&p| items.get_item(p))
        .collect::<PyResult<Vec<_>>>()?;
    PyTuple::new(py, picked)
}

/// Per run `positions[ends[i-1]:ends[i]]` (native-endian int64 bytes, numpy's `tobytes()`),
/// the items at those positions in the order given, as a tuple: a client's task list read
/// straight from the high-availability assignor's integer columns, every client in one call
/// (issue 24: a slice and an `itemgetter` per client in Python).
#[pyfunction]
fn picked_runs<'py>(
    py: Python<'py>,
    items: &Bound<'py, PyTuple>,
    positions: &[u8],
    ends: Vec<u32>,
) -> PyResult<Vec<Bound<'py, PyTuple>>> {
    let n = items.len();
    let positions = ids(positions, "picked_runs")?;
    spans(&ends, positions.len(), "picked_runs")?;
    if let Some(&p) = positions.iter().find(|&&p| p as usize >= n) {
        return Err(PyValueError::new_err(format!(
            "picked_runs: position {p} past {n} items"
        )));
    }
    let mut out = Vec::with_capacity(ends.len());
    let mut run: Vec<usize> = Vec::new();
    let mut start = 0;
    for &end in &ends {
        run.clear();
        run.extend(positions[start..end as usize].iter().map(|&p| p as usize));
        out.push(picked_tuple(py, items, &run)?);
        start = end as usize;
    }
    Ok(out)
}

/// Every value of `layouts` (tuples, end to end) numbered by value in order of first
/// appearance, as a Python dict would number them (a hash, then identity or equality), and the
/// distinct values in that order: the replica rack sets of a group's partitions
/// (`kassign.assignor.consumer.columns.replica_rack_sets`), a `frozenset` per partition,
/// without a Python step each (issue 24). Holds the GIL: it calls each value's hash.
#[pyfunction]
fn first_seen<'py>(
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

/// `values` as native-endian bytes (numpy's and `array`'s layout), without a copy per value.
fn ne_bytes<T: Copy, const N: usize>(
    py: Python<'_>,
    values: &[T],
    to: impl Fn(T) -> [u8; N],
) -> Py<PyBytes> {
    let mut bytes = Vec::with_capacity(values.len() * N);
    for &v in values {
        bytes.extend_from_slice(&to(v));
    }
    PyBytes::new(py, &bytes).unbind()
}

/// Eager `StickyAssignor` userData of every member at once (`None`: nothing), read
/// without the GIL; see `user_data.rs`. Returns (topic names; per member its generation (v1)
/// or `None`, and `(reason, offset)` where its bytes fit neither layout, else `None`; per
/// member the end of its entries and of its numbers; per entry its name's index and its count;
/// the numbers) — every column native-endian int64 bytes but the numbers, int32.
#[pyfunction]
#[allow(clippy::type_complexity)]
fn sticky_user_data(
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
fn owned_by_topic(
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

fn text<'a>(bytes: &'a [u8], member: usize, what: &str) -> PyResult<&'a str> {
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
fn request_members<'py>(py: Python<'py>, data: &[u8]) -> PyResult<Bound<'py, PyTuple>> {
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

/// `general_assignment`'s answer: owners as int64 bytes, two member lists, and the first
/// unbalanced pair if any.
type GeneralOut<'py> = (Bound<'py, PyBytes>, Vec<u32>, Vec<u32>, Option<(u32, u32)>);

/// `rack_round_robin`'s answer: owners as int64 bytes, `under_min`, `at_min` and `over`.
type RoundRobinOut<'py> = (Bound<'py, PyBytes>, Vec<u32>, Vec<u32>, u32);

fn int64s(raw: &[u8], what: &str) -> PyResult<Vec<i64>> {
    if !raw.len().is_multiple_of(8) {
        return Err(PyValueError::new_err(format!("{what}: not int64")));
    }
    Ok(raw
        .chunks_exact(8)
        .map(|c| i64::from_ne_bytes(c.try_into().expect("8 bytes")))
        .collect())
}

fn runs_in(runs: &RunsIn, what: &str) -> PyResult<Runs> {
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
fn compact_members(
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

#[pymodule]
fn kassign_native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(general_assignment, m)?)?;
    m.add_function(wrap_pyfunction!(rack_round_robin, m)?)?;
    m.add_function(wrap_pyfunction!(range_with_racks, m)?)?;
    m.add_function(wrap_pyfunction!(standby_placement, m)?)?;
    m.add_function(wrap_pyfunction!(picked_sorted, m)?)?;
    m.add_function(wrap_pyfunction!(picked_runs, m)?)?;
    m.add_function(wrap_pyfunction!(first_seen, m)?)?;
    m.add_function(wrap_pyfunction!(sticky_user_data, m)?)?;
    m.add_function(wrap_pyfunction!(owned_by_topic, m)?)?;
    m.add_function(wrap_pyfunction!(request_members, m)?)?;
    m.add_function(wrap_pyfunction!(compact_members, m)?)?;
    Ok(())
}
