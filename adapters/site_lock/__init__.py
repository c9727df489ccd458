"""The qdevices per-site lock, held by the kernel (flock), with display-only health."""
