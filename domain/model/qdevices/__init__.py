"""The qdevices domain: orders, records, rules and the redaction filter of live quantum runs."""
