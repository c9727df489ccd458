"""The remote wrapper's domain (seed 001): control files, an instance's state, the answers to terminate."""
