"""Shared fixtures. Real components are started here (or in the tier's conftest) on first use."""
