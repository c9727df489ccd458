"""Fake quantum sites for tests: real HTTP servers on 127.0.0.1 with scripted faults.

``FakeMqss`` (mqss_server), the shared harness (harness), and pytest fixtures (fixtures) that a
conftest imports: ``from tests.fakes.fixtures import fake_mqss``.
"""

from tests.fakes.harness import JournalEntry, TrapServer
from tests.fakes.mqss_server import FakeMqss, MqssJob

__all__ = ["FakeMqss", "JournalEntry", "MqssJob", "TrapServer"]
