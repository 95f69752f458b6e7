//! The consumer assignors' builders as Python functions: the sticky assignors' general builder,
//! the constrained builder's rack-aware round robin and the range assignor's rack-matched passes
//! (`general.rs`, `constrained.rs`, `range.rs` compute; this checks and converts).

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::{constrained, general, ids, ne_bytes, range, spans};

/// `general_assignment`'s answer: owners as int64 bytes, two member lists, and the first
/// unbalanced pair if any.
type GeneralOut<'py> = (Bound<'py, PyBytes>, Vec<u32>, Vec<u32>, Option<(u32, u32)>);

/// `rack_round_robin`'s answer: owners as int64 bytes, `under_min`, `at_min` and `over`.
type RoundRobinOut<'py> = (Bound<'py, PyBytes>, Vec<u32>, Vec<u32>, u32);

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
pub(crate) fn general_assignment<'py>(
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
pub(crate) fn rack_round_robin<'py>(
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
pub(crate) fn range_with_racks(
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
