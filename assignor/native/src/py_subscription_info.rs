//! Kafka Streams' userData read as columns (`subscription_info.rs`) as a Python function.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};

use crate::subscription_info::{self, Read};

/// A v7-11 userData as `(version, latest_supported_version, process id's 16 bytes, user end
/// point, unique field, error code, client tags as (key, value) pairs, sums)`, `sums` one
/// `bytes` of three native-endian columns end to end: topic groups (int32), partitions
/// (int32), offset sums (int64), 16 bytes a sum; `None` for v1-6 or a sum naming a topology;
/// `False` where malformed (the Python reader names the fault).
#[pyfunction]
pub fn subscription_columns<'py>(py: Python<'py>, data: &[u8]) -> PyResult<Bound<'py, PyAny>> {
    let info = match subscription_info::read(data) {
        Read::Columns(info) => info,
        Read::NotColumns => return Ok(py.None().into_bound(py)),
        Read::Malformed => return Ok(false.into_pyobject(py)?.to_owned().into_any()),
    };
    let sums = sum_columns(py, info.rows, |row| {
        subscription_info::each_sum(data, &info, row)
    })?;
    let items: Vec<Bound<'py, PyAny>> = vec![
        info.version.into_pyobject(py)?.into_any(),
        info.latest.into_pyobject(py)?.into_any(),
        PyBytes::new(py, info.process_id).into_any(),
        info.end_point.into_pyobject(py)?.into_any(),
        info.unique.into_pyobject(py)?.into_any(),
        info.error.into_pyobject(py)?.into_any(),
        info.tags.into_pyobject(py)?.into_any(),
        sums.into_any(),
    ];
    Ok(PyTuple::new(py, items)?.into_any())
}

/// `rows` offset sums, handed to `row` by `each` in order, as one `bytes` of three
/// native-endian columns end to end (topic groups int32, partitions int32, sums int64): the
/// form the decoder's `offset_sum_columns.sum_columns` reads, from either reader.
pub(crate) fn sum_columns<'py>(
    py: Python<'py>,
    rows: usize,
    each: impl FnOnce(&mut dyn FnMut(i32, i32, i64)),
) -> PyResult<Bound<'py, PyBytes>> {
    PyBytes::new_with(py, rows * 16, |out| {
        let (groups, rest) = out.split_at_mut(rows * 4);
        let (parts, values) = rest.split_at_mut(rows * 4);
        let mut i = 0;
        each(&mut |g, p, s| {
            groups[i * 4..i * 4 + 4].copy_from_slice(&g.to_ne_bytes());
            parts[i * 4..i * 4 + 4].copy_from_slice(&p.to_ne_bytes());
            values[i * 8..i * 8 + 8].copy_from_slice(&s.to_ne_bytes());
            i += 1;
        });
        Ok(())
    })
}
