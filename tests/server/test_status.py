"""Errors become gRPC statuses by one table; the caller never sees a traceback."""

from __future__ import annotations

import logging

import grpc
import pytest
from hypothesis import given
from hypothesis import strategies as st
from kassign.assignor.errors import InvalidAssignment, InvalidRequest, KassignError, SolverError
from kassign.server.status import (
    EXCERPT_BYTES,
    REASON_BYTES,
    STATUS_TABLE,
    error_text,
    excerpt,
    to_status,
)


def test_invalid_request_names_field_and_member_in_message_and_metadata() -> None:
    status = to_status(
        InvalidRequest("bad uuid 'x'", field="members[0].info.process_id", member="m-1")
    )
    assert status.code is grpc.StatusCode.INVALID_ARGUMENT
    assert "members[0].info.process_id" in status.message and "'m-1'" in status.message
    assert dict(status.metadata) == {
        "kassign-field": "members[0].info.process_id",
        "kassign-member": "m-1",
    }


def test_invalid_request_without_member_has_no_member_metadata() -> None:
    status = to_status(InvalidRequest("no members", field="members"))
    assert dict(status.metadata) == {"kassign-field": "members"}


def test_metadata_values_are_escaped_to_printable_ascii() -> None:
    status = to_status(InvalidRequest("x", field="members", member="z\u00fcrich\nnode"))
    value = dict(status.metadata)["kassign-member"]
    assert value.isascii() and value.isprintable()
    assert "\\xfc" in value and "\\n" in value


@pytest.mark.parametrize(
    "error",
    [
        InvalidAssignment("ACTIVE_TASK_UNASSIGNED", "task 0_1 has no owner"),
        SolverError("INFEASIBLE"),
    ],
)
def test_server_side_kassign_errors_are_internal_with_their_reason_and_a_request_id(
    error: KassignError, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR, logger="kassign.server.status"):
        status = to_status(error)
    assert status.code is grpc.StatusCode.INTERNAL
    request_id = dict(status.metadata)["kassign-request-id"]
    assert str(error) in status.message and request_id in status.message
    assert any(request_id in r.getMessage() for r in caplog.records)


def test_unexpected_error_is_internal_without_details_and_logged_with_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    try:
        {}["secret-key"]
    except KeyError as exc:
        with caplog.at_level(logging.ERROR, logger="kassign.server.status"):
            status = to_status(exc)
    assert status.code is grpc.StatusCode.INTERNAL
    assert "secret-key" not in status.message and "Traceback" not in status.message
    request_id = dict(status.metadata)["kassign-request-id"]
    record = next(r for r in caplog.records if request_id in r.getMessage())
    assert record.exc_info is not None


def test_a_subclass_takes_its_nearest_mapped_base() -> None:
    class OddRequest(InvalidRequest):
        pass

    class NewKassignError(KassignError):
        pass

    assert to_status(OddRequest("x", field="f")).code is grpc.StatusCode.INVALID_ARGUMENT
    assert to_status(NewKassignError("y")).code is grpc.StatusCode.INTERNAL


def test_every_library_error_has_a_row() -> None:
    assert set(STATUS_TABLE) >= {InvalidRequest, InvalidAssignment, SolverError, KassignError}


def test_a_group_kafka_cannot_assign_is_a_failed_precondition_with_its_reason(
    caplog: pytest.LogCaptureFixture,
) -> None:
    error = InvalidAssignment("KAFKA_NULL_POINTER", "t0-0's previous owner 'x' cannot take part")
    with caplog.at_level(logging.ERROR, logger="kassign.server.status"):
        status = to_status(error)
    assert status.code is grpc.StatusCode.FAILED_PRECONDITION
    assert status.message == str(error)
    assert dict(status.metadata) == {"kassign-reason": "KAFKA_NULL_POINTER"}
    assert not caplog.records  # the caller's group, not a server fault: nothing to log here


@given(st.text(max_size=EXCERPT_BYTES // 4))
def test_an_excerpt_of_text_that_fits_is_the_text(text: str) -> None:
    assert excerpt(text) == text


@given(st.text(min_size=1), st.integers(min_value=8, max_value=1024))
def test_an_excerpt_is_bounded_and_keeps_the_head_and_the_tail(text: str, limit: int) -> None:
    size = len(text.encode())
    short = excerpt(text, limit)
    if size <= limit:
        assert short == text
        return
    head, marker, tail = short.partition(f"…({size} bytes)…")
    assert marker
    assert text.startswith(head) and text.endswith(tail)
    assert len(head.encode()) + len(tail.encode()) <= limit


@given(
    st.text(max_size=60),
    st.text(max_size=60),
    st.one_of(st.none(), st.text(max_size=60)),
)
def test_a_short_invalid_request_reads_as_the_library_wrote_it(
    reason: str, field: str, member: str | None
) -> None:
    error = InvalidRequest(reason, field=field, member=member)
    assert error_text(error) == str(error) == to_status(error).message


def test_long_parts_of_an_invalid_request_become_excerpts_in_message_and_metadata() -> None:
    member, reason = "m" * 20_000 + "-tail", "not a UUID: " + "x" * 100_000
    status = to_status(InvalidRequest(reason, field="members[0].process_id", member=member))
    assert len(status.message.encode()) <= 2 * (EXCERPT_BYTES + REASON_BYTES)
    assert "(20005 bytes)" in status.message and "(100012 bytes)" in status.message
    assert (
        status.message.startswith("member 'mmm")
        and "members[0].process_id: not a UUID" in status.message
    )
    metadata = dict(status.metadata)
    assert metadata["kassign-member"].endswith("-tail") and len(metadata["kassign-member"]) < 400
