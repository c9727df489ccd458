from tests.fakes.fixtures import fake_mqss, site_token  # noqa: F401
