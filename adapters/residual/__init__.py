"""The residual list: orders that may have made an object nobody owns (files and an in-memory fake)."""
