"""The mtr mode's folder (docs/architecture.md, "Modes")."""
