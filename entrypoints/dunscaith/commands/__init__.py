"""The dunscaith commands, one module per what the user does; each parses, calls one use case, renders,
and maps its errors to exit codes. Registered lazily by ``lazy_commands`` (the job commands) or by the app."""
