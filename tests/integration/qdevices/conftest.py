from tests.fakes.fixtures import fake_mqss, fake_piastq, fake_vlq, site_token

__all__ = ["fake_mqss", "fake_piastq", "fake_vlq", "site_token"]
