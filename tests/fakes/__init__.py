"""Fake quantum sites for tests: real HTTP servers on 127.0.0.1 with scripted faults.

``FakeMqss`` (mqss_server), ``FakeVlq`` (vlq_server: LEXIS UserOrg + HEAppE), ``FakePiastq``
(piastq_server), the shared harness (harness: journal, fault scripts, redirect trap), and pytest
fixtures (fixtures) that a conftest imports: ``from tests.fakes.fixtures import fake_mqss``.
"""

from tests.fakes.harness import JournalEntry, TrapServer
from tests.fakes.mqss_server import FakeMqss, MqssJob
from tests.fakes.piastq_server import FakePiastq, PiastqJob
from tests.fakes.vlq_server import FakeVlq, VlqJob

__all__ = ["FakeMqss", "FakePiastq", "FakeVlq", "JournalEntry", "MqssJob", "PiastqJob", "TrapServer", "VlqJob"]
