"""The native mode's folder (docs/architecture.md, "Modes")."""
