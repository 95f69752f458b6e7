"""The consumer differential suite's session fixture: Kafka's consumer assignors, built once."""

from __future__ import annotations

import pytest

from tests.differential.consumer import oracle


@pytest.fixture(scope="session")
def consumer_kafka_classpath(tmp_path_factory: pytest.TempPathFactory) -> str:
    return oracle.build(tmp_path_factory.mktemp("differential-consumer"))
