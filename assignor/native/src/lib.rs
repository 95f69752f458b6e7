//! kassign's compiled core: the sticky assignors' general builder (Kafka's
//! `AbstractStickyAssignor.GeneralAssignmentBuilder`), the constrained builder's rack-aware
//! round robin and the range assignor's rack-matched passes, over partition and member
//! numbers; Kafka Streams' standby placement (least loaded, KIP-708 tags) over task positions
//! and client ranks, the sorted lists of task ids its assignors hand out per client, and the
//! KIP-925 standby graph's groups, arcs and tag diversity (`standby_graph.rs`) and its flows
//! read back (`standby_split.rs`). Around
//! them, the consumer room's bulk byte work: eager sticky's userData (`user_data.rs`), a
//! request's members (`members.rs`), a compact request's owned partitions (`owned.rs`) and a
//! compact answer's members (`members_wire.rs`), each read or written for the whole group at once;
//! and the Streams room's request topology (`tasks.rs`, every task at once, checked).
//! The Streams answer's client and member lists are written likewise, every entry in one call
//! (`streams_wire.rs`; its Python function in `py_streams_wire.rs`), and every client's tasks
//! spread over its stream threads in one pass (`threads.rs`, `py_threads.rs`).
//!
//! The Python functions are defined by room in `py_builders.rs`, `py_streams.rs`,
//! `py_wire.rs` and `py_tasks.rs`; this file holds the conversions they share and the module's table.
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
mod py_builders;
mod py_streams;
mod py_wire;
mod range;
mod standby;
mod standby_graph;
mod standby_split;
mod user_data;

// The Streams room's request topology (issue 24, branch streams-decode).
mod py_tasks;
mod tasks;

// The Streams answer's lists as wire bytes (issue 24, branch streams-encode).
mod py_streams_wire;
mod streams_wire;

// The Streams room's members: Kafka Streams' userData offset sums as columns (issue 24,
// branch streams-members).
mod py_subscription_info;
mod subscription_info;

// The Streams room's members, every member at once (issue 24, branch streams-member-read).
mod py_streams_members;
mod streams_members;

// The Streams room's thread distribution, the whole group at once (issue 24, branch
// threads-native).
mod py_threads;
mod threads;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

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

#[pymodule]
fn kassign_native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(py_builders::general_assignment, m)?)?;
    m.add_function(wrap_pyfunction!(py_builders::rack_round_robin, m)?)?;
    m.add_function(wrap_pyfunction!(py_builders::range_with_racks, m)?)?;
    m.add_function(wrap_pyfunction!(py_streams::standby_placement, m)?)?;
    m.add_function(wrap_pyfunction!(py_streams::picked_sorted, m)?)?;
    m.add_function(wrap_pyfunction!(py_streams::picked_runs, m)?)?;
    m.add_function(wrap_pyfunction!(py_streams::standby_groups, m)?)?;
    m.add_function(wrap_pyfunction!(py_streams::standby_compact_graph, m)?)?;
    m.add_function(wrap_pyfunction!(py_streams::standby_diversity, m)?)?;
    m.add_function(wrap_pyfunction!(py_streams::standby_split, m)?)?;
    m.add_function(wrap_pyfunction!(py_wire::first_seen, m)?)?;
    m.add_function(wrap_pyfunction!(py_wire::sticky_user_data, m)?)?;
    m.add_function(wrap_pyfunction!(py_wire::owned_by_topic, m)?)?;
    m.add_function(wrap_pyfunction!(py_wire::request_members, m)?)?;
    m.add_function(wrap_pyfunction!(py_wire::compact_members, m)?)?;
    // The Streams room's request topology (issue 24, branch streams-decode).
    m.add_function(wrap_pyfunction!(py_tasks::request_tasks, m)?)?;

    // The Streams answer's lists (issue 24, branch streams-encode).
    m.add_function(wrap_pyfunction!(py_streams_wire::streams_lists, m)?)?;
    // The Streams room's members (branch streams-members).
    m.add_function(wrap_pyfunction!(
        py_subscription_info::subscription_columns,
        m
    )?)?;
    // The Streams room's members, every member at once (branch streams-member-read).
    m.add_function(wrap_pyfunction!(py_streams_members::streams_members, m)?)?;
    // The Streams room's thread distribution (branch threads-native).
    m.add_function(wrap_pyfunction!(py_threads::thread_distribution, m)?)?;
    Ok(())
}
