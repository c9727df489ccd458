"""The escalation_delivery port: escalations passed to the user's configured command."""
