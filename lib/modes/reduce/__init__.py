"""The reduce mode's folder (docs/architecture.md, "Modes")."""
