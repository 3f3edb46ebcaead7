"""The sweep mode's folder (docs/architecture.md, "Modes")."""
