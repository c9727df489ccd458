"""The qdevices run record as JSON lines, with older_decisions.jsonl: readable by any JSON tool."""
