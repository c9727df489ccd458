"""qdevices use cases: send (dry run and live), resume, check, jobs, resolve, unlock."""
