"""The qdevices record as JSON lines, its site lock and older_decisions.jsonl: readable by any JSON tool."""
