from tests.fakes.fixtures import fake_mqss, site_token

__all__ = ["fake_mqss", "site_token"]
