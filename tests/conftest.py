"""What every test shares: no hypothesis example has a deadline.

Hypothesis times each example against 200 ms of wall clock by default. On CI's two shared cores
a first example that pays a lazy import or a cold cache fails a correct test that way
(``tests/kafka/test_consumer_user_data.py::test_round_trip``: 792 ms once, 0.1 ms on the retry).
Speed is the benches' to measure (``bench/``) and a hang pytest-timeout's to stop (pyproject's
``timeout``), so the deadline is off everywhere, not test by test.
"""

from hypothesis import settings

settings.register_profile("kassign", deadline=None)
settings.load_profile("kassign")
