"""The differential tests' shared session fixture: the Kafka oracle, built once per run."""

from __future__ import annotations

import pytest

from tests.differential import kafka_oracle


@pytest.fixture(scope="session")
def kafka_classpath(tmp_path_factory: pytest.TempPathFactory) -> str:
    return kafka_oracle.build(tmp_path_factory.mktemp("differential"))
