"""Forwarding a command to the host that owns a job's record (seed 000, "How forwarding stays safe").

Pure protocol: the token the arguments travel in, the frames the output travels in, what ssh's own
log proves about a failed session, and the verdict (completed, never ran, may have run).
"""
