"""The modes, a folder each, and the dispatch (docs/architecture.md, "Modes")."""
