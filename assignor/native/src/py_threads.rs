//! Kafka Streams' thread distribution (`threads.rs`) as a Python function: the group's
//! assignment and clients read with the GIL into rows of the caller's sorted task ids, spread
//! without it, and every consumer's `MemberAssignment` made of those ids' own objects.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString, PyTuple, PyType};
use pyo3::{ffi, intern};

use crate::py_streams::picked_tuple;
use crate::py_streams_wire::Reader;
use crate::threads::{self, Client, Had, Input, STATEFUL, STATELESS};

/// A consumer as read: its id's order (`order_key`), its id and the consumer.
type Consumer<'py> = (Vec<u8>, Bound<'py, PyString>, Bound<'py, PyAny>);

/// A client's consumers: each distinct member id once (of two equal, the later), in member-id
/// order.
fn consumers<'py>(py: Python<'py>, client: &Bound<'py, PyAny>) -> PyResult<Vec<Consumer<'py>>> {
    let mut read: Vec<Consumer<'py>> = Vec::new();
    for consumer in client.getattr(intern!(py, "consumers"))?.try_iter()? {
        let consumer = consumer?;
        let id = consumer
            .getattr(intern!(py, "member_id"))?
            .cast_into::<PyString>()?;
        read.push((order_key(&id)?, id, consumer));
    }
    read.sort_by(|a, b| a.0.cmp(&b.0)); // stable: of equal ids the later stays last
    let mut out: Vec<Consumer<'py>> = Vec::with_capacity(read.len());
    for consumer in read {
        if out.last().is_some_and(|last| last.0 == consumer.0) {
            out.pop();
        }
        out.push(consumer);
    }
    Ok(out)
}

/// A member id as bytes that sort as Python sorts the strings (code points): UTF-8, lone
/// surrogates written as UTF-8 writes any code point.
fn order_key(id: &Bound<'_, PyString>) -> PyResult<Vec<u8>> {
    match id.to_str() {
        Ok(s) => Ok(s.as_bytes().to_vec()),
        Err(_) => Ok(id
            .call_method1(intern!(id.py(), "encode"), ("utf-8", "surrogatepass"))?
            .cast_into::<PyBytes>()?
            .as_bytes()
            .to_vec()),
    }
}

/// What one call reads: the task ids' rows and kinds, and the group's columns.
struct Reading<'a, 'py> {
    reader: Reader,
    kinds: &'a [u8],
    tasks: Vec<u32>,
    had: Vec<Had>,
    /// Stateful tasks had before, their lags not read yet: (consumer, row, task).
    pending: Vec<(u32, u32, Bound<'py, PyAny>)>,
}

impl<'py> Reading<'_, 'py> {
    /// A list's tasks appended to `tasks`; `false` if the ids lack one.
    fn list(&mut self, tasks: &Bound<'py, PyAny>) -> PyResult<bool> {
        for task in tasks.try_iter()? {
            match self.reader.find(task?.as_borrowed())?.1 {
                Some(row) => self.tasks.push(row),
                None => return Ok(false),
            }
        }
        Ok(true)
    }

    /// What consumer `j` had: its previous actives (stateless ones by task, stateful ones by
    /// lag) and the tasks it has state for (stateful ones by lag); tasks of the topology only.
    fn history(&mut self, py: Python<'py>, j: u32, consumer: &Bound<'py, PyAny>) -> PyResult<()> {
        let names = [
            intern!(py, "previous_active"),
            intern!(py, "previous_stateful"),
        ];
        for (n, name) in names.into_iter().enumerate() {
            for task in consumer.getattr(name)?.try_iter()? {
                let task = task?;
                let Some(row) = self.reader.find(task.as_borrowed())?.1 else {
                    continue;
                };
                match self.kinds[row as usize] {
                    STATEFUL => self.pending.push((j, row, task)),
                    STATELESS if n == 0 => self.had.push(Had {
                        consumer: j,
                        row,
                        lag: None,
                    }),
                    _ => {}
                }
            }
        }
        Ok(())
    }

    /// The pending tasks' lags from the client's `task_lags`: `local` (what `local_lags` gives)
    /// when it is a dict holding the task, else the mapping's `get`; a task without a lag is
    /// not kept from before.
    fn lags(
        &mut self,
        py: Python<'py>,
        lags: &Bound<'py, PyAny>,
        local: &Bound<'py, PyAny>,
    ) -> PyResult<()> {
        let local = local.cast::<PyDict>().ok();
        for (j, row, task) in self.pending.drain(..) {
            let lag = match local.map(|d| d.get_item(&task)).transpose()?.flatten() {
                Some(lag) => Some(lag),
                None => {
                    Some(lags.call_method1(intern!(py, "get"), (&task,))?).filter(|l| !l.is_none())
                }
            };
            if let Some(lag) = lag {
                let lag: i64 = lag.extract().map_err(|_| {
                    PyValueError::new_err(format!("task_lags: lag {lag} of {task} is not an int64"))
                })?;
                self.had.push(Had {
                    consumer: j,
                    row,
                    lag: Some(lag),
                });
            }
        }
        Ok(())
    }
}

