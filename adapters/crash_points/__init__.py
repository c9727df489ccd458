"""The crash_points port: SIGKILL at a named durable step when a test asks (the fault-injection seam)."""
