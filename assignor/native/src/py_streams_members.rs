//! A Kafka Streams request's members (`streams_members.rs`) as a Python function.

use std::collections::HashMap;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString, PyTuple};

use crate::py_subscription_info::sum_columns;
use crate::streams_members::{read, Group};

fn sums<'py>(py: Python<'py>, rows: &[(i32, i32, i64)]) -> PyResult<Bound<'py, PyBytes>> {
    sum_columns(py, rows.len(), |row| {
        rows.iter().for_each(|&(g, p, s)| row(g, p, s))
    })
}

fn columns<'py>(py: Python<'py>, group: &Group<'_>) -> PyResult<Vec<Bound<'py, PyAny>>> {
    let members = &group.members;
    let ids: Vec<&str> = members.iter().map(|m| m.id).collect();
    let instances: Vec<&str> = members.iter().map(|m| m.instance_id).collect();
    let racks: Vec<&str> = members.iter().map(|m| m.rack).collect();
    let generations: Vec<Option<i32>> = members.iter().map(|m| m.generation).collect();
    let info_of: Vec<usize> = members.iter().map(|m| m.info).collect();
    // one tuple per distinct topic list: a group's members mostly send the same
    let mut lists: HashMap<&[&str], Bound<'py, PyTuple>> = HashMap::new();
    let mut topics = Vec::with_capacity(members.len());
    for m in members {
        let list = match lists.get(m.topics.as_slice()) {
            Some(t) => t.clone(),
            None => {
                let made = PyTuple::new(py, &m.topics)?;
                lists.insert(m.topics.as_slice(), made.clone());
                made
            }
        };
        topics.push(list);
    }
    let mut owned: Vec<Option<Bound<'py, PyTuple>>> = Vec::with_capacity(members.len());
    for m in members {
        if m.owned.is_empty() {
            owned.push(None);
            continue;
        }
        let names: Vec<Bound<'py, PyString>> =
            m.owned.iter().map(|o| PyString::new(py, o.0)).collect();
        let counts: Vec<u8> = m
            .owned
            .iter()
            .flat_map(|o| (o.1.len() as i64).to_ne_bytes())
            .collect();
        let numbers: Vec<u8> = m
            .owned
            .iter()
            .flat_map(|o| o.1.iter().flat_map(|p| p.to_ne_bytes()))
            .collect();
        let items: Vec<Bound<'py, PyAny>> = vec![
            PyTuple::new(py, names)?.into_any(),
            PyBytes::new(py, &counts).into_any(),
            PyBytes::new(py, &numbers).into_any(),
        ];
        owned.push(Some(PyTuple::new(py, items)?));
    }
    let mut infos = Vec::with_capacity(group.infos.len());
    for info in &group.infos {
        let items: Vec<Bound<'py, PyAny>> = vec![
            info.field.into_pyobject(py)?.into_any(),
            info.version.into_pyobject(py)?.into_any(),
            info.latest.into_pyobject(py)?.into_any(),
            info.process_id.into_pyobject(py)?.into_any(),
            info.end_point.into_pyobject(py)?.into_any(),
            info.unique.into_pyobject(py)?.into_any(),
            info.error.into_pyobject(py)?.into_any(),
            PyTuple::new(py, &info.tags)?.into_any(),
            sums(py, &info.sums)?.into_any(),
        ];
        infos.push(PyTuple::new(py, items)?);
    }
    Ok(vec![
        ids.into_pyobject(py)?.into_any(),
        instances.into_pyobject(py)?.into_any(),
        topics.into_pyobject(py)?.into_any(),
        racks.into_pyobject(py)?.into_any(),
        generations.into_pyobject(py)?.into_any(),
        owned.into_pyobject(py)?.into_any(),
        info_of.into_pyobject(py)?.into_any(),
        infos.into_pyobject(py)?.into_any(),
        group.longest.into_pyobject(py)?.into_any(),
        group.owned.into_pyobject(py)?.into_any(),
        group.reported.into_pyobject(py)?.into_any(),
    ])
}

/// An `AssignRequest`'s members as columns: `(member ids, group instance ids, topic tuples,
/// racks, generations (None: unknown), owned (None, or (topics, int64 counts, int32 numbers)
/// as bytes, sorted), each member's userData index, the distinct userData (field number,
/// version, latest supported version, process id as an int, end point, unique field, error
/// code, tags sorted, offset sums as `subscription_columns`' bytes), the longest string's
/// UTF-8 bytes, owned partitions, reported tasks)`; `None` where a member is not of the
/// common shape or holds a fault (the decoder's walk reads and words it).
#[pyfunction]
pub fn streams_members<'py>(py: Python<'py>, data: &[u8]) -> PyResult<Bound<'py, PyAny>> {
    let Some(group) = py.detach(|| read(data)) else {
        return Ok(py.None().into_bound(py));
    };
    Ok(PyTuple::new(py, columns(py, &group)?)?.into_any())
}
