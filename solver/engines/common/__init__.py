"""Building blocks shared by more than one engine (never an engine itself)."""
