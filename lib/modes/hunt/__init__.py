"""The hunt mode's folder (docs/architecture.md, "Modes")."""