/// `state`'s consumers' tasks after `assignment`; see `kassign.assignor.streams.threads`.
/// `ids` are the tasks, sorted and distinct, `kinds` a byte each (0 stateless, 1 stateful, 2 a
/// task the topology lacks); `assignments` the `KafkaStreamsAssignment`s, `clients` the
/// `KafkaStreamsState`s by process id (the model's fields are read by name), `local_lags`
/// `kassign.assignor.streams.lags.local_lags`. Returns every `MemberAssignment` (made as a
/// frozen dataclass is unpickled: `object.__new__`, then its fields set) sorted by member id,
/// or `None` when a listed task is not among `ids`.
#[pyfunction]
#[pyo3(signature = (ids, kinds, assignments, clients, member_type, local_lags))]
pub(crate) fn thread_distribution<'py>(
    py: Python<'py>,
    ids: &Bound<'py, PyTuple>,
    kinds: &[u8],
    assignments: &Bound<'py, PyAny>,
    clients: &Bound<'py, PyAny>,
    member_type: &Bound<'py, PyType>,
    local_lags: &Bound<'py, PyAny>,
) -> PyResult<Option<Bound<'py, PyTuple>>> {
    if kinds.len() != ids.len() {
        return Err(PyValueError::new_err(
            "thread_distribution: a kind per task id",
        ));
    }
    let mut reading = Reading {
        reader: Reader::default(),
        kinds,
        tasks: Vec::new(),
        had: Vec::new(),
        pending: Vec::new(),
    };
    reading.reader.table(ids)?;
    let clients = clients.cast::<PyDict>()?;
    let mut columns: Vec<Client> = Vec::new();
    // per member: its id's order, its id and its client's process id
    let mut members: Vec<(Vec<u8>, Bound<'py, PyString>, Bound<'py, PyAny>)> = Vec::new();
    for given in assignments.try_iter()? {
        let given = given?;
        let Some(client) = clients.get_item(given.getattr(intern!(py, "process_id"))?)? else {
            continue; // an unknown client
        };
        let consumers = consumers(py, &client)?;
        if consumers.is_empty() {
            continue;
        }
        let start = reading.tasks.len();
        if !reading.list(&given.getattr(intern!(py, "active"))?)? {
            return Ok(None);
        }
        let middle = reading.tasks.len();
        if !reading.list(&given.getattr(intern!(py, "standby"))?)? {
            return Ok(None);
        }
        let had = reading.had.len();
        if consumers.len() > 1 {
            // a lone consumer gets every task whatever it had: its history is not read
            for (j, (_, _, consumer)) in consumers.iter().enumerate() {
                reading.history(py, j as u32, consumer)?;
            }
            if !reading.pending.is_empty() {
                let lags = client.getattr(intern!(py, "task_lags"))?;
                let local = local_lags.call1((&lags,))?;
                reading.lags(py, &lags, &local)?;
            }
        }
        columns.push(Client {
            consumers: consumers.len(),
            active: start..middle,
            standby: middle..reading.tasks.len(),
            had: had..reading.had.len(),
        });
        let process_id = client.getattr(intern!(py, "process_id"))?;
        for (key, id, _) in consumers {
            members.push((key, id, process_id.clone()));
        }
    }
    let input = Input {
        kinds,
        tasks: reading.tasks,
        had: reading.had,
        clients: columns,
    };
    let out = py.detach(|| threads::distribute(&input));
    let mut order: Vec<usize> = (0..members.len()).collect();
    order.sort_by(|&a, &b| members[a].0.cmp(&members[b].0)); // stable, as Python's sorted
    let new = py.get_type::<PyAny>().getattr(intern!(py, "__new__"))?;
    let mut made = Vec::with_capacity(order.len());
    let mut positions: Vec<usize> = Vec::new();
    for m in order {
        let (_, id, process_id) = &members[m];
        let member = new.call1((member_type,))?;
        let [active, standby] = &out.lists[m];
        let mut tuple = |rows: &[u32]| {
            positions.clear();
            positions.extend(rows.iter().map(|&r| r as usize));
            picked_tuple(py, ids, &positions)
        };
        let active = tuple(&out.rows[active.clone()])?;
        let standby = tuple(&out.rows[standby.clone()])?;
        set(&member, intern!(py, "member_id"), id.as_any())?;
        set(&member, intern!(py, "process_id"), process_id)?;
        set(&member, intern!(py, "active"), active.as_any())?;
        set(&member, intern!(py, "standby"), standby.as_any())?;
        made.push(member);
    }
    Ok(Some(PyTuple::new(py, made)?))
}

/// `object.__setattr__(obj, name, value)`: a frozen dataclass's field set past its
/// `__setattr__`, as its own `__init__` and unpickling set them.
fn set(
    obj: &Bound<'_, PyAny>,
    name: &Bound<'_, PyString>,
    value: &Bound<'_, PyAny>,
) -> PyResult<()> {
    // SAFETY: three live objects; the generic setter takes its own references.
    let rc = unsafe { ffi::PyObject_GenericSetAttr(obj.as_ptr(), name.as_ptr(), value.as_ptr()) };
    if rc != 0 {
        return Err(PyErr::fetch(obj.py()));
    }
    Ok(())
}
